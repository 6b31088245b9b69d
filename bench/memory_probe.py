"""Chunk one file with one strategy, as a build does (chunks streamed in embedding
batches), and print what came out: the
process whose peak RSS `bench/run.py` measures (see common.run_peak_rss). It also prints
its own peak RSS before reading the file (`baseline_kib`: imports, tokenizer tables and
parser warmed on a tiny text), the constant the file's memory is measured above; load and
chunk seconds, wall and CPU; and the loaded document's sections (those under a heading)
and pages.

    python -m bench.memory_probe FILE STRATEGY [--embedder hash|use-m3|...]

`--embedder hash` is a stand-in for semantic's sentence embeddings (a vector from each
text's hash, no model): memory does not depend on what the vectors mean, and embedding
the sentences of a 50 MB file with a real model takes an hour.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import time
from pathlib import Path

import numpy as np


class HashEmbedder:
    """Unit vectors seeded by each text's hash: fast, deterministic, meaningless."""

    name = "hash"
    dimension = 512
    batch_size = 256

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dimension, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("strategy")
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    from indexer.chunkers import parse_strategy
    from indexer.indexing.chunk_stream import EMBED_BATCH
    from indexer.loaders import discover, load_file

    embedder = None
    if parse_strategy(args.strategy).uses_embedder:
        if args.embedder == "hash":
            embedder = HashEmbedder()
        else:
            from indexer.embeddings import get_embedder

            embedder = get_embedder(args.embedder)
    chunker = parse_strategy(args.strategy).create(embedder=embedder)
    # the constant: everything imported and warmed (tokenizer tables, parser) on a tiny text
    from indexer.loaders import make_document

    chunker.chunk(make_document("warm.md", "# Warm\n\nOne sentence. Another one.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    found = discover([args.file], max_file_size=1 << 40)
    [source] = found.files
    t0, c0 = time.perf_counter(), time.process_time()
    doc = load_file(source)
    loaded, loaded_cpu = time.perf_counter() - t0, time.process_time() - c0
    # as a build does: the parents, then the chunks, streamed in embedding batches of
    # EMBED_BATCH (their texts handed on, then dropped), counted for the manifest
    parents = 0
    for _ in chunker.iter_parent_chunks(doc):  # written in batches as they come
        parents += 1
    count = 0
    batch: list[str] = []
    for chunk in chunker.iter_chunks(doc):
        count += 1
        batch.append(chunk.indexed_text)
        if len(batch) >= EMBED_BATCH:
            batch.clear()
    print(json.dumps({"strategy": args.strategy, "baseline_kib": baseline, "chars": len(doc.text), "chunks": count, "parents": parents,
                      "load_s": round(loaded, 2), "chunk_s": round(time.perf_counter() - t0 - loaded, 2),
                      "load_cpu_s": round(loaded_cpu, 2), "chunk_cpu_s": round(time.process_time() - c0 - loaded_cpu, 2),
                      "sections": sum(1 for s in doc.sections if s.level > 0), "pages": len(doc.pages or ())}))


if __name__ == "__main__":
    main()
