"""Search a stored collection: by embedding, by BM25, or both fused — returning Hits.

An `Index` is a long-lived handle: it re-reads the catalogue at most every `refresh`
seconds (and at once when its collection disappears under it), so a server that never
restarts follows every rebuild. Each version it reads is a `Snapshot` (its entry and the
parts opened for it); a query takes the current one once and reads it to the end, so a
rebuild published halfway through a query never mixes two versions. Records of a build in
progress, and records a newer version has superseded, are filtered out by that version's
set of live ids (its BM25 index lists exactly them).

The handle only follows versions and hands out snapshots; the work is elsewhere: the
search's steps in `steps` (run by `searching.run`), each side's candidates in `sides`, the
ranking in `ranking` (pure functions), answer-sized context in `context`, the options in
`options.resolve`.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..embeddings import Embedder, get_embedder
from ..errors import CollectionNotFound
from ..settings import Settings, settings_for
from ..store import Entry, Store
from ..types import Chunk, Hit
from .bm25.index import BM25Index
from .collections import chosen
from .options import Query, ResolvedOptions, SearchOptions
from .searching import run as searching
from .searching.sides import Sides, SidesFactory
from .searching.snapshot import Snapshot

if TYPE_CHECKING:
    from .context.pack import Context

Options = SearchOptions | ResolvedOptions  # a request, or settings already resolved
REFRESH = 2.0  # seconds between catalogue checks of a long-lived handle


class Index:
    """One live collection, opened for searching: it follows the collection's versions
    and hands out a `Snapshot` of the current one (`snapshot()`); each search reads one.
    `sides`: the class that searches each side (`retrieval.searching.sides`: replace it to search
    another way)."""

    def __init__(
        self,
        store: Store,
        entry: Entry,
        embedder: Embedder | None = None,
        bm25_engine: str | None = None,
        refresh: float = REFRESH,
        one_shot: bool = False,
        sides: SidesFactory = Sides,
    ) -> None:
        self.store = store
        self.refresh = refresh
        self.one_shot = one_shot
        self.repairs: list[str] = []  # what was rebuilt on the way (a damaged BM25 index)
        self.chosen_by: str | None = None  # why this collection, when none was named (`chosen`)
        self._embedder = embedder
        self._bm25_engine = bm25_engine
        self._sides = sides
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._current = self._snapshot_of(entry)

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
        Chroma to load its whole HNSW index (`retrieval.searching.sides`)."""
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
        index = cls(
            store, choice.entry, bm25_engine=bm25_engine, refresh=refresh, one_shot=one_shot
        )
        index.chosen_by = choice.why
        return index

    def _snapshot_of(self, entry: Entry) -> Snapshot:
        embedder = self._embedder
        load = (
            (lambda: embedder)
            if embedder is not None
            else functools.partial(get_embedder, entry.embedder, self.store.settings)
        )
        return Snapshot.of(
            self.store,
            entry,
            embedder=load,
            bm25_engine=self._bm25_engine,
            one_shot=self.one_shot,
            repairs=self.repairs,
            sides=self._sides,
        )

    # -- following rebuilds ----------------------------------------------------------------
    @property
    def entry(self) -> Entry:
        """The catalogue entry of the version the handle reads now."""
        return self._current.entry

    def follow(self, force: bool = False) -> bool:
        """Re-read the catalogue (at most every `refresh` seconds unless forced); switch to
        a newer version if one was published. True when it switched."""
        now = time.monotonic()
        if not force and now - self._checked < self.refresh:
            return False
        self._checked = now
        current = self._current
        latest = self.store.catalogue.entry(current.entry.key)
        if latest is None:
            raise CollectionNotFound(
                f"{current.entry.strategy} ({current.entry.embedder}) was dropped from "
                f"{self.store.where}; build it again"
            )
        same = (latest.collection, latest.generation, latest.pending) == (
            current.entry.collection,
            current.entry.generation,
            current.entry.pending,
        )
        if same:  # its saved search settings may have changed
            self._current = current.renamed(latest)
            return False
        with self._lock:
            self.store.records.reopen()  # an embedded database: see the new version's vectors
            self._current = self._snapshot_of(latest)
        return True

    def snapshot(self) -> Snapshot:
        """The current version (after following the catalogue): what one query reads."""
        self.follow()
        return self._current

    # -- what the current version holds ----------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        return self._current.parts.embedder

    @property
    def live(self) -> BM25Index:
        """The chunks of the version this handle reads (`chunk_id in index.live`, `len`):
        its BM25 index lists exactly them, looked up by binary search (no set of every id)."""
        return self._current.parts.bm25

    def count(self) -> int:
        return self._current.parts.bm25.n

    @property
    def saved(self) -> dict[str, Any]:
        """The collection's saved search settings (`indexer tune --save`), if any."""
        return self.entry.extra.get("search") or {}

    def options(self, options: SearchOptions | None = None, **kw: Any) -> ResolvedOptions:
        """`options` (or keyword settings) resolved for this collection (`resolve`: its
        saved settings, then its calibrated fusion, then the defaults; checked)."""
        return self._current.resolve(options or SearchOptions(**kw))

    # -- searching ------------------------------------------------------------------------
    def search(self, query: str | Query, options: Options | None = None, **kw: Any) -> list[Hit]:
        """The top k hits, best first (`retrieval.steps`): the top 5 is always the
        prefix of the top 10, a text comes back once, scores never rise down the list;
        parent-child collections return their parents."""
        return self.lookup(query, options, **kw).hits

    def lookup(self, query: str | Query, options: Options | None = None, **kw: Any) -> Found:
        """`search`, with the options it resolved (the collection's saved settings, then
        the defaults, filling what `options` left unset). A `Query` was checked where it
        was made; a string (and its options) is checked here."""
        request = _request(query, options, kw)
        try:
            return _found(self.snapshot(), request)
        except CollectionNotFound:
            if not self.follow(force=True):  # the version we read was replaced under us
                raise
            return _found(self._current, request)

    def context(
        self, query: str | Query, budget: int, options: Options | None = None, **kw: Any
    ) -> Context:
        """The best spans for `query` in at most `budget` tokens (labels included), cut
        from the candidates of this collection's own search (`retrieval.context`)."""
        from .context.answer import answer_context

        text = query.text if isinstance(query, Query) else query
        given = query.options if isinstance(query, Query) else options
        return answer_context(self.snapshot(), text, budget, given, **kw)

    # -- records --------------------------------------------------------------------------
    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id (one round trip for those not seen yet)."""
        return self._current.parts.fetch(ids)

    def fetch_parents(self, ids: list[str]) -> dict[str, Chunk]:
        """Parent chunks by id (parent-child collections)."""
        return self._current.parts.fetch_parents(ids)

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """Every live chunk (of one document), in document order."""
        snapshot = self.snapshot()
        try:
            out = snapshot.parts.chunks(doc_id)
        except CollectionNotFound:
            if not self.follow(force=True):  # replaced under us (a full rebuild)
                raise
            out = self._current.parts.chunks(doc_id)
        if doc_id and not out and self.follow(force=True):  # ...or emptied while deleted
            out = self._current.parts.chunks(doc_id)
        if doc_id and not out:
            raise CollectionNotFound(f"no chunks of {doc_id!r} in {self.entry.strategy}")
        return out


@dataclass(frozen=True)
class Found:
    """A search's hits and the options it ran with."""

    hits: list[Hit]
    options: ResolvedOptions


def _found(snapshot: Snapshot, request: Query) -> Found:
    options = snapshot.resolve(request.options)
    return Found(searching.search(snapshot, request.text, options), options)


def _request(query: str | Query, options: Options | None, kw: dict[str, Any]) -> Query:
    """A `Query` as it was made, or a string (and its options) checked here."""
    if isinstance(query, Query):
        return query
    if isinstance(options, ResolvedOptions):
        options = options.request()
    return Query.checked(query, options or SearchOptions(**kw))


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
