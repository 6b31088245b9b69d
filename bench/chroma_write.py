"""What bounds a large build: Chroma's write rate as a collection grows, and what its writes
cost the Python work running beside them.

    python -m bench.chroma_write                 # 60k records, the settings compared below
    python -m bench.chroma_write --records 200000 --only default
    python -m bench.chroma_write --smoke             # blocks of 512, in seconds (numbers mean nothing)

Records like a `fixed64` build's (512-d unit vectors, 40-word documents, small metadata),
added in batches to an embedded collection; per block of 10,240 records, the write rate.
Rows: the collection settings a build uses (batches of 256, Chroma's default HNSW
`sync_threshold` 1000), batches of 2,048, and `sync_threshold` 100,000 (HNSW flushed to
disk less often). Then the GIL: a fixed piece of pure-Python work (the stand-in for
chunking and BM25 analysis) timed alone and while a thread writes — chromadb 1.x's `add`
holds the GIL while it works, so a build's background write thread does not overlap the
chunking it was meant to hide (the ratio is the stall).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import chromadb
import numpy as np

from bench.common import machine, smoke_option, table

BLOCK = 10_240
DIM = 512
SETTINGS = {
    "default": {"batch": 256, "hnsw": {}},
    "batch2048": {"batch": 2048, "hnsw": {}},
    "sync100k": {"batch": 256, "hnsw": {"sync_threshold": 100_000}},
}


def _records(rng: np.random.Generator, start: int, n: int):
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"c{start + i}" for i in range(n)]
    docs = [f"kayıt {start + i} " + "metin parçası " * 20 for i in range(n)]
    metas = [{"doc_id": f"d{(start + i) // 40}", "start": i, "end": i + 300} for i in range(n)]
    return ids, vectors, docs, metas


def write_rates(folder: Path, records: int, batch: int, hnsw: dict, block: int = BLOCK) -> tuple[list[float], float]:
    """Records per second for each block of `block` records, and the total seconds."""
    client = chromadb.PersistentClient(str(folder))
    col = client.create_collection("bench-write", embedding_function=None,
                                   configuration={"hnsw": {"space": "cosine", **hnsw}})
    rng = np.random.default_rng(0)
    rates, t0 = [], time.perf_counter()
    last, done = t0, 0
    while done < records:
        n = min(batch, records - done)
        ids, vectors, docs, metas = _records(rng, done, n)
        col.add(ids=ids, embeddings=vectors, documents=docs, metadatas=metas)
        done += n
        if done % block < batch or done == records:
            now = time.perf_counter()
            rates.append(block / (now - last) if done % block < batch else 0.0)
            last = now
    return [r for r in rates if r], time.perf_counter() - t0


def python_work(n: int = 3_000_000) -> float:
    t0 = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i
    return time.perf_counter() - t0


def gil_stall(folder: Path, block: int = BLOCK, work: int = 3_000_000) -> tuple[float, float]:
    """(seconds of python_work alone, seconds while a thread writes 2 blocks of records)."""
    alone = python_work(work)
    client = chromadb.PersistentClient(str(folder))
    col = client.create_collection("bench-gil", embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
    rng = np.random.default_rng(1)

    def writer() -> None:
        for start in range(0, 2 * block, 256):
            ids, vectors, docs, metas = _records(rng, start, 256)
            col.add(ids=ids, embeddings=vectors, documents=docs, metadatas=metas)

    thread = threading.Thread(target=writer)
    thread.start()
    beside = python_work(work)
    thread.join()
    return alone, beside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=6 * BLOCK)
    parser.add_argument("--only", default=",".join(SETTINGS), help="comma-separated settings: " + ", ".join(SETTINGS))
    smoke_option(parser)
    args = parser.parse_args()
    block, work = (512, 100_000) if args.smoke else (BLOCK, 3_000_000)
    if args.smoke:
        args.records = 2 * block
    rows = []
    with tempfile.TemporaryDirectory(prefix="indexer-chroma-write-") as tmp:
        for name in args.only.split(","):
            setting = SETTINGS[name]
            folder = Path(tmp) / name
            rates, seconds = write_rates(folder, args.records, setting["batch"], setting["hnsw"], block)
            rows.append([name, setting["batch"], setting["hnsw"].get("sync_threshold", 1000),
                         " ".join(f"{r:.0f}" for r in rates), f"{args.records / seconds:.0f}"])
            shutil.rmtree(folder, ignore_errors=True)
            print(f"  {name}: done", file=sys.stderr, flush=True)
        alone, beside = gil_stall(Path(tmp) / "gil", block, work)
    print(f"Chroma {chromadb.__version__} embedded writes, {args.records:,} records of {DIM}-d; {machine()}\n")
    print(table(["setting", "batch", "sync_threshold", f"records/s per block of {block:,}", "records/s overall"], rows))
    print(f"\nPython work beside a writing thread: {alone:.2f} s alone, {beside:.2f} s while Chroma writes "
          f"({beside / alone:.1f}x: `add` holds the GIL)")


if __name__ == "__main__":
    main()
