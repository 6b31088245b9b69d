"""The public API as a type checker sees it: `import indexer` gives every name with its
real type (the package ships py.typed, and the lazy names are imported for type checkers),
and `__all__` is the API."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import indexer

INIT = Path(indexer.__file__)


def _type_checking_imports() -> dict[str, str]:
    """{name: module} of the imports under `if TYPE_CHECKING:` in indexer/__init__.py."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    found = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            found[alias.asname or alias.name] = f"indexer.{node.module}"
    return found


def test_all_is_the_api():
    assert indexer.__all__ == ["__version__", *indexer.API]


def test_a_type_checker_sees_every_api_name_as_the_object_it_loads():
    seen = _type_checking_imports()
    assert sorted(seen) == sorted(indexer.API)
    for name, module in seen.items():
        assert getattr(importlib.import_module(module), name) is getattr(indexer, name), name


def test_the_package_says_it_is_typed():
    assert (INIT.parent / "py.typed").is_file()
    pyproject = (INIT.parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"py.typed"' in pyproject  # shipped as package data (.ci/dist checks the wheel)


def test_a_users_type_checker_checks_calls_into_the_library(tmp_path):
    script = tmp_path / "use.py"
    script.write_text(
        "import indexer\n"
        "hits: list[indexer.Hit] = indexer.search('iade', 'headers', k=3)\n"
        "chunk: indexer.Chunk = hits[0].chunk\n"
        "options = indexer.BuildOptions()\n"
        "try:\n"
        "    reports: list[indexer.BuildReport] = indexer.build(['corpus'], ['headers'], options)\n"
        "except indexer.UsageError as error:\n"
        "    print(error)\n"
        "wrong: int = hits[0].chunk  # the mistake the checker must find\n",
        encoding="utf-8")
    # an editable install is an import hook mypy cannot follow: point it at the source tree,
    # as an installed wheel would (.ci/dist checks the wheel ships py.typed)
    env = {**os.environ, "MYPYPATH": str(INIT.parent.parent)}
    run = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
                          "--cache-dir", str(tmp_path / "cache"), str(script)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "use.py:9:" in errors[0] and "Chunk" in errors[0], run.stdout + run.stderr
