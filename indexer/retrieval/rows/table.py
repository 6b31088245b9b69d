"""A version's records beside its BM25 index, in files a process maps: every chunk a build
wrote — its text and metadata, its document, its vector — by id.

Why: Chroma 1.5 loads a collection's whole HNSW index on the first read of any kind, a
`get` by id included, and filters metadata by scanning it: at a million chunks that is
6–10 s before the first record comes back, and tens of seconds for "which records does
this file have". With the rows beside the index:

- a query reads only the records it returns (texts from the map, not from Chroma);
- a one-shot process (`indexer query`) over a large collection can scan the vectors
  (exact cosine over a mapped matrix: 0.15 s at a million 512-d vectors from the page
  cache) instead of waiting for Chroma to load its graph; long-lived processes keep using
  HNSW;
- an incremental build finds a changed file's live records by a hash of its id, not by a
  metadata scan of the collection.

Layout (the BM25 index's: `retrieval/bm25/files` writes and checks the folder; a build
writes it through `retrieval/rows/writer`): a base
segment (`ids*`, `docs`, `offsets`, `blob`, `vectors`) that incremental builds keep as it
is (hard-linked into the next generation's folder) with the positions they retire listed
in `deleted`, and a small delta (`delta_*`) they rewrite; once the delta and the deleted
rows outgrow MERGE_SHARE of the base, everything live is written into a new base. Each
row's blob is `{"d": text, "m": metadata}` as Chroma holds it. The parents of a
parent-child collection are not here (they are read by id from Chroma, and few).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import IndexerError
from ...store import Entry, Store
from ...store.records import chunk_from_record
from ...types import Chunk
from ..bm25 import files
from ..bm25.lookup import Bytes, IdTable, Strings, strings_of

SIDE = "rows"
WHAT = "the stored rows"  # what messages call them (texts, vectors)
MERGE_SHARE = 0.1
SCAN_BLOCK = 65536  # rows per block of a vector scan
BASE = ("ids", "ids_sorted", "ids_rank", "docs", "offsets", "blob", "vectors")
DELTA = ("delta_ids", "delta_docs", "delta_offsets", "delta_blob", "delta_vectors")
Keys = NDArray[np.uint64]  # documents' keys (`doc_key`)
Ints = NDArray[np.int64]
Vectors = NDArray[np.float32]
Metadata = dict[str, Any]  # a record's metadata, as Chroma holds it (JSON values)


class BaseArrays(TypedDict):
    """The base segment's files."""

    ids: Strings
    ids_sorted: Strings
    ids_rank: NDArray[np.int32]
    docs: Keys
    offsets: Ints
    blob: Bytes
    vectors: Vectors


class DeltaArrays(TypedDict):
    """The delta's files and the base's deleted positions."""

    delta_ids: Strings
    delta_docs: Keys
    delta_offsets: Ints
    delta_blob: Bytes
    delta_vectors: Vectors
    deleted: Ints


class RowBlock(NamedTuple):
    """Rows of one segment, as `gather` copies them."""

    ids: list[str]
    docs: Keys
    blob: Bytes
    lengths: list[int]
    vectors: Vectors


def doc_key(doc_id: str) -> int:
    """A document id's 64-bit key (rows are found by it, then checked by the id itself)."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "little")


class RowSegment:
    """One segment's arrays (mapped) and where its rows start."""

    def __init__(
        self, ids: Strings, docs: Keys, offsets: Ints, blob: Bytes, vectors: Vectors, first: int
    ) -> None:
        self.ids, self.docs, self.offsets, self.blob, self.vectors = (
            ids,
            docs,
            offsets,
            blob,
            vectors,
        )
        self.first = first
        self.n = len(ids)

    def id(self, local: int) -> str:
        return bytes(self.ids[local]).decode("utf-8")

    def record(self, local: int) -> tuple[str, Metadata]:
        got = json.loads(
            self.blob[self.offsets[local] : self.offsets[local + 1]].tobytes().decode("utf-8")
        )
        return got["d"], got["m"]


