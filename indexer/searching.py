"""Search a stored collection: by embedding, by BM25, or both fused — returning Hits.

Parent-child collections search their children and return the parents (small-to-big)
in every mode: children are fused at child level first, then mapped to their parent
sections, duplicates dropped keeping the best rank.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .bm25 import BM25Index
from .embeddings import Embedder, canonical_name, get_embedder
from .errors import CollectionNotFound, EmbedderMismatch, UsageError
from .fusion import ADAPTIVE_ALPHA, ADAPTIVE_COVERAGE, adaptive_alpha, adaptive_defaults, rrf, weighted
from .store import Entry, Store, chunk_from_record
from .types import Chunk, Hit

MODES = ("embedding", "bm25", "hybrid")
FUSIONS = ("adaptive", "weighted", "rrf")
MAX_QUERY_CHARS = 20_000


@dataclass
class SearchOptions:
    """How to search. A setting left None is the collection's saved choice (`indexer
    tune --save`), else the library default (`DEFAULTS`)."""

    mode: str | None = None  # embedding | bm25 | hybrid
    k: int = 5
    fusion: str | None = None  # hybrid: adaptive | weighted | rrf
    alpha: float | None = None  # weighted: the embedding side's share
    alpha_range: tuple[float, float] | None = None  # adaptive: embedding share when BM25 covers well / poorly
    coverage_range: tuple[float, float] | None = None  # adaptive: coverage counted as poor / good
    rrf_k: int | None = None  # rrf: the k in 1 / (k + rank)
    weights: tuple[float, float] | None = None  # rrf: (embedding, bm25)
    candidates: int | None = None  # depth each side is searched to
    children_k: int | None = None  # parent-child: children taken before mapping to parents

    SAVED = ("mode", "fusion", "alpha", "alpha_range", "coverage_range", "rrf_k", "weights")

    def resolved(self, saved: dict | None = None, embedder: str = "") -> SearchOptions:
        """Every None filled: from `saved` (a collection's tuned settings), then the
        defaults (the adaptive fusion's ranges depend on the embedder)."""
        alpha_range, coverage_range = adaptive_defaults(embedder)
        defaults = {"alpha_range": alpha_range, "coverage_range": coverage_range}
        values = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and saved and saved.get(f.name) is not None:
                value = saved[f.name]
            if value is None:
                value = defaults.get(f.name, getattr(DEFAULTS, f.name))
            values[f.name] = tuple(value) if isinstance(value, list) else value
        return SearchOptions(**values)

    def settings(self) -> dict[str, Any]:
        """The search settings a collection can save (everything but k and depths)."""
        return {name: getattr(self, name) for name in self.SAVED if getattr(self, name) is not None}

    def describe(self) -> str:
        """`hybrid adaptive 0.1-0.8 by coverage 0.3-0.6`, `hybrid weighted 0.3`, `bm25`...:
        the embedding side's share (adaptive: from BM25 covering the query well to
        poorly, across those coverage bounds), or RRF's k and weights."""
        if self.mode != "hybrid":
            return str(self.mode)
        if self.fusion == "adaptive":
            (a, b), (c, d) = self.alpha_range, self.coverage_range
            return f"hybrid adaptive {a:g}-{b:g} by coverage {c:g}-{d:g}"
        if self.fusion == "weighted":
            return f"hybrid weighted {self.alpha:g}"
        return f"hybrid rrf k={self.rrf_k} {self.weights[0]:g}:{self.weights[1]:g}"

    def check(self) -> None:
        """Raise a usage error naming the first bad setting; unset (None) settings pass."""
        def bad(value, test) -> bool:
            return value is not None and not test(value)

        if bad(self.mode, lambda v: v in MODES):
            raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if bad(self.fusion, lambda v: v in FUSIONS):
            raise UsageError(f"--fusion must be one of {', '.join(FUSIONS)}, not {self.fusion!r}")
        for name, value in (("-k", self.k), ("--candidates", self.candidates), ("--children-k", self.children_k),
                            ("--rrf-k", self.rrf_k)):
            if bad(value, lambda v: v >= 1):
                raise UsageError(f"{name} must be at least 1, not {value}")
        if bad(self.alpha, lambda v: 0.0 <= v <= 1.0):
            raise UsageError(f"--alpha must be between 0 and 1, not {self.alpha}")
        if bad(self.weights, lambda w: len(w) == 2 and min(w) >= 0 and sum(w) > 0):
            raise UsageError(f"--rrf-weights must be two non-negative numbers, not both zero: {self.weights}")
        for name, pair in (("alpha range", self.alpha_range), ("coverage range", self.coverage_range)):
            if bad(pair, lambda p: len(p) == 2 and 0.0 <= p[0] <= p[1] <= 1.0):
                raise UsageError(f"the {name} must be two numbers 0 <= a <= b <= 1, not {pair}")


DEFAULTS = SearchOptions(
    mode="hybrid", k=5, fusion="adaptive", alpha=0.5, alpha_range=ADAPTIVE_ALPHA, coverage_range=ADAPTIVE_COVERAGE,
    rrf_k=10, weights=(1.0, 1.0), candidates=50, children_k=30,
)


def check_query(query: str) -> str:
    """The query, stripped; a usage error when it is empty or absurdly long."""
    query = query.strip()
    if not query:
        raise UsageError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(
            f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} (ask a question, not a document)"
        )
    return query


class Index:
    """One live collection, opened for searching (embedder and BM25 loaded on first use)."""

    def __init__(self, store: Store, entry: Entry, embedder: Embedder | None = None, bm25_engine: str | None = None):
        self.store = store
        self.entry = entry
        self._embedder = embedder
        self._bm25: BM25Index | None = None
        self._bm25_engine = bm25_engine
        self._collection = None
        self._parents = None
        self._records: dict[str, Chunk] = {}
        self._recent: OrderedDict = OrderedDict()

    @classmethod
    def open(
        cls,
        strategy: str,
        db: str | os.PathLike | None = None,
        chroma_url: str | None = None,
        embedder: str | None = None,
        ollama_host: str | None = None,
        bm25_engine: str | None = None,
        store: Store | None = None,
    ) -> Index:
        store = store or Store(db, chroma_url)
        wanted = canonical_name(embedder) if embedder else None
        entry = store.find(strategy, wanted)
        model = None
        if embedder:
            model = get_embedder(wanted, ollama_host)
            if model.name != entry.embedder:
                raise EmbedderMismatch(
                    f"collection {strategy!r} was built with {entry.embedder}; query it with --embedder {entry.embedder}"
                )
        index = cls(store, entry, model, bm25_engine)
        index._ollama_host = ollama_host
        return index

    # -- lazily opened parts ---------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.entry.embedder, getattr(self, "_ollama_host", None))
        return self._embedder

    @property
    def collection(self):
        if self._collection is None:
            self._collection = self.store.collection(self.entry.collection)
        return self._collection

    @property
    def bm25(self) -> BM25Index:
        if self._bm25 is None:
            folder = self.store.side_dir(self.entry.collection) / "bm25"
            if not (folder / "params.json").exists():
                self._rebuild_bm25(folder)
            self._bm25 = BM25Index.load(folder, self._bm25_engine)
        return self._bm25

    def _rebuild_bm25(self, folder) -> None:
        """Side files are local: a client of a Chroma server that did not build the
        collection rebuilds its BM25 index from the stored `indexed_text` once."""
        from .analyzer import Analyzer
        from .bm25 import BM25Builder

        extra = self.entry.extra
        builder = BM25Builder(Analyzer.from_dict(extra.get("analyzer", {})))
        offset, step = 0, 2000
        while True:
            got = self.collection.get(include=["metadatas"], limit=step, offset=offset)
            if not got["ids"]:
                break
            builder.add(got["ids"], [m.get("indexed_text", "") for m in got["metadatas"]])
            offset += len(got["ids"])
        builder.finish(extra.get("bm25_engine", "rank-bm25")).save(folder)

    def count(self) -> int:
        return self.store._call(self.collection.count)

    # -- searching ------------------------------------------------------------------------
    @property
    def saved(self) -> dict:
        """The collection's saved search settings (`indexer tune --save`), if any."""
        return self.entry.extra.get("search") or {}

    def options(self, options: SearchOptions | None = None, **kw) -> SearchOptions:
        """`options` (or keyword settings) with every unset value filled from the
        collection's saved settings, then the defaults; checked."""
        resolved = (options or SearchOptions(**kw)).resolved(self.saved, self.entry.embedder)
        resolved.check()
        return resolved

    def search(self, query: str, options: SearchOptions | None = None, **kw) -> list[Hit]:
        """The top k hits, best first. Every side is searched to a fixed depth (at least
        `candidates`) and ties are broken by document and position, so the top 5 is
        always the prefix of the top 10. Parent-child collections return k distinct
        parents when there are k: more children are taken until there are."""
        options = self.options(options, **kw)
        query = check_query(query)
        parent_mode = bool(self.entry.parents)
        n = max(options.k, options.candidates, options.children_k if parent_mode else 0)
        total = max(self.entry.chunks, 1)
        while True:
            ranked = self._ranked(query, min(n, total), options)
            hits = self._hits(ranked if parent_mode else ranked[: options.k])
            if parent_mode:
                hits = self._to_parents(hits)
            if not parent_mode or len(hits) >= options.k or n >= total:
                break
            n *= 4  # too few distinct parents among the children: look deeper
        if options.mode == "hybrid":
            share = self.fusion_alpha(query, min(n, total), options)
            for hit in hits:
                hit.embedding_share = share
        return hits[: options.k]

    def _ranked(self, query: str, n: int, options: SearchOptions) -> list[tuple]:
        """(id, score, embedding rank, embedding score, bm25 rank, bm25 score), best first."""
        if options.mode == "embedding":
            ranked = [(cid, s, i + 1, s, None, None) for i, (cid, s) in enumerate(self._side("dense", query, n))]
        elif options.mode == "bm25":
            ranked = [(cid, s, None, None, i + 1, s) for i, (cid, s) in enumerate(self._side("sparse", query, n))]
        else:
            ranked = self._fused(query, n, options)
        return self._break_ties(ranked)

    def _side(self, side: str, query: str, n: int):
        """One side's candidates (dense: (id, cosine); sparse: (id, BM25 score); coverage:
        the share of the query's IDF mass in BM25's best match), remembered for the last
        few queries: evaluating and tuning search the same question under many settings."""
        key = (side, query, n)
        if key in self._recent:
            self._recent.move_to_end(key)
            return self._recent[key]
        if side == "dense":
            value = self._dense(query, n)
        elif side == "sparse":
            value = self._sparse(query, n)
        else:
            top = self._side("sparse", query, n)
            value = self.bm25.coverage(query, [self.bm25.position(top[0][0])])[0] if top else 0.0
        self._recent[key] = value
        while len(self._recent) > 96:
            self._recent.popitem(last=False)
        return value

    def _break_ties(self, ranked: list[tuple]) -> list[tuple]:
        """Equal scores ordered by document, then position (records fetched only for the
        tied ids), so that the order never depends on how deep a side was searched."""
        counts: dict[float, int] = {}
        for r in ranked:
            key = round(r[1], 9)
            counts[key] = counts.get(key, 0) + 1
        tied = [r[0] for r in ranked if counts[round(r[1], 9)] > 1]
        if not tied:
            return ranked
        chunks = self.fetch(tied)

        def key(r):
            c = chunks.get(r[0])
            return (-round(r[1], 9), c.doc_id if c else "", c.start if c else 0, r[0])

        return sorted(ranked, key=key)

    def _hits(self, ranked: list[tuple]) -> list[Hit]:
        chunks = self.fetch([r[0] for r in ranked])
        present = [r for r in ranked if r[0] in chunks]
        return [Hit(i + 1, score, chunks[cid], er, es, br, bs) for i, (cid, score, er, es, br, bs) in enumerate(present)]

    def _dense(self, query: str, n: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the n nearest chunks."""
        vector = self.embedder.embed_query(query)
        if vector.shape[-1] != self.entry.dimension:
            raise EmbedderMismatch(
                f"the embedder returned {vector.shape[-1]}-d vectors but {self.entry.strategy!r} holds "
                f"{self.entry.dimension}-d ones; rebuild it with this embedder"
            )
        n = min(n, max(self.entry.chunks, 1))
        got = self.store._call(
            lambda: self.collection.query(
                query_embeddings=[np.asarray(vector, dtype=np.float32)], n_results=n, include=["distances"],
            )
        )
        return [(cid, 1.0 - float(dist)) for cid, dist in zip(got["ids"][0], got["distances"][0])]

    def _sparse(self, query: str, n: int) -> list[tuple[str, float]]:
        index = self.bm25
        return [(index.ids[pos], score) for pos, score in index.search(query, n)]

    def fusion_alpha(self, query: str, n: int, options: SearchOptions) -> float | None:
        """The embedding side's share in a weighted or adaptive fusion of this query."""
        if options.fusion == "weighted":
            return options.alpha
        if options.fusion == "adaptive":
            return adaptive_alpha(self._side("coverage", query, n), options.alpha_range, options.coverage_range)
        return None

    def _fused(self, query: str, n: int, options: SearchOptions) -> list[tuple]:
        """Both candidate lists fused: (id, score, embedding rank, embedding score,
        bm25 rank, bm25 score), best first."""
        dense = self._side("dense", query, n)
        sparse = self._side("sparse", query, n)
        e_rank = {cid: (i + 1, s) for i, (cid, s) in enumerate(dense)}
        b_rank = {cid: (i + 1, s) for i, (cid, s) in enumerate(sparse)}
        if options.fusion == "rrf":
            fused = rrf([[cid for cid, _ in dense], [cid for cid, _ in sparse]], options.rrf_k, options.weights)
        else:
            fused = weighted(dict(dense), dict(sparse), self.fusion_alpha(query, n, options))
        return [(cid, score, *e_rank.get(cid, (None, None)), *b_rank.get(cid, (None, None))) for cid, score in fused]

    def _to_parents(self, hits: list[Hit]) -> list[Hit]:
        """Map child hits to their parents, keeping each parent's best rank."""
        order: list[str] = []
        best: dict[str, Hit] = {}
        for hit in hits:
            pid = hit.chunk.parent_id
            if not pid:
                continue
            if pid not in best:
                order.append(pid)
                best[pid] = hit
                hit.child_ids = [hit.chunk.id]
            else:
                best[pid].child_ids.append(hit.chunk.id)
        parents = self.fetch_parents(order)
        out = []
        for pid in order:
            if pid in parents:
                child = best[pid]
                out.append(
                    Hit(len(out) + 1, child.score, parents[pid], child.embedding_rank, child.embedding_score,
                        child.bm25_rank, child.bm25_score, child.child_ids)
                )
        return out

    # -- fetching records -----------------------------------------------------------------
    def _remember(self, ids, documents, metadatas) -> None:
        if len(self._records) > 20_000:  # a cache, not a copy of the collection
            self._records.clear()
        for cid, doc, meta in zip(ids, documents, metadatas):
            self._records[cid] = chunk_from_record(cid, doc, meta)

    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id (one round trip for those not seen yet)."""
        missing = [i for i in ids if i not in self._records]
        if missing:
            got = self.store._call(lambda: self.collection.get(ids=missing, include=["documents", "metadatas"]))
            self._remember(got["ids"], got["documents"], got["metadatas"])
        return {i: self._records[i] for i in ids if i in self._records}

    def fetch_parents(self, ids: list[str]) -> dict[str, Chunk]:
        if not ids:
            return {}
        if self._parents is None:
            self._parents = self.store.collection(self.entry.parents)
        got = self.store._call(lambda: self._parents.get(ids=ids, include=["documents", "metadatas"]))
        return {cid: chunk_from_record(cid, doc, meta) for cid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"])}

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """Every stored chunk (of one document), in document order."""
        where = {"doc_id": doc_id} if doc_id else None
        out: list[Chunk] = []
        offset, step = 0, 2000
        while True:
            got = self.store._call(
                lambda: self.collection.get(where=where, include=["documents", "metadatas"], limit=step, offset=offset)
            )
            if not got["ids"]:
                break
            out.extend(chunk_from_record(i, d, m) for i, d, m in zip(got["ids"], got["documents"], got["metadatas"]))
            offset += len(got["ids"])
        if doc_id and not out:
            raise CollectionNotFound(f"no chunks of {doc_id!r} in {self.entry.strategy}")
        return sorted(out, key=lambda c: (c.doc_id, c.start, c.end))


def search(query: str, strategy: str, mode: str | None = None, k: int = 5, **kw) -> list[Hit]:
    """One-shot search; for many queries open an `Index` once and call `.search`."""
    open_keys = ("db", "chroma_url", "embedder", "ollama_host", "bm25_engine")
    index = Index.open(strategy, **{key: kw.pop(key) for key in open_keys if key in kw})
    return index.search(query, SearchOptions(mode=mode, k=k, **kw))
