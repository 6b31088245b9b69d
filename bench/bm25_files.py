"""What opening a BM25 side folder costs, and its checksums: an index over N chunks of the
bundled Turkish corpus (its fixed64 chunks repeated, each copy with a token of its own so
the vocabulary grows as a real one does) is saved, then loaded as a query loads it (files
mapped; each file's identity compared with the one recorded when it was last hashed), then
loaded with every file hashed (what `indexer build` does, and a load after a file changed),
and the sha256 of its files is timed alone. Prints a Markdown table.

    python -m bench.bm25_files                 # 10k and 100k chunks
    python -m bench.bm25_files --sizes 1000
    python -m bench.bm25_files --smoke          # 200 chunks (numbers mean nothing)
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

from bench.common import CORPUS, machine, median_time, smoke_option, table


def corpus_texts() -> list[str]:
    from indexer.chunkers import parse_strategy
    from indexer.loaders import discover, load_file

    chunker = parse_strategy("fixed64").create()
    return [c.indexed_text for src in discover([CORPUS]).files if src.path.suffix == ".md"
            for c in chunker.chunk(load_file(src))]


def sha256_files(folder: Path) -> None:
    for path in folder.iterdir():
        if path.name != "params.json":
            hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    from indexer.retrieval.bm25.index import BM25Builder, BM25Index
    from indexer.text.analyzer import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sizes = "200"
    texts = corpus_texts()
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        builder = BM25Builder(Analyzer.for_language("tr"))
        for start in range(0, n, 1000):
            batch = range(start, min(start + 1000, n))
            builder.add([f"{i:024x}" for i in batch], [f"{texts[i % len(texts)]} kopya{i // len(texts)}" for i in batch])
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "bm25"
            index = builder.finish()
            t0 = time.perf_counter()
            index.save(folder)
            save = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in folder.iterdir())
            load = median_time(lambda: BM25Index.load(folder, expected=n), 5)
            full = median_time(lambda: BM25Index.load(folder, expected=n, check_all=True), 5)
            sums = median_time(lambda: sha256_files(folder), 5)
            rows.append([n, f"{size / 2**20:.1f}", f"{save:.3f}", f"{load:.4f}", f"{full:.3f}", f"{sums:.3f}"])
    print(f"#### BM25 side files: load with checksums ({machine()})\n")
    print(table(["chunks", "files MB", "save s", "load s (mapped)", "load s (every file hashed)", "sha256 alone s"],
                rows))
    print("\n`load s (mapped)` is `BM25Index.load` as a query does it: files mapped, their identities compared "
          "with the record of the last check; `every file hashed` is the check a build makes (and a load after a "
          "file changed); `sha256 alone` hashes the same files from the page cache.")


if __name__ == "__main__":
    main()