class RowStore:
    """A version's rows, mapped (see the module)."""

    def __init__(
        self,
        base: RowSegment,
        delta: RowSegment | None,
        table: IdTable,
        deleted: Ints,
        dimension: int,
        source: tuple[Path, dict[str, str]] | None = None,
    ) -> None:
        self.base, self.delta, self.table = base, delta, table
        self.deleted = deleted
        self.dimension = dimension
        self.source = source

    @classmethod
    def open(cls, folder: Path, expected: int | None = None, full: bool = False) -> RowStore:
        """Map a saved folder; IndexerError when it is missing, damaged or does not hold
        `expected` live rows. `full`: hash every file (a build does)."""
        params = files.read_params(folder, WHAT)
        if params.get("what") != "rows":
            raise IndexerError(f"{folder} does not hold stored rows")
        files.verify(folder, params, full=full, what=WHAT)
        try:
            base = mapped_base(folder)
            delta = mapped_delta(folder) if params["delta"] or params["deleted"] else None
            rows = cls.load(base, delta, int(params["dimension"]), (folder, params["sha256"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise files.damaged(folder, exc.__class__.__name__, WHAT) from None
        if expected is not None and rows.n != expected:
            raise IndexerError(f"the stored rows in {folder} hold {rows.n} records, not {expected}")
        return rows

    @classmethod
    def load(
        cls,
        arrays: BaseArrays,
        more: DeltaArrays | None,
        dimension: int,
        source: tuple[Path, dict[str, str]] | None = None,
    ) -> RowStore:
        """Rows over a base segment's arrays and, when there are any, the delta's and the
        deleted positions (ValueError when the vectors are not of `dimension`)."""
        base = RowSegment(
            arrays["ids"],
            arrays["docs"],
            arrays["offsets"],
            blob=arrays["blob"],
            vectors=arrays["vectors"],
            first=0,
        )
        delta = None
        extra: list[str] = []
        deleted = np.zeros(0, np.int64)
        if more is not None:
            deleted = more["deleted"]
            if len(more["delta_ids"]):
                delta = RowSegment(
                    more["delta_ids"],
                    more["delta_docs"],
                    more["delta_offsets"],
                    blob=more["delta_blob"],
                    vectors=more["delta_vectors"],
                    first=base.n,
                )
                extra = strings_of(more["delta_ids"])
        table = IdTable(arrays["ids"], arrays["ids_sorted"], arrays["ids_rank"], extra=extra)
        if vectors_shape_wrong(base, dimension) or (
            delta is not None and vectors_shape_wrong(delta, dimension)
        ):
            raise ValueError("vectors")
        return cls(base, delta, table, deleted=deleted, dimension=dimension, source=source)

    @property
    def n(self) -> int:
        """Live rows."""
        return self.base.n - len(self.deleted) + (self.delta.n if self.delta else 0)

    def split(self, positions: ArrayLike) -> list[tuple[RowSegment, Ints]]:
        at = np.asarray(positions, dtype=np.int64)
        out = [(self.base, at[at < self.base.n])]
        if self.delta is not None:
            out.append((self.delta, at[at >= self.base.n] - self.base.n))
        return [(seg, local) for seg, local in out if len(local)]

    def _segment(self, position: int) -> tuple[RowSegment, int]:
        if position < self.base.n:
            return self.base, position
        if self.delta is None:
            raise IndexError(position)
        return self.delta, position - self.base.n

    def _is_live(self, position: int) -> bool:
        if position >= self.base.n:
            return True
        k = int(np.searchsorted(self.deleted, position))
        return not (k < len(self.deleted) and self.deleted[k] == position)

    # -- reads ---------------------------------------------------------------------------
    def records(self, ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks of these ids that have a row (live or not: the caller reads by its
        version's live set)."""
        out: dict[str, Chunk] = {}
        for cid in ids:
            pos = self.table.position(cid)
            if pos < 0:
                continue
            seg, local = self._segment(pos)
            text, meta = seg.record(local)
            out[cid] = chunk_from_record(cid, text, meta)
        return out

    def of_documents(self, doc_ids: Iterable[str]) -> dict[str, list[tuple[str, Metadata]]]:
        """{doc_id: [(id, metadata)]} of the live rows of these documents."""
        wanted = {doc_key(d): d for d in doc_ids}
        keys = np.array(sorted(wanted), dtype=np.uint64)
        out: dict[str, list[tuple[str, Metadata]]] = {d: [] for d in wanted.values()}
        for seg in self.segments():
            for local in np.flatnonzero(np.isin(seg.docs, keys)).tolist():
                if not self._is_live(seg.first + local):
                    continue
                _, meta = seg.record(local)
                doc = wanted.get(doc_key(meta.get("doc_id", "")))
                if doc is not None and meta.get("doc_id") == doc:
                    out[doc].append((seg.id(local), meta))
        return out

    def segments(self) -> list[RowSegment]:
        """The base, then the delta when there is one."""
        return [self.base] if self.delta is None else [self.base, self.delta]

    def _cosines(self, vector: ArrayLike) -> NDArray[np.float32]:
        """Every row's cosine with `vector` (deleted rows included)."""
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = q / (np.linalg.norm(q) or 1.0)
        total = self.base.n + (self.delta.n if self.delta else 0)
        scores = np.empty(total, dtype=np.float32)
        for seg in self.segments():
            for i in range(0, seg.n, SCAN_BLOCK):
                block = seg.vectors[i : i + SCAN_BLOCK]
                scores[seg.first + i : seg.first + i + len(block)] = block @ q
        return scores

    def of_keys(self, keys: ArrayLike) -> NDArray[np.bool_]:
        """A mask over row positions: the live rows of the documents with these keys
        (`doc_key`)."""
        wanted = np.asarray(keys, dtype=np.uint64)
        mask = np.concatenate([np.isin(seg.docs, wanted) for seg in self.segments()])
        mask[self.deleted] = False
        return mask

    def nearest_among(
        self, vector: ArrayLike, n: int, allowed: NDArray[np.bool_]
    ) -> list[tuple[str, float]]:
        """`nearest` over the `allowed` rows only, reading just their vectors: what a
        search narrowed to a few documents costs (a gather, not a scan of every row)."""
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = q / (np.linalg.norm(q) or 1.0)
        positions = np.flatnonzero(allowed)
        scores = np.concatenate(
            [seg.vectors[local] @ q for seg, local in self.split(positions)] or [np.zeros(0)]
        )
        n = min(n, len(positions))
        if n <= 0:
            return []
        order = np.lexsort((positions, -scores))[:n]
        return [(self.table[int(positions[i])], float(scores[i])) for i in order]

    def nearest(
        self, vector: ArrayLike, n: int, allowed: NDArray[np.bool_] | None = None
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the n nearest live rows, exactly (a scan of the
        vectors, stored unit-length: one matrix-vector product per block); `allowed`: only
        these row positions (`of_keys`)."""
        scores = self._cosines(vector)
        total = len(scores)
        scores[self.deleted] = -np.inf
        if allowed is not None:
            scores[~allowed] = -np.inf
        n = min(n, self.n if allowed is None else int(allowed.sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n] if n < total else np.arange(total)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.table[int(p)], float(scores[p])) for p in top]


def mapped_base(folder: Path) -> BaseArrays:
    """A rows folder's base segment, mapped."""
    return {
        "ids": files.mapped(folder, "ids", np.bytes_),
        "ids_sorted": files.mapped(folder, "ids_sorted", np.bytes_),
        "ids_rank": files.mapped(folder, "ids_rank", np.int32),
        "docs": files.mapped(folder, "docs", np.uint64),
        "offsets": files.mapped(folder, "offsets", np.int64),
        "blob": files.mapped(folder, "blob", np.uint8),
        "vectors": files.mapped(folder, "vectors", np.float32),
    }


def mapped_delta(folder: Path) -> DeltaArrays:
    """A rows folder's delta and deleted positions, mapped."""
    return {
        "delta_ids": files.mapped(folder, "delta_ids", np.bytes_),
        "delta_docs": files.mapped(folder, "delta_docs", np.uint64),
        "delta_offsets": files.mapped(folder, "delta_offsets", np.int64),
        "delta_blob": files.mapped(folder, "delta_blob", np.uint8),
        "delta_vectors": files.mapped(folder, "delta_vectors", np.float32),
        "deleted": files.mapped(folder, "deleted", np.int64),
    }


def gather(rows: RowStore, positions: ArrayLike) -> Iterator[RowBlock]:
    """The rows at these positions, a block per segment."""
    for seg, local in rows.split(positions):
        lo, hi = seg.offsets[local], seg.offsets[local + 1]
        blob = np.concatenate([seg.blob[a:b] for a, b in zip(lo, hi)])
        yield RowBlock(
            [seg.id(int(j)) for j in local],
            np.asarray(seg.docs[local]),
            blob,
            (hi - lo).tolist(),
            seg.vectors[local],
        )


def vectors_shape_wrong(seg: RowSegment, dimension: int) -> bool:
    return (
        seg.vectors.ndim != 2
        or seg.vectors.shape != (seg.n, dimension)
        or len(seg.offsets) != seg.n + 1
    )


def open_rows(
    store: Store, entry: Entry, on_problem: Callable[[str], None] | None = None
) -> RowStore | None:
    """The live version's rows, or None where this machine has none (a reader of a Chroma
    server, an index built before rows were kept) or they are damaged (`on_problem` is
    told why and what repairs them: any build, `rows.repair`): then records are read from
    Chroma, as before."""
    folder = store.side.path(entry, SIDE)
    if not folder.exists():
        return None
    try:
        return RowStore.open(folder, expected=entry.chunks)
    except IndexerError as exc:
        if on_problem is not None:
            command = store.rebuild_command(entry)
            on_problem(
                f"{exc}; records are read from Chroma until a build rewrites them ({command})"
            )
        return None


__all__ = ["SIDE", "RowStore", "open_rows", "doc_key"]
