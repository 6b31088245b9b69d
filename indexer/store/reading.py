"""The store's reads of a version's records (`store.records`): nearest vectors, records by
id, scans, counts.

A version's records live in its collection and, for a large collection that incremental
builds have written into since its last compaction, in its delta collection too
(`Entry.delta`, see `delta.py`): every read here covers both, so callers see one
collection. Records of other generations and superseded ones may come back from the
vector and id reads (the caller filters by the version it reads); scans skip them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..types import Chunk
from .chroma import Chroma
from .entries import Entry
from .records import (
    RecordMeta,
    all_of,
    chunk_from_record,
    documents_filter,
    generation_filter,
    record_text,
)

if TYPE_CHECKING:
    import numpy.typing as npt
    from chromadb.api.types import Embedding, GetResult, Include, Where

SCAN_BATCH = 2000
DOC_BATCH = 500  # documents a `where doc_id $in` lists at most


class Records:
    """Reads of the versions the catalogue names, through one Chroma client."""

    def __init__(self, chroma: Chroma) -> None:
        self._chroma = chroma

    def reopen(self) -> None:
        """See what other processes wrote since this client opened the embedded database
        (a long-lived reader does when a new version is published; see `Chroma.reopen`)."""
        self._chroma.reopen()

    def nearest(
        self,
        entry: Entry,
        vector: npt.NDArray[np.float32],
        n: int,
        documents: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) of up to n nearest records (live or not: the caller
        filters by the version it reads); `documents`: only records of these doc ids
        (Chroma's `where` on the stored path)."""
        found: dict[str, float] = {}
        queries: list[Embedding] = [vector]
        where = documents_filter(documents) if documents is not None else None
        for name in entry.record_collections:
            col = self._chroma.collection(name)
            got = self._chroma.call(
                lambda: col.query(
                    query_embeddings=queries,
                    n_results=max(n, 1),
                    where=where,
                    include=["distances"],
                ),
                f"searching {entry.strategy}",
            )
            distances = got["distances"] or [[]]  # asked for: always there
            for cid, d in zip(got["ids"][0], distances[0]):
                # a record being merged is in both collections
                found[cid] = max(found.get(cid, -2.0), 1.0 - float(d))
        return sorted(found.items(), key=lambda kv: -kv[1])[: max(n, 1)]

    def get(self, entry: Entry, ids: list[str], parents: bool = False) -> dict[str, Chunk]:
        """Chunks by id (of the parent collection with `parents`; the delta's copy first)."""
        out: dict[str, Chunk] = {}
        for name in [entry.parents] if parents else reversed(entry.record_collections):
            missing = [i for i in ids if i not in out]
            if not missing:
                break
            col = self._chroma.collection(name)
            got = self._chroma.call(
                lambda: col.get(ids=missing, include=["documents", "metadatas"]),
                f"reading {entry.strategy}",
            )
            docs, metas = got["documents"] or [], got["metadatas"] or []  # asked for: there
            out.update(
                (cid, chunk_from_record(cid, doc, meta))
                for cid, doc, meta in zip(got["ids"], docs, metas)
            )
        return out

    def _pages(
        self, entry: Entry, where: Where, include: Include
    ) -> Iterator[tuple[str, str | None, RecordMeta]]:
        """(id, document, metadata) of the records matching `where`, in batches, both
        collections; superseded ones skipped."""
        pending = entry.pending_ids
        # a record written again (its file restored) is in the delta and may be in both
        seen: set[str] = set()
        for name in reversed(entry.record_collections):
            in_delta = name == entry.delta
            for got in self._batches(name, where, include, f"reading {entry.strategy}"):
                yield from _unseen(got, pending, seen, in_delta)

    def _batches(self, name: str, where: Where, include: Include, what: str) -> Iterator[GetResult]:
        """The records of collection `name` matching `where`, SCAN_BATCH at a time."""
        col = self._chroma.collection(name)
        offset = 0
        while True:
            got = self._chroma.call(
                lambda: col.get(where=where, include=include, limit=SCAN_BATCH, offset=offset), what
            )
            if not got["ids"]:
                return
            yield got
            offset += len(got["ids"])

    def scan(self, entry: Entry, doc_id: str | None = None) -> Iterator[tuple[Chunk, RecordMeta]]:
        """Every live record of a version (of one document), with its metadata, in
        batches; records of other generations and superseded ones are skipped."""
        where = generation_filter("$lte", entry.generation)
        if doc_id:
            where = all_of(where, {"doc_id": doc_id})
        for cid, doc, meta in self._pages(entry, where, ["documents", "metadatas"]):
            yield chunk_from_record(cid, doc, meta), meta

    def ids_of(self, entry: Entry, doc_ids: Sequence[str]) -> set[str]:
        """The ids of the records of these documents (live or not: the caller filters by
        the version it reads), read without their texts, DOC_BATCH documents a request."""
        out: set[str] = set()
        for i in range(0, len(doc_ids), DOC_BATCH):
            where = all_of(
                generation_filter("$lte", entry.generation),
                documents_filter(doc_ids[i : i + DOC_BATCH]),
            )
            for name in entry.record_collections:
                for got in self._batches(name, where, [], f"reading {entry.strategy}"):
                    out.update(got["ids"])
        return out

    def indexed_texts(self, entry: Entry, after: int = 0) -> Iterator[tuple[str, str]]:
        """(id, indexed_text) of every live record (written after generation `after`): what
        a machine lacking a BM25 index rebuilds it from, or brings an older one up to date
        with (the header, context and text each record holds)."""
        where = generation_filter("$lte", entry.generation)
        if after:
            where = all_of(where, generation_filter("$gt", after))
        for cid, doc, meta in self._pages(entry, where, ["documents", "metadatas"]):
            yield cid, chunk_from_record(cid, doc, meta).indexed_text

    def with_vectors(self, entry: Entry) -> Iterator[VectorRecords]:
        """Every live record of a version with its vector, SCAN_BATCH at a time: what a
        machine rewrites the version's damaged rows from (`retrieval.rows.repair`)."""
        where = generation_filter("$lte", entry.generation)
        pending, seen = entry.pending_ids, set[str]()
        for name in reversed(entry.record_collections):
            include: Include = ["documents", "metadatas", "embeddings"]
            for got in self._batches(name, where, include, f"reading {entry.strategy}"):
                live = list(_unseen(got, pending, seen, name == entry.delta))
                yield _vector_records(got, live)

    def count(self, entry: Entry) -> int:
        """Records stored for the version's collection and its delta (superseded ones
        included until they are deleted)."""
        chroma = self._chroma
        return sum(
            chroma.call(chroma.collection(name).count, f"counting {entry.strategy}")
            for name in entry.record_collections
        )


