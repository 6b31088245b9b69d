"""Search a stored collection: by embedding, by BM25, or both fused — returning Hits.

An `Index` is a long-lived handle: it re-reads the catalogue at most every `refresh`
seconds (and at once when its collection disappears under it), so a server that never
restarts follows every rebuild. It reads one published version at a time: records of a
build in progress, and records a newer version has superseded, are filtered out by that
version's set of live ids (its BM25 index lists exactly them).

The handle follows and opens; the work is elsewhere: each side's candidates in `sides`,
the ranking in `ranking` (pure functions), one search's steps in `searching`, the
options in `options.resolve`.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ..embeddings import Embedder, get_embedder
from ..errors import CollectionNotFound
from ..settings import Settings, settings_for
from ..store import Entry, Store
from ..types import Chunk, Hit
from . import searching
from .bm25 import BM25Index
from .bm25_repair import load_or_rebuild
from .cache import RecordCache
from .collections import chosen, entry_fusion
from .exact import ExactIndex
from .exact import load_or_rebuild as load_exact
from .options import Query, SearchOptions, resolve
from .rows import RowStore, open_rows
from .context_score import TermMemo
from .sides import Sides

if TYPE_CHECKING:
    from .context_pack import Context

REFRESH = 2.0  # seconds between catalogue checks of a long-lived handle


class Index:
    """One live collection, opened for searching (embedder and BM25 loaded on first use).
    `sides` fetches each side's candidates (`retrieval.sides`: replace it to search
    another way)."""

    def __init__(
        self,
        store: Store,
        entry: Entry,
        embedder: Embedder | None = None,
        bm25_engine: str | None = None,
        refresh: float = REFRESH,
        one_shot: bool = False,
    ) -> None:
        self.store = store
        self.entry = entry
        self._embedder = embedder
        self._bm25: BM25Index | None = None
        self._exact: ExactIndex | None = None
        self._unit_terms: TermMemo | None = None
        self._rows: RowStore | None | bool = False  # False: not looked for yet
        self._bm25_engine = bm25_engine
        self.one_shot = one_shot
        self._records = RecordCache()
        self._fusion_for: tuple[tuple[str, int] | None, dict[str, Any]] = (
            None,
            {},
        )  # (version, its fusion)
        self.refresh = refresh
        self._checked = time.monotonic()
        self._lock = threading.RLock()
        self.repairs: list[str] = []  # what was rebuilt on the way (a damaged BM25 index)
        self.chosen_by: str | None = None  # why this collection, when none was named (`chosen`)
        self.sides = Sides(self)

    @classmethod
    def open(
        cls,
        strategy: str | None = None,
        *,
        settings: Settings | None = None,
        built_with: str | None = None,
        bm25_engine: str | None = None,
        refresh: float = REFRESH,
        one_shot: bool = False,
    ) -> Index:
        """The collection of `strategy` in the index `settings` name (None: the
        environment's), chosen by `collections.choose` (with no strategy: the only one
        built, else the one the last evaluation ranked best, else `auto`, else by a fixed
        order of kinds); `built_with`: the one built with that embedder.
        `one_shot`: a process that answers a query or two and exits (`indexer query`):
        over a large collection it scans the stored vectors exactly rather than wait for
        Chroma to load its whole HNSW index (`retrieval.sides`)."""
        return cls.in_store(
            Store(settings_for(settings)),
            strategy,
            built_with=built_with,
            bm25_engine=bm25_engine,
            refresh=refresh,
            one_shot=one_shot,
        )

    @classmethod
    def in_store(
        cls,
        store: Store,
        strategy: str | None = None,
        *,
        built_with: str | None = None,
        bm25_engine: str | None = None,
        refresh: float = REFRESH,
        one_shot: bool = False,
    ) -> Index:
        """`open`, in a store already open (a server's, an evaluation's). `chosen_by` says
        why it reads this collection when none was named and several are built."""
        choice = chosen(store, strategy, built_with)
        index = cls(store, choice.entry, None, bm25_engine, refresh, one_shot)
        index.chosen_by = choice.why
        return index

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
            raise CollectionNotFound(
                f"{self.entry.strategy} ({self.entry.embedder}) was dropped from "
                f"{self.store.where}; build it again"
            )
        if (latest.collection, latest.generation, latest.pending) == (
            self.entry.collection,
            self.entry.generation,
            self.entry.pending,
        ):
            self.entry = latest  # saved search settings may have changed
            return False
        with self._lock:
            self.store.records.reopen()  # an embedded database: see the new version's vectors
            self.entry = latest
            self._bm25, self._exact, self._rows = None, None, False
            self._records.clear()
            self.sides.clear()
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
                self._bm25 = load_or_rebuild(
                    self.store, self.entry, self._bm25_engine, on_repair=self.repairs.append
                )
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
    def saved(self) -> dict[str, Any]:
        """The collection's saved search settings (`indexer tune --save`), if any."""
        return self.entry.extra.get("search") or {}

    @property
    def fusion(self) -> dict[str, Any]:
        """The collection's calibrated fusion (`entry_fusion`), worked out once per version."""
        key = (self.entry.collection, self.entry.generation)
        if self._fusion_for[0] != key:
            self._fusion_for = (key, entry_fusion(self.store, self.entry))
        return self._fusion_for[1]

    def options(self, options: SearchOptions | None = None, **kw: Any) -> SearchOptions:
        """`options` (or keyword settings) resolved for this collection (`resolve`: its
        saved settings, then its calibrated fusion, then the defaults; checked)."""
        return resolve(options or SearchOptions(**kw), self.saved, self.entry.embedder, self.fusion)

    def search(
        self, query: str | Query, options: SearchOptions | None = None, **kw: Any
    ) -> list[Hit]:
        """The top k hits, best first (`retrieval.searching`): the top 5 is always the
        prefix of the top 10, a text comes back once, scores never rise down the list;
        parent-child collections return their parents."""
        return self.lookup(query, options, **kw)[0]

    def lookup(
        self, query: str | Query, options: SearchOptions | None = None, **kw: Any
    ) -> tuple[list[Hit], SearchOptions]:
        """`search`, and the options it resolved (the collection's saved settings, then
        the defaults, filling what `options` left unset). A `Query` was checked where it
        was made; a string (and its options) is checked here."""
        request = (
            query
            if isinstance(query, Query)
            else Query.checked(query, options or SearchOptions(**kw))
        )
        self.follow()
        try:
            resolved = self.options(request.options)
            return searching.search(self, request.text, resolved), resolved
        except CollectionNotFound:
            if not self.follow(force=True):  # the version we read was replaced under us
                raise
            resolved = self.options(request.options)
            return searching.search(self, request.text, resolved), resolved

    @property
    def unit_terms(self) -> TermMemo:
        """The BM25 side's analyzer, remembering the unit texts it analysed (answer-sized
        context), renewed with the analyzer."""
        analyze = self.bm25.analyzer
        if self._unit_terms is None or self._unit_terms.analyze is not analyze:
            self._unit_terms = TermMemo(analyze)
        return self._unit_terms

    def context(
        self, query: str | Query, budget: int, options: SearchOptions | None = None, **kw: Any
    ) -> Context:
        """The best spans for `query` in at most `budget` tokens (labels included), cut
        from the candidates of this collection's own search (`retrieval.context`)."""
        from .context import answer_context

        text = query.text if isinstance(query, Query) else query
        given = query.options if isinstance(query, Query) else options
        return answer_context(self, text, budget, given, **kw)

    # -- records --------------------------------------------------------------------------
    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id (one round trip for those not seen yet)."""
        return self._records.get(ids, self._read)

    def _read(self, missing: list[str]) -> dict[str, Chunk]:
        rows = self.rows
        got = rows.records(missing) if rows is not None else {}
        if len(got) < len(missing):
            got.update(self.store.records.get(self.entry, [i for i in missing if i not in got]))
        return got

    def fetch_parents(self, ids: list[str]) -> dict[str, Chunk]:
        """Parent chunks by id (parent-child collections)."""
        return self.store.records.get(self.entry, ids, parents=True) if self.entry.parents else {}

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """Every live chunk (of one document), in document order."""
        self.follow()
        try:
            out = self._scan(doc_id)
        except CollectionNotFound:
            if not self.follow(
                force=True
            ):  # the version we read was replaced under us (a full rebuild)
                raise
            out = self._scan(doc_id)
        if doc_id and not out and self.follow(force=True):  # ...or emptied while being deleted
            out = self._scan(doc_id)
        if doc_id and not out:
            raise CollectionNotFound(f"no chunks of {doc_id!r} in {self.entry.strategy}")
        return sorted(out, key=lambda c: (c.doc_id, c.start, c.end))

    def _scan(self, doc_id: str | None) -> list[Chunk]:
        """The live chunks (of one document) as the store scans them."""
        return [chunk for chunk, _ in self.store.records.scan(self.entry, doc_id)]


def search(
    query: str,
    strategy: str | None = None,
    mode: str | None = None,
    k: int = 5,
    *,
    options: SearchOptions | None = None,
    settings: Settings | None = None,
    built_with: str | None = None,
) -> list[Hit]:
    """One-shot search: `Index.open`, then `Index.search` with `mode` and `k` (or, when
    given, every option of `options` instead); for many queries open an `Index` once."""
    index = Index.open(strategy, settings=settings, built_with=built_with)
    return index.search(query, options or SearchOptions(mode=mode, k=k))
