"""What the fault-injection tests share: `indexer` run as a real process, the check that
it failed in one line, a sample corpus, a build stopped at a stage, and the
file-system tricks (read-only bind mounts, small tmpfs disks; they need root and the
tests that use them skip loudly without it)."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import CORPUS, ROOT


def env(**extra) -> dict:
    out = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    for key in ("INDEXER_DB", "INDEXER_CHROMA_URL", "INDEXER_PAUSE_AT"):
        out.pop(key, None) if key not in extra else None
    return out


def indexer(*args, timeout=300, cwd=None, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "indexer", *map(str, args)], env=env(**extra), capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def one_line_error(done: subprocess.CompletedProcess, code: int = 1) -> str:
    """The command failed with `code` and said why in one line, without a traceback."""
    assert done.returncode == code, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr and len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


def copy_corpus(path: Path, names=None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for md in sorted(CORPUS.glob("*.md")):
        if names is None or md.name in names:
            shutil.copy(md, path / md.name)
    return path


def interruptible() -> None:
    """Popen's preexec_fn for a child a test sends SIGINT: a suite started in the background
    (`pytest &` from a script) inherits SIGINT ignored, and Python then installs no Ctrl-C
    handler, so the child would never see the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def paused(args, point: str, marker: Path, **extra) -> subprocess.Popen:
    """An `indexer` process stopped at a build stage (`BuildOptions.on_stage`, installed
    by tests/pausing.py)."""
    marker.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "tests.pausing", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=interruptible,
                            env=env(INDEXER_PAUSE_AT=point, INDEXER_PAUSE_FILE=str(marker), **extra))
    deadline = time.time() + 120
    while not marker.exists():
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise AssertionError(f"never reached {point}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    return proc


def read_only_view(source: Path, view: Path) -> bool:
    view.mkdir()
    ok = subprocess.run(["mount", "--bind", str(source), str(view)], capture_output=True).returncode == 0
    return ok and subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True).returncode == 0


def small_disk(path: Path, size: str) -> bool:
    """A tmpfs of `size` (e.g. 16m) mounted at `path`."""
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill a disk with one file, then give `leave` bytes back."""
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (1 << 20))
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    if leave:
        os.truncate(filler, max(filler.stat().st_size - leave, 0))
    return filler
