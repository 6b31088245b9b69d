"""An index that lives for months: incremental cost and disk over rebuilds.

    python -m bench.lifecycle              # ~20k chunks; ~10 minutes on 2 cores
    python -m bench.lifecycle --mb 1       # a quick look
    python -m bench.lifecycle --smoke      # two documents, in seconds (numbers mean nothing)

Through the real pipeline (`indexer.build`): a corpus of unique Turkish text cut into
~20,000 `fixed64` chunks is built cold; then 1, 10 and 100 of its files are edited and
the build measured each time (the cost of an incremental build against the full one);
then the index is rebuilt 10 times, fully and incrementally, and its folder measured
(against the size after the first build).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import SMOKE_DOCS, machine, repeated_markdown, smoke_option, table, write_corpus
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.settings import Settings
from indexer.store.gc import folder_size

STRATEGY = "fixed64"


def edit(folder: Path, files: list[Path], round_: int) -> None:
    for i, path in enumerate(files):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n\n## Güncelleme {round_}.{i}\n\nBu paragraf {round_}. turda eklendi; dosya {i}.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=4.6, help="MB of text (4.6 MB ~ 20k fixed64 chunks)")
    smoke_option(parser)
    args = parser.parse_args()
    edits, rebuilds = ((1,), 1) if args.smoke else ((1, 10, 100), 10)
    first = len(SMOKE_DOCS) if args.smoke else None
    work = Path(tempfile.mkdtemp(prefix="indexer-lifecycle-"))
    try:
        files = repeated_markdown(0.001 if args.smoke else args.mb, unique=True, first=first)
        corpus = write_corpus(work / "corpus", files)
        files = sorted(corpus.rglob("*.md"))
        db = work / "db"
        print(f"lifecycle of a {STRATEGY} index, {time.strftime('%Y-%m-%d')}, {machine()}\n", flush=True)
        t0 = time.perf_counter()
        [first] = build([corpus], [STRATEGY], settings=Settings.load(db=db))
        full_s = time.perf_counter() - t0
        one = folder_size(db)
        rows = [["full build (cold)", len(files), first.chunks, f"{full_s:.1f}", "100%", first.embedded]]
        t0 = time.perf_counter()
        [again] = build([corpus], [STRATEGY], BuildOptions(full=True), settings=Settings.load(db=db))
        warm_s = time.perf_counter() - t0
        rows.append(["full build (vectors from the cache)", len(files), again.chunks, f"{warm_s:.1f}",
                     f"{100 * warm_s / full_s:.0f}%", again.embedded])
        for n in edits:
            edit(corpus, files[:: max(len(files) // n, 1)][:n], n)
            t0 = time.perf_counter()
            [inc] = build([corpus], [STRATEGY], settings=Settings.load(db=db))
            s = time.perf_counter() - t0
            rows.append([f"{n} changed file(s)", n, inc.written, f"{s:.2f}", f"{100 * s / full_s:.1f}%", inc.embedded])
        print(table(["build", "files", "chunks written", "seconds", "of the cold build", "embedded"], rows) + "\n")
        sizes = [["after the first build", f"{one / 2**20:.1f}", "1.00"]]
        for label, full in ((f"{rebuilds} full rebuilds", True),
                            (f"{rebuilds} incremental rebuilds (1 file each)", False)):
            for i in range(rebuilds):
                if not full:
                    edit(corpus, files[i : i + 1], 1000 + i)
                build([corpus], [STRATEGY], BuildOptions(full=full), settings=Settings.load(db=db))
            size = folder_size(db)
            sizes.append([f"after {label}", f"{size / 2**20:.1f}", f"{size / one:.2f}"])
        print(table(["index folder", "MB", "of one build"], sizes))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
