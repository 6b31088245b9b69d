"""One program measured in a process of its own, and the real folders the build's cost is
measured on (issue 53: not only the bundled corpus).

- `run_measured(cmd)`: wall time, CPU time (user + system, the process and its
  threads) and peak RSS of one command. Our machines are shared: CPU seconds move less
  than wall time when other jobs run, so both are reported.
- `english_folder(work, mb)`: the first pages (by name) of the `man-pages` set, Linux's
  system-call pages from Debian's manpages-dev rendered by groff (bench/manual_sets.py:
  pinned, sha256 checked), up to `mb` megabytes: English technical prose nobody here
  wrote.
- `mixed_folder(work)`: a folder as a project holds one: 0.4 MB of those pages, the
  running Python's own standard library sources (json, logging, http, textwrap, argparse,
  shlex, csv, string, dataclasses: 0.65 MB of code), and the bundled Turkish and English
  documents; 1.1 MB in all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.common import BENCH

_MEASURE = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr)\n"
    "print('@@' + json.dumps([time.perf_counter() - t, r.ru_utime + r.ru_stime, r.ru_maxrss]), file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)
STDLIB = ("json", "logging", "http", "textwrap.py", "argparse.py", "shlex.py", "csv.py", "string.py", "dataclasses.py")


@dataclass(kw_only=True)
class Measured:
    """One command's run: seconds of wall and of CPU, peak RSS (KiB), what it printed."""

    wall: float
    cpu: float
    rss: int
    stdout: str
    stderr: str = ""


def run_measured(cmd: list[str]) -> Measured:
    """Run a command in a small parent of its own (a child forked from a large process
    starts its peak-RSS account at the parent's size); RuntimeError when it fails."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True,
                          cwd=BENCH.parent)  # `python -m bench.x` finds the package from there
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr[-2000:]}")
    last = [line for line in proc.stderr.splitlines() if line.startswith("@@")][-1]
    wall, cpu, rss = json.loads(last[2:])
    return Measured(wall=wall, cpu=cpu, rss=int(rss), stdout=proc.stdout, stderr=proc.stderr)


def english_folder(work: Path, mb: float) -> Path | None:
    """The first `mb` megabytes of the man-pages set's pages in `work` (None, saying why,
    where the set cannot be made: it needs apt-get and groff)."""
    from bench.common import SetError
    from bench.public_sets import materialize

    try:
        corpus, _ = materialize("man-pages")
    except (SetError, OSError) as exc:
        print(f"the man-pages set is not available ({exc}): no real folder", file=sys.stderr)
        return None
    out = work / f"man-pages-{mb:g}mb"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    total = 0
    for page in sorted(corpus.iterdir()):
        if total >= mb * 1e6:
            break
        shutil.copy(page, out / page.name)
        total += page.stat().st_size
    return out


def mixed_folder(work: Path) -> Path | None:
    """Pages, code and the bundled documents in one folder (None without the pages)."""
    from bench.common import CORPUS

    pages = english_folder(work, 0.4)
    if pages is None:
        return None
    out = work / "mixed"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(pages, out / "man")
    lib = Path(json.__file__).resolve().parent.parent
    for name in STDLIB:
        source = lib / name
        if source.is_dir():
            shutil.copytree(source, out / "python" / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            (out / "python").mkdir(parents=True, exist_ok=True)
            shutil.copy(source, out / "python" / name)
    for doc in [*CORPUS.glob("*.md"), *(CORPUS / "en").glob("*.md")]:
        target = out / "docs" / doc.relative_to(CORPUS)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(doc, target)
    return out


def megabytes(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
