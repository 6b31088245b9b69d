"""How fast each format beside Markdown, code and PDF loads: Word, PowerPoint, Excel, CSV,
EPUB and Jupyter notebooks, read into their Markdown text and sections as a build reads
them (`indexer.loaders.load_file`, through the registry).

    python -m bench.formats            # the real folder, and a big file of each format
    python -m bench.formats --smoke    # a small big file, one pass (numbers mean nothing)

Two rows a format: the real public documents of tests/data/formats (small files: what a
file costs beyond its size), and one big file written at run time with the format's own
writer library (python-docx, python-pptx, openpyxl) or by hand (CSV, notebook JSON, EPUB
zip): 2,000 paragraphs and a 200-row table; 200 slides with a table each; 20,000 rows of a
sheet; 20,000 CSV records in Shift-JIS; 500 notebook cells; a 40-chapter book. Times are the
median of `--repeat` loads after one warm-up (the library's import is in the warm-up, and
its import time is its own column: a fresh interpreter importing it)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import machine, smoke_option, table
from bench.formats_files import BIG_WRITERS

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "tests" / "data" / "formats"
IMPORTS = {"docx": "docx", "pptx": "pptx", "xlsx": "openpyxl", "csv": "charset_normalizer"}
HEADERS = ["format", "input", "files", "file MB", "text KB", "load s", "MB/s", "text KB/s",
           "import s"]


def import_seconds(module: str) -> float:
    """A fresh interpreter's time to import a library (what the first file of a format
    pays once)."""
    if not module:
        return 0.0
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def load_seconds(files: list, repeat: int) -> tuple[float, int]:
    """Median seconds to load every file once, and the characters extracted."""
    from indexer.loaders import load_file

    chars = sum(len(load_file(f).text) for f in files)  # the warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for f in files:
            load_file(f)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), chars


def row(fmt: str, label: str, files: list, repeat: int, imported: float) -> list[object]:
    seconds, chars = load_seconds(files, repeat)
    mb = sum(f.size for f in files) / 1e6
    return [fmt, label, len(files), f"{mb:.2f}", f"{chars / 1e3:.0f}", f"{seconds:.3f}",
            f"{mb / seconds:.2f}", f"{chars / 1e3 / seconds:.0f}", f"{imported:.2f}"]


def measure(work: Path, scale: float, repeat: int) -> list[list[object]]:
    from indexer.loaders import discover

    real = discover([FOLDER]).files
    rows = []
    for fmt, write in BIG_WRITERS.items():
        imported = import_seconds(IMPORTS.get(fmt, ""))
        mine = [f for f in real if f.format == fmt]
        rows.append(row(fmt, "real files", mine, repeat, imported))
        big = write(work, scale)
        rows.append(row(fmt, big.name, discover([big]).files, repeat, imported))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed loads of each input (default 5)")
    smoke_option(parser)
    args = parser.parse_args()
    scale, repeat = (0.02, 1) if args.smoke else (1.0, args.repeat)
    print(f"Loading speed by format, {time.strftime('%Y-%m-%d')}, {machine()}\n")
    with tempfile.TemporaryDirectory(prefix="formats_") as tmp:
        rows = measure(Path(tmp), scale, repeat)
    print(table(HEADERS, rows))
    print("\n`text KB`: the Markdown text extracted; `load s`: the median of the timed loads of"
          " all of a row's files; `import s`: the format's library imported by a fresh"
          " interpreter (paid once per build).")


if __name__ == "__main__":
    main()
