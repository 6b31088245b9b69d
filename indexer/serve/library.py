"""The collections `indexer serve` reads: each opened once as an `Index` and kept (an
Index follows rebuilds by itself), searched, and laid over a document for the view.

A collection is named by its strategy (`headers`), or `strategy@embedder` when the same
strategy is built with several embedders (`retrieval.collection_label`); a search that
names none reads the one `retrieval.choose` picks, as the CLI and MCP do. Requests name
collections and documents (doc_ids); they never name a file: documents come from stored
chunk texts only.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import CollectionNotFound, UsageError
from ..evaluation.chunk_boundaries import Structure
from ..paths import shown_path
from ..retrieval import Index, ResolvedOptions, SearchOptions, choose, collection_label, describe
from ..settings import Settings
from ..store import Entry, Store
from ..types import Chunk, Hit
from .documents import lane, rebuild
from .marks import quality_table, rebuilt_document, structure_of

ENTRIES_TTL = 2.0  # seconds the catalogue listing is reused
MAX_NAME = 200


class Library:
    """The index's collections for one server process."""

    def __init__(self, settings: Settings, refresh: float | None = None) -> None:
        self.store = Store(settings)
        self.refresh = refresh
        # source folders are shown relative to it (never as absolute server paths)
        self.base = Path.cwd()
        self._indexes: dict[str, Index] = {}
        self._docs: dict[tuple, dict[str, int]] = {}
        self._entries: tuple[float, list[Entry]] = (0.0, [])
        self._lock = threading.Lock()

    # -- collections -------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        at, entries = self._entries
        if time.monotonic() - at > ENTRIES_TTL:
            entries = self.store.catalogue.entries()
            self._entries = (time.monotonic(), entries)
        return entries

    def names(self) -> dict[str, Entry]:
        entries = self.entries()
        return {collection_label(e, entries): e for e in entries}

    def describe(self, entry: Entry) -> dict:
        """A collection as the API lists it (`retrieval.describe`)."""
        return describe(self.store, entry, self.entries(), lambda p: shown_path(p, self.base))

    def name_of(self, name: str | None) -> str:
        """`name`, or (None) the name of the collection a search naming none reads
        (`retrieval.choose`: an error when the rule picks none)."""
        if name is not None:
            return name
        return collection_label(choose(self.store), self.store.catalogue.entries())

    def index(self, name: str) -> Index:
        """The kept handle of a collection, opened on first use."""
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise UsageError(
                "name a collection: strategy is a collection name from GET /api/collections"
            )
        name = name.strip()
        with self._lock:
            found = self._indexes.get(name)
        if found is not None:
            return found
        index = self._open(name)
        with self._lock:
            return self._indexes.setdefault(name, index)

    def _open(self, name: str) -> Index:
        """A new handle of a collection (a name that is no strategy is said to be none:
        `retrieval.collections.chosen`, the words MCP and the CLI answer with)."""
        if self.refresh is None:
            return Index.in_store(self.store, name)
        return Index.in_store(self.store, name, refresh=self.refresh)

    def forget(self, name: str) -> None:
        """Drop a handle whose collection was dropped (the next use opens it again)."""
        with self._lock:
            self._indexes.pop(name, None)
        self._entries = (0.0, [])

    def warm(self, names: list[str] | None = None) -> list[str]:
        """Open every collection and load its BM25 index and embedder, so that the first
        query is as fast as the rest."""
        names = names if names is not None else list(self.names())
        for name in names:
            index = self.index(name)
            index.count()
            index.embedder
        return names

    # -- documents ---------------------------------------------------------------------
    def documents(self, names: list[str]) -> dict[str, dict[str, int]]:
        """doc_id -> {collection: chunks}, over the named collections."""
        out: dict[str, dict[str, int]] = {}
        for name in names:
            for doc_id, n in self._doc_counts(self.index(name)).items():
                out.setdefault(doc_id, {})[name] = n
        return dict(sorted(out.items()))

    def _doc_counts(self, index: Index) -> dict[str, int]:
        index.follow()
        e = index.entry
        key = (e.collection, e.generation, len(e.pending_ids))
        if key not in self._docs:
            counts: dict[str, int] = {}
            for chunk in index.chunks():
                counts[chunk.doc_id] = counts.get(chunk.doc_id, 0) + 1
            self._docs[key] = counts
        return self._docs[key]

    def doc_chunks(self, name: str, doc_id: str) -> tuple[Index, list[Chunk], list[Chunk]]:
        """A document's chunks in one collection, and their parents (parent-child)."""
        index = self.index(name)
        if doc_id not in self._doc_counts(index):
            raise CollectionNotFound(
                f"no document {doc_id!r} in {name}; GET /api/documents lists them"
            )
        chunks = index.chunks(doc_id)
        parent_ids = sorted({c.parent_id for c in chunks if c.parent_id})
        parents = list(index.fetch_parents(parent_ids).values()) if parent_ids else []
        return index, chunks, parents

    def view(self, doc_id: str, names: list[str]) -> dict[str, Any]:
        """The document rebuilt from the chunks of every collection holding it (newest
        build first), and one lane per named collection."""
        held = self._holding(doc_id)
        layers = [(name, chunks + parents) for name, (_, chunks, parents) in held.items()]
        rebuilt = rebuild(layers)
        doc = rebuilt_document(doc_id, rebuilt.text)
        structure = structure_of(doc)
        lanes = [self._lane(name, held, structure) for name in names]
        table = quality_table(doc, {name: held[name][1] for name in names if name in held})
        return {
            "doc_id": doc_id,
            "format": doc.format,
            "text": rebuilt.text,
            "length": len(rebuilt.text),
            "covered": rebuilt.covered,
            "conflicts": rebuilt.conflicts,
            "lanes": lanes,
            "quality": table,
        }

    def _holding(self, doc_id: str) -> dict[str, tuple[Index, list[Chunk], list[Chunk]]]:
        """The chunks of the document in each collection holding it, newest build first."""
        every = [(name, entry) for name, entry in self.names().items()]
        every.sort(key=lambda ne: ne[1].built_at, reverse=True)
        held = {}
        for name, _ in every:
            if doc_id in self._doc_counts(self.index(name)):
                held[name] = self.doc_chunks(name, doc_id)
        if not held:
            raise CollectionNotFound(
                f"no collection holds a document {doc_id!r}; GET /api/documents lists them"
            )
        return held

    def _lane(
        self,
        name: str,
        held: dict[str, tuple[Index, list[Chunk], list[Chunk]]],
        structure: Structure,
    ) -> dict[str, Any]:
        """A collection's lane of the view (`missing` when it does not hold the document)."""
        if name not in held:
            # an unknown name is a 404, a known one without this document a missing lane
            self.index(name)
            return {"name": name, "missing": True}
        index, chunks, parents = held[name]
        return lane(name, index.entry, chunks, parents, structure)

    # -- searching ---------------------------------------------------------------------
    def search(
        self, name: str, query: str, options: SearchOptions, doc: str | None = None
    ) -> tuple[Index, ResolvedOptions, list[Hit], list[int]]:
        """The top k hits of a collection (only those of document `doc` when given:
        searched deeper until k of them are found), their options, and each hit's rank
        in the whole collection."""
        index = self.index(name)
        try:
            if not doc:
                found = index.lookup(query, options)
                return index, found.options, found.hits, [h.rank for h in found.hits]
            resolved = index.options(options)
            return (index, resolved, *self._in_doc(index, query, resolved, doc))
        except CollectionNotFound:
            self.forget(name)
            raise

    def _in_doc(
        self, index: Index, query: str, options: ResolvedOptions, doc: str
    ) -> tuple[list[Hit], list[int]]:
        total = max(index.count(), 1)
        # resolved options (`Index.options`) name every setting
        assert options.candidates is not None
        depth = min(max(options.k * 4, options.candidates), total)
        while True:
            hits = [
                h for h in index.search(query, replace(options, k=depth)) if h.chunk.doc_id == doc
            ]
            if len(hits) >= options.k or depth >= total:
                break
            depth = min(depth * 4, total)
        hits = hits[: options.k]
        overall = [h.rank for h in hits]
        for i, hit in enumerate(hits):
            hit.rank = i + 1
        return hits, overall

    def children(self, index: Index, hits: list[Hit]) -> dict[str, Chunk]:
        """The child chunks parent-child hits were found by."""
        ids = [cid for h in hits for cid in h.child_ids]
        return index.fetch(ids) if ids else {}
