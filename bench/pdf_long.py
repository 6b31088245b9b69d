"""A long PDF, as a build reads it: peak RSS and seconds per 1,000 pages of loading and
chunking a 2,000-page text PDF, every strategy in its own process, and the headings found.

    python -m bench.pdf_long               # 2,000 pages, every strategy (~10 minutes on 2 cores)
    python -m bench.pdf_long --pages 200   # a shorter run
    python -m bench.pdf_long --smoke       # 3 pages, headers only (numbers mean nothing)

The PDF is drawn at run time, never committed (tests/pdf_documents.py `manual_pdf`,
reportlab): a running header and a page footer, on each page one bold numbered heading at
the same place and ~3,500 characters of text whose words and numbers change from page to
page. Issue 22's was like it: 1.62 GB and 60 s to load and chunk, and `headers` found none
of its headings. Each row is one process (bench/memory_probe.py): load the file (PDFium and
the layout pass), chunk it, chunks streamed in embedding batches as a build does; `peak RSS`
is that process's; seconds are wall and CPU (the machine is shared: CPU is the steadier);
`sections` are the loaded document's (one a page: every heading found).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.common import machine, run_peak_rss, smoke_option, table

STRATEGIES = ["fixed64", "fixed128", "headers", "blocks", "parent", "semantic", "auto"]
RSS_TARGET_MB = 300


def write_long_pdf(path: Path, pages: int) -> None:
    from tests.pdf_documents import manual_pdf

    manual_pdf(path, pages)


def measure(path: Path, pages: int, strategies: list[str] = STRATEGIES) -> tuple[list[list[object]], dict]:
    """Rows of the table, and the worst peak RSS (MB), the slowest load (CPU s / 1,000
    pages) and the sections found."""
    rows, worst = [], {"rss_mb": 0.0, "load_cpu_per_1000": 0.0, "sections": None}
    for strategy in strategies:
        wall, rss, out = run_peak_rss([sys.executable, "-m", "bench.memory_probe", str(path), strategy])
        r = json.loads(out)
        per_1000 = 1000 / pages
        rows.append([
            strategy, f"{rss / 1024:.0f}", f"{r['baseline_kib'] / 1024:.0f}",
            f"{r['load_s'] * per_1000:.1f}", f"{r['load_cpu_s'] * per_1000:.1f}",
            f"{r['chunk_s'] * per_1000:.1f}", f"{r['chunk_cpu_s'] * per_1000:.1f}",
            f"{r['chunks'] + r['parents']:,}", f"{r['sections']:,}", f"{wall:.0f}",
        ])
        worst["rss_mb"] = max(worst["rss_mb"], rss / 1024)
        worst["load_cpu_per_1000"] = max(worst["load_cpu_per_1000"], r["load_cpu_s"] * per_1000)
        worst["sections"] = r["sections"]
    return rows, worst


HEADERS = ["strategy", "peak RSS MB", "constant MB", "load s/1000 p", "load CPU s/1000 p", "chunk s/1000 p",
           "chunk CPU s/1000 p", "chunks (+parents)", "sections", "process wall s"]


def report(pages: int, work: Path, strategies: list[str] = STRATEGIES) -> tuple[str, dict]:
    """The table as Markdown, with a note, and the worst numbers (for targets)."""
    path = work / f"manual{pages}.pdf"
    t0 = time.perf_counter()
    write_long_pdf(path, pages)
    made = time.perf_counter() - t0
    rows, worst = measure(path, pages, strategies)
    note = (f"\n\nThe {pages:,}-page PDF ({path.stat().st_size / 1e6:.1f} MB, drawn in {made:.0f} s by"
            " tests/pdf_documents.py `manual_pdf`), loaded and chunked in one process per strategy"
            " (bench/memory_probe.py, as a build does); `constant` is that process's peak before it reads the file"
            " (imports, tokenizer); `sections` counts the document's sections: one a page when every heading is"
            " found. semantic embeds with a hash stand-in (memory does not depend on what the vectors mean).")
    return table(HEADERS, rows) + note, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the PDF (default 2,000)")
    parser.add_argument("--strategy", action="append", help="only these strategies (default: every one)")
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.pages, args.strategy = 3, ["headers"]
    print(f"Long PDF, {time.strftime('%Y-%m-%d')}, {machine()}\n")
    with tempfile.TemporaryDirectory(prefix="pdf_long_") as tmp:
        text, worst = report(args.pages, Path(tmp), args.strategy or STRATEGIES)
    print(text)
    print(f"\nworst peak RSS {worst['rss_mb']:.0f} MB (target <= {RSS_TARGET_MB} MB), slowest load"
          f" {worst['load_cpu_per_1000']:.1f} CPU s per 1,000 pages, sections {worst['sections']:,} of {args.pages:,} pages")


if __name__ == "__main__":
    main()
