"""Search a stored collection: by embedding, by BM25, or both fused — returning Hits.

An `Index` is a long-lived handle: it re-reads the catalogue at most every `refresh`
seconds (and at once when its collection disappears under it), so a server that never
restarts follows every rebuild. It reads one published version at a time: records of a
build in progress, and records a newer version has superseded, are filtered out by that
version's set of live ids (its BM25 index lists exactly them).

Parent-child collections search their children and return the parents (small-to-big)
in every mode: children are fused at child level first, then mapped to their parent
sections, duplicates dropped keeping the best rank.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

import numpy as np

from ..chunkers.registry import collection_names
from ..embeddings import Embedder, canonical_name, get_embedder
from ..errors import CollectionNotFound, EmbedderMismatch
from ..settings import Settings, settings_for
from ..store import Entry, Store
from .rows import RowStore, open_rows
from ..types import Chunk, Hit
from .bm25 import BM25Index, load_or_rebuild
from .exact import ExactIndex, rank_exact
from .exact import load_or_rebuild as load_exact
from .fusion import adaptive_alpha, calibrated, current, rrf, weighted
from .hits import distinct, in_rank_order, to_parents
from .options import Query, SearchOptions

REFRESH = 2.0  # seconds between catalogue checks of a long-lived handle
SCAN_FROM = 50_000  # a one-shot handle scans the stored vectors of a collection this large
EXACT_UNDER = 20_000  # ...and every handle those of a smaller one: exact, and as fast as HNSW there
DISTINCT_DEPTH = 16  # a text repeated all over: look this many times deeper for k distinct ones, no more



def entry_fusion(store, entry) -> dict:
    """A collection's calibrated fusion (`fusion.calibrated`): stored at build time, or
    worked out from the file manifest for a version built before calibration ({} when
    neither says). What search uses, so what `list`, serve and MCP show."""
    if entry.extra.get("fusion"):
        return current(entry.embedder, entry.extra["fusion"]) or {}
    manifest = store.side.read_manifest(entry)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    lang = entry.extra.get("analyzer", {}).get("lang", "")
    return calibrated(entry.embedder, files, lang) if isinstance(files, dict) else {}

class Index:
    """One live collection, opened for searching (embedder and BM25 loaded on first use)."""

    def __init__(self, store: Store, entry: Entry, embedder: Embedder | None = None, bm25_engine: str | None = None,
                 refresh: float = REFRESH, one_shot: bool = False) -> None:
        self.store = store
        self.entry = entry
        self._embedder = embedder
        self._bm25: BM25Index | None = None
        self._exact: ExactIndex | None = None
        self._rows: RowStore | None | bool = False  # False: not looked for yet
        self._bm25_engine = bm25_engine
        self.one_shot = one_shot
        self._records: dict[str, Chunk] = {}
        self._recent: OrderedDict = OrderedDict()
        self._fusion_for: tuple = (None, {})  # (version, fusion) worked out for a version built without one
        self.refresh = refresh
        self._checked = time.monotonic()
        self._lock = threading.RLock()
        self.repairs: list[str] = []  # what was rebuilt on the way (a damaged BM25 index), for a warning

    @classmethod
    def open(cls, strategy: str, *, settings: Settings | None = None, db=None, chroma_url: str | None = None,
             embedder: str | None = None, ollama_host: str | None = None, bm25_engine: str | None = None,
             store: Store | None = None, refresh: float = REFRESH, one_shot: bool = False) -> Index:
        """`one_shot`: a process that answers a query or two and exits (`indexer query`):
        over a collection of SCAN_FROM chunks or more it scans the stored vectors exactly
        (`retrieval.rows`) rather than wait for Chroma to load its whole HNSW index (seconds at a
        million chunks); a long-lived handle searches the HNSW index. Every handle scans a
        collection under EXACT_UNDER chunks: exact, where HNSW is approximate."""
        settings = settings_for(settings, db=db, chroma_url=chroma_url, ollama_host=ollama_host)
        store = store or Store(settings)
        wanted = canonical_name(embedder, settings) if embedder else None
        entry = store.catalogue.find(collection_names(strategy), wanted)
        model = None
        if embedder:
            model = get_embedder(wanted, settings)
            if model.name != entry.embedder:
                raise EmbedderMismatch(
                    f"collection {strategy!r} was built with {entry.embedder}; query it with --embedder {entry.embedder}"
                )
        return cls(store, entry, model, bm25_engine, refresh, one_shot)

    # -- following rebuilds ----------------------------------------------------------------
    def follow(self, force: bool = False) -> bool:
        """Re-read the catalogue (at most every `refresh` seconds unless forced); switch to
        a newer version if one was published. True when it switched."""
        now = time.monotonic()
        if not force and now - self._checked < self.refresh:
            return False
        self._checked = now
        latest = self.store.catalogue.entry(self.entry.key)
        if latest is None:
            raise CollectionNotFound(f"{self.entry.strategy} ({self.entry.embedder}) was dropped from "
                                     f"{self.store.where}; build it again")
        if (latest.collection, latest.generation, latest.pending) == (
                self.entry.collection, self.entry.generation, self.entry.pending):
            self.entry = latest  # saved search settings may have changed
            return False
        with self._lock:
            self.store.records.reopen()  # an embedded database: see the new version's vectors
            self.entry = latest
            self._bm25, self._exact, self._rows = None, None, False
            self._records.clear()
            self._recent.clear()
        return True

    # -- lazily opened parts ---------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.entry.embedder, self.store.settings)
        return self._embedder

    @property
    def bm25(self) -> BM25Index:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = load_or_rebuild(self.store, self.entry, self._bm25_engine, on_repair=self.repairs.append)
            return self._bm25

    @property
    def rows(self) -> RowStore | None:
        """The version's rows beside the index (None where this machine has none)."""
        with self._lock:
            if self._rows is False:
                self._rows = open_rows(self.store, self.entry, self.repairs.append)
            return self._rows  # type: ignore[return-value]

    @property
    def exact(self) -> ExactIndex:
        with self._lock:
            if self._exact is None:
                self._exact = load_exact(self.store, self.entry, self.bm25.analyzer)
            return self._exact

    @property
    def live(self) -> BM25Index:
        """The chunks of the version this handle reads (`chunk_id in index.live`, `len`):
        its BM25 index lists exactly them, looked up by binary search (no set of every id)."""
        return self.bm25

    def count(self) -> int:
        return self.bm25.n

    # -- searching ------------------------------------------------------------------------
    @property
    def saved(self) -> dict:
        """The collection's saved search settings (`indexer tune --save`), if any."""
        return self.entry.extra.get("search") or {}

    @property
    def fusion(self) -> dict:
        """The collection's calibrated fusion (`entry_fusion`), worked out once per version."""
        key = (self.entry.collection, self.entry.generation)
        if self._fusion_for[0] != key:
            self._fusion_for = (key, entry_fusion(self.store, self.entry))
        return self._fusion_for[1]

    def options(self, options: SearchOptions | None = None, **kw) -> SearchOptions:
        """`options` (or keyword settings) with every unset value filled from the
        collection's saved settings, then its calibrated fusion, then the defaults; checked."""
        resolved = (options or SearchOptions(**kw)).resolved(self.saved, self.entry.embedder, self.fusion)
        resolved.check()
        return resolved

    def search(self, query: str | Query, options: SearchOptions | None = None, **kw) -> list[Hit]:
        """The top k hits, best first. Every side is searched to a fixed depth (at least
        `candidates`) and ties are broken by document and position, so the top 5 is
        always the prefix of the top 10. Parent-child collections return k distinct
        parents when there are k: more children are taken until there are. A text comes
        back once (`hits.distinct`: its other documents in `same_text`), and scores never
        rise down the list (`hits.in_rank_order`)."""
        return self.lookup(query, options, **kw)[0]

    def lookup(self, query: str | Query, options: SearchOptions | None = None,
               **kw) -> tuple[list[Hit], SearchOptions]:
        """`search`, and the options it resolved (the collection's saved settings, then
        the defaults, filling what `options` left unset). A `Query` was checked where it
        was made; a string (and its options) is checked here."""
        request = query if isinstance(query, Query) else Query.checked(query, options or SearchOptions(**kw))
        self.follow()
        try:
            resolved = self.options(request.options)
            return self._search(request.text, resolved), resolved
        except CollectionNotFound:
            if not self.follow(force=True):  # the version we read was replaced under us
                raise
            resolved = self.options(request.options)
            return self._search(request.text, resolved), resolved

    def _search(self, query: str, options: SearchOptions) -> list[Hit]:
        parent_mode, k = bool(self.entry.parents), options.k
        n = max(k, options.candidates, options.children_k if parent_mode else 0)
        total = max(len(self.live), 1)
        deepest = total if parent_mode else min(total, DISTINCT_DEPTH * n)
        keep = None if parent_mode else k
        while True:
            ranked, why = self._ranked(query, min(n, total), options, keep)
            if parent_mode:
                hits = distinct(to_parents(self._hits(ranked, why), self.fetch_parents))
            else:
                hits = distinct(self._hits(ranked[:k], why))
                if len(hits) < k < len(ranked):  # a text repeated: look past the kth row
                    if keep is not None:
                        keep = None  # ...in full tie order
                        continue
                    hits = distinct(self._hits(ranked, why))
            if len(hits) >= k or n >= deepest or (not parent_mode and len(ranked) < min(n, total)):
                break
            n *= 4  # too few distinct parents or texts among the candidates: look deeper
        if options.mode == "hybrid":
            share = self.fusion_alpha(query, min(n, total), options)
            for hit in hits:
                hit.embedding_share = share
        return hits[:k]

    def _ranked(self, query: str, n: int, options: SearchOptions,
                keep: int | None = None) -> tuple[list[tuple], dict[str, str]]:
        """(id, score, embedding rank, embedding score, bm25 rank, bm25 score[, exact tier,
        own score]), best first (in tie order up to the `keep`th, when only those are kept),
        scores in rank order (`hits.in_rank_order`); and what put each tiered id there."""
        if options.mode == "embedding":
            ranked = [(cid, s, i + 1, s, None, None) for i, (cid, s) in enumerate(self._side("dense", query, n))]
        elif options.mode == "bm25":
            ranked = [(cid, s, None, None, i + 1, s) for i, (cid, s) in enumerate(self._side("sparse", query, n))]
        else:
            ranked = self._fused(query, n, options)
        why: dict[str, str] = {}
        tier = self._tiers(query, ranked, why) if options.mode != "embedding" else {}
        return in_rank_order(self._break_ties(ranked, tier, keep)), why

    def _tiers(self, query: str, ranked: list[tuple], why: dict[str, str]) -> dict[str, int]:
        """The exact-match tier of each candidate (see `exact`), and in `why` what put it
        there; definitions a bare symbol query names, and the first chunks of a file it
        names, join the candidates (at the end) when they are not among them."""
        bm25 = self.bm25

        def holds(terms, ids):
            return bm25.holds(terms, [bm25.position(cid) for cid in ids])

        def doc_of(ids):
            return {cid: c.doc_id for cid, c in self.fetch(ids).items()}

        def first_chunks(doc):
            return [c.id for c in self._first_chunks(doc)]

        extra, tier = rank_exact(query, bm25.analyzer, [r[0] for r in ranked], self.exact, holds, doc_of,
                                 first_chunks, self.live, why)
        ranked.extend((cid, 0.0, None, None, None, None) for cid in extra)
        return tier

    def _first_chunks(self, doc_id: str, n: int = 3) -> list[Chunk]:
        try:
            return self.chunks(doc_id)[:n]
        except CollectionNotFound:
            return []

    def _side(self, side: str, query: str, n: int):
        """One side's candidates (dense: (id, cosine); sparse: (id, BM25 score); coverage:
        the share of the query's IDF mass in BM25's best match), remembered for the last
        few queries: evaluating and tuning search the same question under many settings."""
        key = (side, query, n)
        with self._lock:
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
        with self._lock:
            self._recent[key] = value
            while len(self._recent) > 96:
                self._recent.popitem(last=False)
        return value

    def _break_ties(self, ranked: list[tuple], tier: dict[str, int] | None = None,
                    keep: int | None = None) -> list[tuple]:
        """Higher exact-match tiers first, then the score; equal (tier, score) ordered by
        document, then position (records fetched only for the tied ids), so that the order
        never depends on how deep a side was searched. With `keep`, only the groups of
        equals that reach into the first `keep` places are ordered (a corpus with repeated
        passages ties dozens of candidates below them, whose records would be read for
        nothing). Rows gain their tier as a seventh field."""
        tier = tier or {}

        def grade(r):
            return tier.get(r[0], 0), round(r[1], 9)

        if tier:
            ranked = sorted(ranked, key=lambda r: (-grade(r)[0], -grade(r)[1]))  # stable: ties keep their order
        counts: dict[tuple, int] = {}
        for r in ranked:
            counts[grade(r)] = counts.get(grade(r), 0) + 1
        floor = min(grade(r) for r in ranked[:keep]) if keep and len(ranked) > keep else None
        tied = [r[0] for r in ranked if counts[grade(r)] > 1 and (floor is None or grade(r) >= floor)]
        if tied:
            chunks = self.fetch(tied)

            def key(r):
                c = chunks.get(r[0])
                return (-grade(r)[0], -grade(r)[1], c.doc_id if c else "", c.start if c else 0, r[0])

            ranked = sorted(ranked, key=key)
        return [(*r[:6], tier.get(r[0], 0)) for r in ranked] if tier else ranked

    def _hits(self, ranked: list[tuple], why: dict[str, str]) -> list[Hit]:
        chunks = self.fetch([r[0] for r in ranked])
        present = [r for r in ranked if r[0] in chunks]
        return [Hit(i + 1, r[1], chunks[r[0]], *r[2:6], exact=r[6] if len(r) > 6 else 0,
                    match=why.get(r[0], "") if len(r) > 6 and r[6] else "",
                    search_score=r[7] if len(r) > 7 else None) for i, r in enumerate(present)]

    def query_vector(self, query: str) -> np.ndarray:
        """The query's embedding. A Turkish collection's query typed without Turkish letters
        (`yurtdisina kargo var mi`) is embedded with its letters restored: BM25 folds them
        anyway, the embedding would read different words."""
        text = query
        if self.entry.extra.get("analyzer", {}).get("lang") == "tr":
            from ..text.deasciify import deasciify, looks_turkish_ascii

            if looks_turkish_ascii(query):
                text = deasciify(query)
        vector = self.embedder.embed_query(text)
        if vector.shape[-1] != self.entry.dimension:
            raise EmbedderMismatch(
                f"the embedder returned {vector.shape[-1]}-d vectors but {self.entry.strategy!r} holds "
                f"{self.entry.dimension}-d ones; rebuild it with this embedder"
            )
        return np.asarray(vector, dtype=np.float32)

    def _dense(self, query: str, n: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the n nearest live chunks: Chroma is asked for more
        when records outside this version (a build in progress, superseded ones) crowd them."""
        vector = self.query_vector(query)
        live = self.live
        n = min(n, len(live))
        if self.entry.chunks < EXACT_UNDER or (self.one_shot and self.entry.chunks >= SCAN_FROM):
            rows = self.rows  # HNSW is approximate: near-duplicate chunks can hide the nearest ones from it
            if rows is not None:
                return rows.nearest(vector, n)
        ask = n + len(self.entry.pending_ids) + 8
        while True:
            got = self.store.records.nearest(self.entry, vector, ask)
            out = [(cid, s) for cid, s in got if cid in live]
            if len(out) >= n or len(got) < ask:
                return out[:n]
            ask *= 4

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

    # -- records --------------------------------------------------------------------------
    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id (one round trip for those not seen yet)."""
        with self._lock:
            missing = [i for i in ids if i not in self._records]
        if missing:
            rows = self.rows
            got = rows.records(missing) if rows is not None else {}
            if len(got) < len(missing):
                got.update(self.store.records.get(self.entry, [i for i in missing if i not in got]))
            with self._lock:
                if len(self._records) > 20_000:  # a cache, not a copy of the collection
                    self._records.clear()
                self._records.update(got)
        with self._lock:
            return {i: self._records[i] for i in ids if i in self._records}

    def fetch_parents(self, ids: list[str]) -> dict[str, Chunk]:
        """Parent chunks by id (parent-child collections)."""
        return self.store.records.get(self.entry, ids, parents=True) if self.entry.parents else {}

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """Every live chunk (of one document), in document order."""
        self.follow()
        try:
            out = [chunk for chunk, _ in self.store.records.scan(self.entry, doc_id)]
        except CollectionNotFound:
            if not self.follow(force=True):  # the version we read was replaced under us (a full rebuild)
                raise
            out = [chunk for chunk, _ in self.store.records.scan(self.entry, doc_id)]
        if doc_id and not out and self.follow(force=True):  # ...or emptied while being deleted
            out = [chunk for chunk, _ in self.store.records.scan(self.entry, doc_id)]
        if doc_id and not out:
            raise CollectionNotFound(f"no chunks of {doc_id!r} in {self.entry.strategy}")
        return sorted(out, key=lambda c: (c.doc_id, c.start, c.end))


def search(query: str, strategy: str, mode: str | None = None, k: int = 5, **kw) -> list[Hit]:
    """One-shot search; for many queries open an `Index` once and call `.search`."""
    open_keys = ("settings", "db", "chroma_url", "embedder", "ollama_host", "bm25_engine")
    index = Index.open(strategy, **{key: kw.pop(key) for key in open_keys if key in kw})
    return index.search(query, SearchOptions(mode=mode, k=k, **kw))
