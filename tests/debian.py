"""Real documents that Debian packages install (manuals, HTML pages, man pages): tests
read them where the package is there and skip, saying which package to install, where it
is not. .ci/run installs every package named here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def installed(package: str, name: str) -> Path:
    """A file that a Debian package installs (its path ends with `name`), or skip."""
    if shutil.which("dpkg") is None:
        pytest.skip("no dpkg: not a Debian system")
    listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    found = [Path(p) for p in listed.stdout.splitlines() if p.endswith(name)]
    if listed.returncode or not found or not found[0].is_file():
        pytest.skip(f"{package} is not installed (apt-get install {package})")
    return found[0]


def man_page_text(name: str) -> str:
    """A man page rendered to plain text as docs/own-folder.md says
    (`man --nh --nj NAME | col -b`), or skip."""
    for tool, package in (("man", "man-db"), ("col", "bsdextrautils")):
        if shutil.which(tool) is None:
            pytest.skip(f"no `{tool}` to render man pages (apt-get install {package})")
    env = {"PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LANG": "C.UTF-8"}
    man = subprocess.run(["man", "--nh", "--nj", name], capture_output=True, env=env)
    if man.returncode or not man.stdout.strip():
        pytest.skip(f"no man page for {name} (apt-get install man-db coreutils, and man pages "
                    "not excluded by dpkg)")
    col = subprocess.run(["col", "-b"], input=man.stdout, capture_output=True, check=True)
    return col.stdout.decode("utf-8")