def _unseen(
    got: GetResult, pending: set[str], seen: set[str], in_delta: bool
) -> Iterator[tuple[str, str | None, RecordMeta]]:
    """(id, document, metadata) of a batch's records neither superseded (`pending`) nor
    read already from the delta (`seen`, which a delta's batch adds to)."""
    docs: Sequence[str | None] = got.get("documents") or [None] * len(got["ids"])
    for cid, doc, meta in zip(got["ids"], docs, got["metadatas"] or []):
        if cid not in pending and cid not in seen:
            yield cid, doc, meta or {}
        if in_delta:
            seen.add(cid)


@dataclass(frozen=True, kw_only=True)
class VectorRecords:
    """A batch of records with their vectors (`Records.with_vectors`)."""

    ids: list[str]
    documents: list[str]  # the records' texts (`records.record_text`)
    metadatas: list[RecordMeta]
    vectors: npt.NDArray[np.float32]  # one row a record


def _vector_records(
    got: GetResult, live: list[tuple[str, str | None, RecordMeta]]
) -> VectorRecords:
    """The `live` records of a batch (as `_unseen` gives them) with their vectors."""
    row = {cid: i for i, cid in enumerate(got["ids"])}
    vectors = got["embeddings"]
    assert vectors is not None  # asked for: always there
    return VectorRecords(
        ids=[cid for cid, _, _ in live],
        documents=[record_text(doc, meta) for _, doc, meta in live],
        metadatas=[meta for _, _, meta in live],
        vectors=np.asarray([vectors[row[cid]] for cid, _, _ in live], dtype=np.float32),
    )
