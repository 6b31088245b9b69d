"""What answer-sized context adds to a warm query, at the bundled size and at 100k chunks.

    python -m bench.context_cost                       # the Turkish set (use-m3) and 100k chunks
    python -m bench.context_cost --chunks 100000 --data DIR   # the large collection kept in DIR
    python -m bench.context_cost --no-large            # the bundled set only
    python -m bench.context_cost --smoke               # two documents (numbers mean nothing)

Per collection, in-process: p50 of a hybrid search for the 20 candidates the packer
reads, p50/p95 of what `Index.context(query, 400)` adds to it warm (units, the vectors
of their shortlist from the cache, scoring, packing), and p50 of the two together; then
what it adds to a first query, which embeds its shortlist (the index's embedding cache
removed before each of FIRST queries), p50 (CPU) and p95. Its memory: the peak Python allocation of one packing (tracemalloc), which
depends on the candidates, not on the collection's size. The large collection is `bench.scale`'s corpus (recombined
XQuAD-tr sentences, `fixed64` chunks, the `bench-hash` embedder: the model is not what
is measured; unit vectors come from the embedding cache as with any model).
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from pathlib import Path

from bench.common import CACHE, machine, parse_args, smoke_option, table, xquad_dir, xquad_option

BUDGET = 400
QUERIES = 50
FIRST = 20  # queries measured with none of their units' vectors in the cache
WARM = ("warm up", "kargo ücreti", "what is the default")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(label: str, index, queries: list[str]) -> list:
    from indexer.retrieval import SearchOptions
    from indexer.retrieval.context.answer import CANDIDATES, scored_units

    options = SearchOptions(mode="hybrid", k=CANDIDATES)
    for q in WARM:  # models loaded, side files read (queries of their own: no result is cached)
        index.context(q, BUDGET)
    first, first_cpu = [], []
    for q in queries[:FIRST]:  # each embeds its whole shortlist: the cache is removed before it
        hits = index.search(q, options)
        for path in index.store.cache_dir.glob("embeddings.sqlite*"):
            path.unlink()
        t1, c1 = time.perf_counter(), time.process_time()
        scored_units(index.snapshot(), q, hits).pack(BUDGET)
        first.append(1000 * (time.perf_counter() - t1))
        first_cpu.append(1000 * (time.process_time() - c1))
    search, added, peaks = [], [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = index.search(q, options)
        search.append(1000 * (time.perf_counter() - t0))
        scored_units(index.snapshot(), q, hits).pack(BUDGET)  # its shortlist's vectors into the cache
        t1 = time.perf_counter()
        scored_units(index.snapshot(), q, hits).pack(BUDGET)  # what `Index.context` adds to that search
        added.append(1000 * (time.perf_counter() - t1))
    for q in queries[:10]:  # memory apart: tracemalloc slows what it traces
        hits = index.search(q, options)
        tracemalloc.start()
        scored_units(index.snapshot(), q, hits).pack(BUDGET)
        peaks.append(tracemalloc.get_traced_memory()[1] / 1024)
        tracemalloc.stop()
    total = [s + a for s, a in zip(search, added)]
    return [label, f"{index.entry.chunks:,}", f"{percentile(search, 0.5):.1f}", f"{percentile(total, 0.5):.1f}",
            f"{statistics.median(added):.1f}", f"{percentile(added, 0.95):.1f}",
            f"{statistics.median(first):.1f} ({statistics.median(first_cpu):.1f})", f"{percentile(first, 0.95):.1f}",
            f"{max(peaks):,.0f}"]


def bundled() -> list:
    from bench.public_sets import materialize
    from indexer.evaluation.sets import load_questions
    from indexer.indexing.building import build
    from indexer.retrieval import Index
    from indexer.settings import Settings

    folder, questions = materialize("tr")
    settings = Settings.load(db=CACHE / "lab" / "ctx-tr")
    build([folder], ["auto"], settings=settings)
    queries = [q.question for q in load_questions(questions)][:QUERIES]
    return measure("bundled Turkish, auto, use-m3", Index.open("auto", settings=settings), queries)


def smoke(data: Path) -> list:
    """The two smoke documents with the bench-only embedder: every code path, in seconds."""
    from bench import scale_kit  # noqa: F401  (registers bench-hash)
    from bench.common import smoke_corpus
    from indexer.evaluation.sets import load_questions
    from indexer.indexing.building import build
    from indexer.retrieval import Index
    from indexer.settings import Settings

    corpus = smoke_corpus(data / "smoke")
    settings = Settings.load(db=data / "db-smoke", embedder="bench-hash")
    build([corpus], ["fixed64"], settings=settings)
    queries = [q.question for q in load_questions(corpus / "questions.jsonl")]
    return measure("smoke, fixed64, bench-hash", Index.open("fixed64", settings=settings), queries)


def large(chunks: int, data: Path) -> list:
    from bench import scale_kit
    from indexer.indexing.building import build
    from indexer.retrieval import Index
    from indexer.settings import Settings

    xquad = xquad_dir() / "xquad.tr.json"
    corpus = data / f"corpus-{chunks}"
    if not corpus.exists():
        scale_kit.write_corpus(corpus, chunks, xquad)
    from indexer.indexing.options import BuildOptions

    settings = Settings.load(db=data / f"db-{chunks}", embedder="bench-hash")
    build([corpus], ["fixed64"], BuildOptions(lang="tr"), settings=settings)
    queries = scale_kit.questions(xquad, QUERIES)
    index = Index.open("fixed64", settings=settings)
    return measure(f"{chunks:,} chunks, fixed64, bench-hash", index, queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=CACHE / "context-cost")
    parser.add_argument("--no-bundled", action="store_true")
    parser.add_argument("--no-large", action="store_true", help="the bundled set only")
    xquad_option(parser)
    smoke_option(parser)
    args = parse_args(parser)
    print(f"# What answer-sized context adds to a warm query ({BUDGET} tokens), {machine()}\n")
    if args.smoke:
        rows = [smoke(args.data)]
    else:
        rows = ([] if args.no_bundled else [bundled()]) + ([] if args.no_large else [large(args.chunks, args.data)])
    print(table(["collection", "chunks", "search p50 ms", "search + context p50 ms", "added p50 ms", "added p95 ms",
                 "first: added p50 ms (CPU)", "first: added p95 ms", "packing peak KiB"], rows))


if __name__ == "__main__":
    main()
