"""README and the documentation are part of the product: README's first two commands are
what CI runs, every shell block of the getting-started and own-folder pages runs, and the
references cover what the code exports."""

import re
import shutil

import pytest

from tests.conftest import CORPUS, ROOT
from tests.doc_pages import argv, commands, reader_env, run_page, shell_blocks

DOCS = ROOT / "docs"
RUN_PAGES = ["getting-started.md", "own-folder.md", "cli.md"]  # every shell block of these runs in a test


def readme_commands():
    return shell_blocks(ROOT / "README.md")


def test_readme_starts_with_two_commands_and_ci_runs_the_second():
    commands = readme_commands()
    assert len(commands) >= 2
    install_and_run, test = commands[0], commands[1]
    assert "pip install -e ." in install_and_run and "indexer " in install_and_run and "corpus" in install_and_run
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test in ci.splitlines()


def test_every_command_has_help_and_appears_in_readme():
    from click.testing import CliRunner

    from indexer.cli import cli

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, command in cli.commands.items():
        assert command.help, name
        assert f"indexer {name}" in readme, f"README does not show `indexer {name}`"
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0


def test_the_licence_is_shipped_and_its_notices_name_real_files():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    for name in project["license-files"]:
        assert (ROOT / name).is_file(), name
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n") and "Copyright (c) 2026 indexer contributors" in licence
    notice = (ROOT / "indexer" / "data" / "DEASCIIFY-LICENSE.txt").read_text(encoding="utf-8")
    for path in re.findall(r"\b((?:indexer|bench)/[\w/.-]+\.(?:py|gz))\b", notice):
        assert (ROOT / path).is_file(), f"the notice names {path}, which does not exist"


def test_benchmarks_take_their_paths_from_the_repository_or_the_user():
    """No path of one development machine: data folders come from the repository layout,
    an argument or the environment."""
    for script in sorted((ROOT / "bench").rglob("*.py")):
        text = script.read_text(encoding="utf-8")
        found = re.findall(r"""["'(\s](/(?:work|home|Users|root|mnt)/[^\s"')]*)""", text)
        assert not found, f"{script.name}: {found}"


def test_readme_shows_only_commands_that_the_tested_pages_run():
    """README's shell blocks after its first two hold commands of the getting-started and
    own-folder pages (comments aside), which run in a test below."""
    run = {tuple(argv(c)) for name in RUN_PAGES for b in shell_blocks(DOCS / name) for c in commands(b)[0]}
    shown = [c for block in readme_commands()[2:] for c in commands(block)[0]]
    assert shown, "README shows no command for your own folder"
    assert [c for c in shown if tuple(argv(c)) not in run] == []


def test_readme_links_to_files_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme)
    assert "docs/getting-started.md" in targets
    missing = sorted(t for t in targets if not (ROOT / t).is_file())
    assert missing == [], f"README links to files that do not exist: {missing}"


def test_the_api_page_documents_every_public_name():
    """docs/api.md renders (mkdocstrings) each name `indexer/__init__.py` exports, from the
    object it loads, and nothing else."""
    import indexer

    page = (DOCS / "api.md").read_text(encoding="utf-8")
    shown = re.findall(r"^### `indexer\.(\w+)`\n\n::: ([\w.]+)$", page, flags=re.M)
    assert len(shown) == page.count("\n::: ")
    assert sorted(shown) == sorted((name, f"{m}.{a}") for name, (m, a) in indexer.API.items())


def test_the_cli_page_is_generated_from_the_click_group():
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    directive = re.search(r"^::: mkdocs-click\n((?:    :.+\n)+)", page, flags=re.M)
    assert directive, "docs/cli.md has no mkdocs-click block"
    options = dict(re.findall(r":(\w+): (\S+)", directive.group(1)))
    assert (options["module"], options["command"], options["prog_name"]) == ("indexer.cli", "cli", "indexer")


def test_install_steps_are_taken_out_and_the_rest_runs():
    block = ('python3 -m venv .venv && . .venv/bin/activate && pip install -e . && indexer build corpus\n'
             'indexer eval q.jsonl -s a \\\n    --by-tag  # a comment\n')
    assert commands(block) == (["indexer build corpus", "indexer eval q.jsonl -s a      --by-tag  # a comment"],
                               ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -e ."])


@pytest.mark.slow
@pytest.mark.parametrize("name", RUN_PAGES)
def test_every_shell_block_of_the_page_runs(name, tmp_path):
    """As a reader runs them, in a fresh folder: getting-started on a copy of the bundled
    corpus, own-folder with the bundled English documents as ~/notes."""
    page = DOCS / name
    assert shell_blocks(page), f"{name} has no shell block"
    work, home = tmp_path / "work", tmp_path / "home"
    shutil.copytree(CORPUS, work / "corpus")
    notes = home / "notes"
    notes.mkdir(parents=True)
    for path in (CORPUS / "en").glob("*.md"):
        shutil.copy(path, notes / path.name)
    ran = run_page(page, work, reader_env(home))
    assert any(c.startswith("indexer build") for c in ran)
    assert any(c.startswith("indexer eval") for c in ran)


def test_install_hints_name_our_distribution_not_the_unrelated_indexer_package():
    """`indexer` on PyPI is someone else's package: a hint to `pip install 'indexer[fast]'`
    installs it. Every extra is named through `indexer-rag` (or `.` in a checkout)."""
    wrong = re.compile(r"pip install ['\"]?indexer\[")
    found = [f"{path.relative_to(ROOT)}:{n}"
             for path in sorted((ROOT / "indexer").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if wrong.search(line)]
    assert found == []
