"""README is part of the product: its first two commands must be what CI runs."""

import re

from tests.conftest import ROOT


def readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)


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
