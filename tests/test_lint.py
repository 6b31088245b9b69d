"""The linter README's test command runs: `ruff check` (pyproject.toml's [tool.ruff]: a file
that does not parse, an undefined name, an unused import or variable) finds nothing in the
package, the benchmarks or the tests."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing_in_the_package_the_benchmarks_or_the_tests():
    done = ruff("indexer", "bench", "tests")
    assert done.returncode == 0, f"ruff check indexer bench tests:\n{done.stdout}{done.stderr}"


def test_ruff_catches_an_undefined_name(tmp_path):
    """The check above can fail: a name used without its import (bench/build_probe.py's
    `Store`, issue 35) is an error under this project's configuration."""
    probe = tmp_path / "probe.py"
    probe.write_text("def main():\n    return Store\n", encoding="utf-8")
    done = ruff("--config", str(ROOT / "pyproject.toml"), str(probe))
    assert done.returncode == 1 and "F821" in done.stdout, done.stdout + done.stderr
