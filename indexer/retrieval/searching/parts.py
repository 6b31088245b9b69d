"""What one published version of a collection holds, opened for reading: its BM25 index,
its exact-match index, the rows beside it, the embedder, its records. Each part is opened
once, on first use, for that version only (`Snapshot` pairs it with each side's lookups)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ...embeddings import Embedder
from ...errors import CollectionNotFound
from ...store import Entry, Store
from ...types import Chunk
from ..bm25.index import BM25Index
from ..bm25.repair import load_or_rebuild
from ..collections import entry_fusion
from ..context.score import TermMemo
from ..exact.index import ExactIndex
from ..exact.index import load_or_rebuild as load_exact
from ..rows.table import RowStore, open_rows
from .cache import RecordCache
from .scope import Scope, keys_of, mask_of, matching

SCOPES = 32  # narrowed views kept per version (a server's recent --path globs)


class Parts:
    """What one version holds, each part opened once on first use (a lock makes a part
    opened by two threads at once opened once)."""

    def __init__(
        self,
        store: Store,
        entry: Entry,
        *,
        embedder: Callable[[], Embedder],
        bm25_engine: str | None = None,
        repairs: list[str] | None = None,
    ) -> None:
        self.store = store
        self.entry = entry
        self.load_embedder = embedder
        self.bm25_engine = bm25_engine
        self.repairs = repairs if repairs is not None else []
        self.records = RecordCache()
        self._opened: dict[str, Any] = {}
        self._scopes: OrderedDict[tuple[str, ...], Scope] = OrderedDict()
        self._lock = threading.RLock()

    def _once(self, name: str, open_: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._opened:
                self._opened[name] = open_()
            return self._opened[name]

    @property
    def embedder(self) -> Embedder:
        embedder: Embedder = self._once("embedder", self.load_embedder)
        return embedder

    @property
    def bm25(self) -> BM25Index:
        """The version's BM25 index: it lists exactly the version's chunks."""
        bm25: BM25Index = self._once(
            "bm25",
            lambda: load_or_rebuild(
                self.store, self.entry, self.bm25_engine, on_repair=self.repairs.append
            ),
        )
        return bm25

    @property
    def exact(self) -> ExactIndex:
        exact: ExactIndex = self._once(
            "exact", lambda: load_exact(self.store, self.entry, self.bm25.analyzer)
        )
        return exact

    @property
    def rows(self) -> RowStore | None:
        """The version's rows beside the index (None where this machine has none)."""
        rows: RowStore | None = self._once(
            "rows", lambda: open_rows(self.store, self.entry, self.repairs.append)
        )
        return rows

    @property
    def unit_terms(self) -> TermMemo:
        """The BM25 analyzer, remembering the unit texts it analysed (answer-sized
        context)."""
        memo: TermMemo = self._once("unit_terms", lambda: TermMemo(self.bm25.analyzer))
        return memo

    @property
    def fusion(self) -> dict[str, Any]:
        """The collection's calibrated fusion (`entry_fusion`)."""
        fusion: dict[str, Any] = self._once("fusion", lambda: entry_fusion(self.store, self.entry))
        return fusion

    # -- narrowing ------------------------------------------------------------------------
    def documents(self) -> tuple[str, ...]:
        """The doc ids the version holds: its file manifest's, else read from its records."""
        found: tuple[str, ...] = self._once("documents", self._documents)
        return found

    def _documents(self) -> tuple[str, ...]:
        manifest = self.store.side.manifest(self.entry)
        if manifest is not None and manifest.files:
            return tuple(sorted(manifest.files))
        return tuple(sorted({c.doc_id for c, _ in self.store.records.scan(self.entry)}))

    def scope(self, paths: tuple[str, ...]) -> Scope:
        """The version narrowed to the documents the globs match (kept for the last
        SCOPES asked)."""
        with self._lock:
            kept = self._scopes.get(paths)
            if kept is not None:
                self._scopes.move_to_end(paths)
                return kept
        made = self._scope(paths)
        with self._lock:
            self._scopes[paths] = made
            while len(self._scopes) > SCOPES:
                self._scopes.popitem(last=False)
        return made

    def _scope(self, paths: tuple[str, ...]) -> Scope:
        docs = matching(self.documents(), paths)
        rows, bm25 = self.rows, self.bm25
        row_mask = rows.of_keys(keys_of(docs)) if rows is not None and docs else None
        ids = self._ids_of(docs, row_mask)
        live = frozenset(i for i in ids if i in bm25)
        mask = mask_of(live, bm25.ids.position, bm25.postings.size)
        return Scope(paths=paths, documents=docs, ids=live, bm25=mask, rows=row_mask)

    def _ids_of(self, docs: tuple[str, ...], row_mask: np.ndarray | None) -> set[str]:
        """The chunk ids of these documents: the rows' (`row_mask`), else the records'."""
        rows = self.rows
        if row_mask is not None and rows is not None:
            return {rows.table[int(i)] for i in np.flatnonzero(row_mask)}
        return self.store.records.ids_of(self.entry, docs)

    # -- records --------------------------------------------------------------------------
    def fetch(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id (one round trip for those not read yet)."""
        return self.records.get(ids, self._read)

    def _read(self, missing: list[str]) -> dict[str, Chunk]:
        rows = self.rows
        got = rows.records(missing) if rows is not None else {}
        if len(got) < len(missing):
            rest = [i for i in missing if i not in got]
            got.update(self.store.records.get(self.entry, rest))
        return got

    def fetch_parents(self, ids: list[str]) -> dict[str, Chunk]:
        """Parent chunks by id (parent-child collections)."""
        if not self.entry.parents:
            return {}
        return self.store.records.get(self.entry, ids, parents=True)

    def chunks(self, doc_id: str | None = None) -> list[Chunk]:
        """The version's chunks (of one document), in document order. CollectionNotFound
        when the version is gone (a full rebuild collected it)."""
        scanned = [chunk for chunk, _ in self.store.records.scan(self.entry, doc_id)]
        return sorted(scanned, key=lambda c: (c.doc_id, c.start, c.end))

    def first_chunks(self, doc_id: str, n: int) -> list[str]:
        """The ids of a document's first n chunks ([] when the version is gone)."""
        try:
            return [c.id for c in self.chunks(doc_id)[:n]]
        except CollectionNotFound:
            return []
