"""The query section of bench/run.py: latency of every search mode and BM25 engine, warm
and in-process, on synthetic collections of growing size, and what writing them costs."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from bench.common import CACHE, CORPUS, Size, folder_size, percentile, table


def synthetic_collection(db: Path, n: int, vectors: str, engine_files: bool = True) -> None:
    """A collection of n synthetic chunks (corpus sentences recombined), written through
    the store's staging API and published, so `Index.open` serves it like a built one.
    `vectors` is "real" (embedded with the default model, through the embedding cache) or
    "random" (unit vectors: latency does not depend on what the vectors mean)."""
    import numpy as np

    from indexer import __version__
    from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
    from indexer.retrieval.bm25.index import SIDE, BM25Builder
    from indexer.retrieval.rows.writer import SIDE as ROWS
    from indexer.retrieval.rows.writer import RowsWriter
    from indexer.settings import Settings
    from indexer.store import Entry, Store
    from indexer.text.analyzer import Analyzer
    from indexer.text.sentences import split_sentences
    from indexer.types import Chunk

    sentences = []
    for text in (p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md"))):
        sentences += [text[s:e] for s, e in split_sentences(text) if len(text[s:e]) > 20]
    rng = np.random.default_rng(7)
    store = Store(Settings.load(db=db), create=True)
    strategy = f"synthetic{n}"
    model = get_embedder()
    embedder = CachedEmbedder(model, EmbeddingCache(CACHE / "embeddings.sqlite"))
    staging = store.builds.begin(strategy, model.name, {"strategy": strategy}, None, full=True)
    analyzer = Analyzer.for_language("tr")
    bm25 = BM25Builder(analyzer)
    # the rows a build keeps beside the collection (a narrowed search reads them)
    rows = RowsWriter.for_build(None, staging.side_path(ROWS), model.dimension, True)
    step = 2000
    t_write = t_embed = 0.0
    for start in range(0, n, step):
        chunks = []
        for i in range(start, min(n, start + step)):
            picks = rng.choice(len(sentences), size=3, replace=False)
            text = f"Belge {i % 997}. " + " ".join(sentences[j] for j in picks)
            chunks.append(Chunk(id=f"s{i:07d}", doc_id=f"doc{i // 20:05d}.md", text=text, start=0, end=len(text),
                                start_line=1, end_line=1, kind="synthetic", header=f"Sentetik › Bölüm {i % 53}",
                                n_tokens=len(text) // 4, strategy=strategy))
        t0 = time.perf_counter()
        if vectors == "real":
            emb = embedder.embed_documents([c.indexed_text for c in chunks])
        else:
            emb = rng.standard_normal((len(chunks), model.dimension)).astype(np.float32)
            emb /= np.linalg.norm(emb, axis=1, keepdims=True)
        t_embed += time.perf_counter() - t0
        t0 = time.perf_counter()
        for k in range(0, len(chunks), 1000):
            metas = staging.add(chunks[k : k + 1000], emb[k : k + 1000])
            rows.add_chunks(chunks[k : k + 1000], metas, emb[k : k + 1000])
        t_write += time.perf_counter() - t0
        bm25.add([c.id for c in chunks], [c.indexed_text for c in chunks])
    t0 = time.perf_counter()
    staging.close()
    rows.finish()
    t_write += time.perf_counter() - t0
    t0 = time.perf_counter()
    staging.save_side(SIDE, bm25.finish("bm25s" if engine_files else "rank-bm25").save)
    t_bm25 = time.perf_counter() - t0
    files = {f"doc{j:05d}.md": {"hash": ""} for j in range((n + 19) // 20)}
    staging.write_manifest({"format": 1, "settings": {}, "files": files, "skipped": {}})
    staging.publish(Entry(strategy=strategy, embedder=model.name, collection=staging.name, dimension=model.dimension,
                          kind="synthetic", params={}, tokenizer="o200k_base", version=__version__,
                          built_at=time.strftime("%Y-%m-%dT%H:%M:%S"), source=[], files=n // 20, chunks=n,
                          extra={"analyzer": analyzer.to_dict(), "bm25_engine": "bm25s", "write_seconds": t_write,
                                 "bm25_seconds": t_bm25, "embed_seconds": t_embed}))


PATHS = ("doc0*.md",)  # a fifth of a synthetic collection's documents (doc00000-doc04999)


def _narrowed(index, queries: list[str], rows: list, n: int, vectors: str) -> float:
    """Hybrid p50 (ms) of the queries narrowed to PATHS, added to `rows`."""
    from indexer.retrieval import SearchOptions

    opts = SearchOptions(mode="hybrid", k=5, paths=PATHS)
    for q in queries[:5]:
        index.search(q, opts)
    times = []
    for q in queries:
        t1 = time.perf_counter()
        hits = index.search(q, opts)
        times.append((time.perf_counter() - t1) * 1000)
        assert all(h.chunk.doc_id.startswith("doc0") for h in hits)
    p50, p95 = percentile(times, 50), percentile(times, 95)
    rows.append([n, vectors, "hybrid --path doc0*.md", "postings", f"{p50:.1f}", f"{p95:.1f}", "-"])
    return p50


def bench_query(report, size: Size, work: Path) -> None:
    from indexer.embeddings import get_embedder
    from indexer.retrieval import Index, SearchOptions
    from indexer.retrieval.bm25.index import SIDE, BM25Index
    from indexer.settings import Settings
    from indexer.store import Store

    sizes = size.pick([(100, "real"), (300, "random")], [(1000, "real"), (10000, "random")],
                      [(1000, "real"), (10000, "real"), (100000, "random")])
    questions = [json.loads(line)["question"] for line in (CORPUS / "questions.jsonl").read_text().splitlines()]
    n_queries = size.pick(5, 40, 200)
    queries = (questions * (n_queries // len(questions) + 1))[:n_queries]
    get_embedder().embed_query("warm up")
    lat_rows, scale_rows = [], []
    for n, vectors in sizes:
        db = work / f"query-db-{n}"
        shutil.rmtree(db, ignore_errors=True)
        synthetic_collection(db, n, vectors)
        store = Store(Settings.load(db=db))
        entry = store.catalogue.find(f"synthetic{n}")
        side = store.side.path(entry, SIDE)
        for engine in ("rank-bm25", "bm25s", "postings"):
            t0 = time.perf_counter()
            BM25Index.load(side, engine).scores("warm up kargo")
            load_s = time.perf_counter() - t0
            index = Index(store, entry, bm25_engine=engine)
            index.snapshot().parts.bm25  # loaded here, not inside the first timed query
            for mode in ("embedding", "bm25", "hybrid"):
                if mode == "embedding" and engine == "bm25s":
                    continue
                opts = SearchOptions(mode=mode, k=5)
                for q in queries[:5]:
                    index.search(q, opts)
                times = []
                for q in queries:
                    t1 = time.perf_counter()
                    index.search(q, opts)
                    times.append((time.perf_counter() - t1) * 1000)
                p50, p95 = percentile(times, 50), percentile(times, 95)
                lat_rows.append([n, vectors, mode, engine if mode != "embedding" else "-", f"{p50:.1f}",
                                 f"{p95:.1f}", f"{load_s:.2f}" if mode != "embedding" else "-"])
                if n == sizes[-1][0] and mode == "hybrid" and engine == "bm25s":
                    report.target(f"hybrid p50 at {n:,} chunks, bm25s", "<= 20 ms", f"{p50:.1f} ms", p50 <= 20)
                if mode == "hybrid" and engine == "postings":
                    narrowed = _narrowed(index, queries, lat_rows, n, vectors)
                    if n == sizes[-1][0]:
                        report.target(f"hybrid p50 narrowed by --path at {n:,} chunks", "<= 1.2x unfiltered",
                                      f"{narrowed / p50:.2f}x ({narrowed:.1f} ms)", narrowed <= 1.2 * p50)
        extra = entry.extra
        scale_rows.append([n, vectors, f"{extra['write_seconds']:.1f}", f"{extra['bm25_seconds']:.2f}",
                           f"{folder_size(db / 'chroma') / 1e6:.0f}", f"{folder_size(side) / 1e6:.1f}"])
    report.section(
        f"Query latency, warm, in-process ({n_queries} questions from the Turkish set; ms)",
        table(["chunks", "vectors", "mode", "bm25 engine", "p50 ms", "p95 ms", "bm25 load s"], lat_rows),
    )
    report.section(
        "Scaling: writing and indexing synthetic collections",
        table(["chunks", "vectors", "Chroma write s", "BM25 build s (bm25s)", "Chroma MB", "BM25 MB"], scale_rows)
        + "\n\nVectors are real embeddings where it says `real` (cached in bench/.cache) and random"
          " unit vectors otherwise: HNSW latency does not depend on what the vectors mean.",
    )
