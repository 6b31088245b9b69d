"""What the checksums of a BM25 side folder cost: an index over N chunks of the bundled
Turkish corpus (its fixed64 chunks repeated, each copy with a token of its own so the
vocabulary grows as a real one does) is saved, then loaded as a query loads it — every file
read once and checked against the sha256 in params.json — and the sha256 of its files is
timed alone. Prints a Markdown table.

    python bench/bm25_files.py                 # 10k and 100k chunks
    python bench/bm25_files.py --sizes 1000
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CORPUS, machine, median_time, table  # noqa: E402


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
    from indexer.retrieval.bm25 import BM25Builder, BM25Index
    from indexer.text.analyzer import Analyzer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    texts = corpus_texts()
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        builder = BM25Builder(Analyzer.for_language("tr"))
        for start in range(0, n, 1000):
            batch = range(start, min(start + 1000, n))
            builder.add([f"{i:024x}" for i in batch], [f"{texts[i % len(texts)]} kopya{i // len(texts)}" for i in batch])
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "bm25"
            for engine in ("rank-bm25", "bm25s"):
                index = builder.finish(engine)
                t0 = time.perf_counter()
                index.save(folder)
                save = time.perf_counter() - t0
                size = sum(p.stat().st_size for p in folder.iterdir())
                load = median_time(lambda: BM25Index.load(folder, engine, expected=n), 5)
                sums = median_time(lambda: sha256_files(folder), 5)
                rows.append([n, engine, f"{size / 2**20:.1f}", f"{save:.3f}", f"{load:.3f}", f"{sums:.3f}",
                             f"{100 * sums / load:.0f}%"])
                for path in folder.iterdir():
                    path.unlink()
    print(f"#### BM25 side files: load with checksums ({machine()})\n")
    print(table(["chunks", "engine", "files MB", "save s", "load s (checked)", "sha256 alone s", "share of load"],
                rows))
    print("\n`load s` is `BM25Index.load` (every file read once and hashed as it is read; bm25s's arrays hashed "
          "in blocks, then memory-mapped); `sha256 alone` hashes the same files from the page cache.")


if __name__ == "__main__":
    main()
