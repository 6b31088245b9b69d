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

Layout (the BM25 index's: `retrieval/bm25_files` writes and checks the folder): a base
segment (`ids*`, `docs`, `offsets`, `blob`, `vectors`) that incremental builds keep as it
is (hard-linked into the next generation's folder) with the positions they retire listed
in `deleted`, and a small delta (`delta_*`) they rewrite; once the delta and the deleted
rows outgrow MERGE_SHARE of the base, everything live is written into a new base. Each
row's blob is `{"d": text, "m": metadata}` as Chroma holds it. The parents of a
parent-child collection are not here (they are read by id from Chroma, and few).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import struct
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..errors import IndexerError
from ..store.records import chunk_from_record
from ..types import Chunk
from . import bm25_files as files
from .lookup import IdTable

SIDE = "rows"
MERGE_SHARE = 0.1
HEADER = 128  # bytes reserved for a streamed .npy file's header (data aligned to 64)
SCAN_BLOCK = 65536  # rows per block of a vector scan
BASE = ("ids", "ids_sorted", "ids_rank", "docs", "offsets", "blob", "vectors")
DELTA = ("delta_ids", "delta_docs", "delta_offsets", "delta_blob", "delta_vectors")


def doc_key(doc_id: str) -> int:
    """A document id's 64-bit key (rows are found by it, then checked by the id itself)."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "little")


def _npy_header(shape: tuple[int, ...], dtype: np.dtype) -> bytes:
    """A .npy (1.0) header of exactly HEADER bytes."""
    text = repr({"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                 "shape": tuple(shape)}).encode("latin1")
    pad = HEADER - 10 - len(text) - 1
    if pad < 0:
        raise ValueError(f"shape {shape} does not fit a {HEADER}-byte header")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", HEADER - 10) + text + b" " * pad + b"\n"


class _Stream:
    """A .npy file written a block at a time (its header filled in at the end)."""

    def __init__(self, path: Path, dtype, width: int | None = None) -> None:
        self.path, self.dtype, self.width = path, np.dtype(dtype), width
        self.rows = 0
        self.fh = open(path, "wb")
        self.fh.write(b"\0" * HEADER)

    def add(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array, dtype=self.dtype)
        self.fh.write(array.tobytes())
        self.rows += len(array)

    def close(self) -> None:
        shape = (self.rows, self.width) if self.width is not None else (self.rows,)
        self.fh.seek(0)
        self.fh.write(_npy_header(shape, self.dtype))
        self.fh.close()


class _NoRows:
    """A build that keeps no rows."""

    previous = None

    def add_chunks(self, *_) -> None: ...  # noqa: E704
    def finish(self, *_) -> None: ...  # noqa: E704
    def abandon(self) -> None: ...  # noqa: E704


class RowsWriter:
    """The rows of one build, streamed to disk as they are written to Chroma (memory holds
    ids and offsets, not texts or vectors); `finish` turns them into the version's folder,
    on their own (a full build) or with the previous version's (an incremental one)."""

    def __init__(self, folder: Path, dimension: int) -> None:
        self.folder = folder
        self.tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.rows")
        self.tmp.mkdir(parents=True)
        self.dimension = dimension
        self.ids: list[str] = []
        self.docs: list[int] = []
        self.lengths: list[int] = []
        self.blob = _Stream(self.tmp / "blob.npy", np.uint8)
        self.vectors = _Stream(self.tmp / "vectors.npy", np.float32, dimension)
        self.previous: RowStore | None = None  # the rows an incremental build starts from

    @classmethod
    def for_build(cls, store, old, folder: Path, dimension: int, full: bool) -> RowsWriter | _NoRows:
        """A build's writer (its `previous`: the rows it starts from), when the build can
        make the rows whole: a full build, or an incremental one whose previous version has
        them. Otherwise one that keeps none: partial rows would answer for records they
        lack; readers use Chroma until a full build writes rows again."""
        previous = None if full or old is None else open_rows(store, old)
        if not dimension or not (full or previous is not None):
            return _NoRows()
        writer = cls(folder, dimension)
        writer.previous = previous
        return writer

    def add_chunks(self, chunks: Sequence[Chunk], metas: Sequence[dict], vectors) -> None:
        self.add([c.id for c in chunks], [c.doc_id for c in chunks], [c.text for c in chunks], metas, vectors)

    def add(self, ids: Sequence[str], docs: Sequence[str], texts: Sequence[str], metas: Sequence[dict],
            vectors) -> None:
        encoded = [json.dumps({"d": t, "m": m}, ensure_ascii=False).encode("utf-8") for t, m in zip(texts, metas)]
        self.blob.add(np.frombuffer(b"".join(encoded), dtype=np.uint8))
        self.lengths.extend(len(e) for e in encoded)
        self.ids.extend(ids)
        self.docs.extend(doc_key(d) for d in docs)
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dimension)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.vectors.add(vectors / np.where(norms > 0, norms, 1.0))  # unit length: a scan's cosine is a dot

    def add_rows(self, rows: RowStore, positions: np.ndarray) -> None:
        """Rows of an earlier version, copied (a merge), a block at a time."""
        for i in range(0, len(positions), SCAN_BLOCK):
            for ids, docs, blob, lengths, vectors in _gather(rows, positions[i : i + SCAN_BLOCK]):
                self.blob.add(blob)
                self.lengths.extend(lengths)
                self.ids.extend(ids)
                self.docs.extend(docs.tolist())
                self.vectors.add(vectors)

    def abandon(self) -> None:
        with contextlib.suppress(OSError):
            self.blob.fh.close()
            self.vectors.fh.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _arrays(self) -> dict[str, np.ndarray]:
        offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        return {**IdTable.arrays_for(self.ids), "docs": np.array(self.docs, dtype=np.uint64), "offsets": offsets}

    def finish(self, retired: Iterable[str] = ()) -> None:
        """Write the version's rows folder: these rows alone (no `previous`), or the
        previous version's without the `retired` ones plus these."""
        previous = self.previous
        try:
            self.blob.close()
            self.vectors.close()
            if previous is None:
                self._write_base({})
                return
            if previous.dimension != self.dimension:  # not an incremental build's case: keep no partial rows
                return
            drop = previous.table.positions(sorted(set(retired)))
            drop = drop[drop >= 0]
            deleted = np.union1d(previous.deleted, drop[drop < previous.base.n])
            delta = previous.delta
            keep = np.setdiff1d(np.arange(previous.base.n, previous.base.n + (delta.n if delta else 0)), drop)
            if len(keep) + len(self.ids) + len(deleted) > MERGE_SHARE * previous.base.n:
                self._merge(previous, deleted, keep)
            else:
                self._write_delta(previous, deleted, keep)
        finally:
            self.abandon()

    def _write_base(self, extra: dict) -> None:
        moved = {"blob.npy": self.tmp / "blob.npy", "vectors.npy": self.tmp / "vectors.npy"}
        files.write(self.folder, self._arrays(), {}, {"what": "rows", "dimension": self.dimension,
                                                      "base": len(self.ids), "delta": 0, "deleted": 0, **extra},
                    moved=moved)

    def _merge(self, previous: RowStore, deleted: np.ndarray, keep: np.ndarray) -> None:
        merged = RowsWriter(self.folder, self.dimension)
        try:
            live = np.setdiff1d(np.arange(previous.base.n), deleted)
            merged.add_rows(previous, np.concatenate([live, keep]).astype(np.int64))
            mine = RowStore.load(self.tmp, self._arrays(), self.dimension)
            merged.add_rows(mine, np.arange(len(self.ids), dtype=np.int64))
            merged.blob.close()
            merged.vectors.close()
            merged._write_base({"merged": True})
        finally:
            merged.abandon()

    def _write_delta(self, previous: RowStore, deleted: np.ndarray, keep: np.ndarray) -> None:
        # the delta: the previous delta's rows still live, then the new ones (small: in memory)
        mine = RowStore.load(self.tmp, self._arrays(), self.dimension)
        parts = [*_gather(previous, keep), *_gather(mine, np.arange(len(self.ids), dtype=np.int64))]
        ids = [i for part in parts for i in part[0]]
        lengths = [n for part in parts for n in part[3]]
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        arrays = {
            "delta_ids": np.array([i.encode("utf-8") for i in ids], dtype=bytes) if ids else np.zeros(0, "S1"),
            "delta_docs": np.concatenate([p[1] for p in parts]).astype(np.uint64) if parts else np.zeros(0, np.uint64),
            "delta_offsets": offsets,
            "delta_blob": np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.uint8),
            "delta_vectors": (np.concatenate([p[4] for p in parts]) if parts else
                              np.zeros((0, self.dimension))).astype(np.float32),
            "deleted": deleted.astype(np.int64),
        }
        src, sums = previous.source
        linked = {f"{name}.npy": (src / f"{name}.npy", sums[f"{name}.npy"]) for name in BASE}
        files.write(self.folder, arrays, linked, {"what": "rows", "dimension": self.dimension,
                                                  "base": previous.base.n, "delta": len(ids),
                                                  "deleted": int(len(deleted))})


class _Segment:
    def __init__(self, ids: np.ndarray, docs: np.ndarray, offsets: np.ndarray, blob: np.ndarray,
                 vectors: np.ndarray, first: int) -> None:
        self.ids, self.docs, self.offsets, self.blob, self.vectors = ids, docs, offsets, blob, vectors
        self.first = first
        self.n = len(ids)

    def id(self, local: int) -> str:
        return bytes(self.ids[local]).decode("utf-8")

    def record(self, local: int) -> tuple[str, dict]:
        got = json.loads(self.blob[self.offsets[local] : self.offsets[local + 1]].tobytes().decode("utf-8"))
        return got["d"], got["m"]


class RowStore:
    """A version's rows, mapped (see the module)."""

    def __init__(self, base: _Segment, delta: _Segment | None, table: IdTable, deleted: np.ndarray, dimension: int,
                 source: tuple[Path, dict] | None = None) -> None:
        self.base, self.delta, self.table = base, delta, table
        self.deleted = deleted
        self.dimension = dimension
        self.source = source
        self._live_mask: np.ndarray | None = None

    @classmethod
    def open(cls, folder: Path, expected: int | None = None) -> RowStore:
        """Map a saved folder; IndexerError when it is missing, damaged or does not hold
        `expected` live rows."""
        params = files.read_params(folder)
        if params.get("what") != "rows":
            raise IndexerError(f"{folder} does not hold stored rows")
        files.verify(folder, params)
        try:
            arrays = {n: files.mapped(folder, n) for n in BASE}
            if params["delta"] or params["deleted"]:
                arrays.update({n: files.mapped(folder, n) for n in (*DELTA, "deleted")})
            rows = cls.load(folder, arrays, int(params["dimension"]), (folder, params["sha256"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise IndexerError(f"the stored rows in {folder} are damaged ({exc.__class__.__name__})") from None
        if expected is not None and rows.n != expected:
            raise IndexerError(f"the stored rows in {folder} hold {rows.n} records, not {expected}")
        return rows

    @classmethod
    def load(cls, folder: Path, arrays: dict[str, np.ndarray], dimension: int,
             source: tuple[Path, dict] | None = None) -> RowStore:
        if "blob" not in arrays:  # a writer's own rows, still in its folder
            arrays = {**arrays, "blob": np.load(folder / "blob.npy", mmap_mode="r").view(np.ndarray),
                      "vectors": np.load(folder / "vectors.npy", mmap_mode="r").view(np.ndarray)}
        base = _Segment(arrays["ids"], arrays["docs"], arrays["offsets"], arrays["blob"], arrays["vectors"], 0)
        delta = None
        extra: list[str] = []
        if "delta_ids" in arrays and len(arrays["delta_ids"]):
            delta = _Segment(arrays["delta_ids"], arrays["delta_docs"], arrays["delta_offsets"], arrays["delta_blob"],
                             arrays["delta_vectors"], base.n)
            extra = [bytes(x).decode("utf-8") for x in arrays["delta_ids"]]
        table = IdTable(arrays["ids"], arrays["ids_sorted"], arrays["ids_rank"], extra=extra)
        deleted = np.asarray(arrays.get("deleted", np.zeros(0, np.int64)), dtype=np.int64)
        if vectors_shape_wrong(base, dimension) or (delta is not None and vectors_shape_wrong(delta, dimension)):
            raise ValueError("vectors")
        return cls(base, delta, table, deleted, dimension, source)

    @property
    def n(self) -> int:
        """Live rows."""
        return self.base.n - len(self.deleted) + (self.delta.n if self.delta else 0)

    def split(self, positions: np.ndarray) -> list[tuple[_Segment, np.ndarray]]:
        positions = np.asarray(positions, dtype=np.int64)
        out = [(self.base, positions[positions < self.base.n])]
        if self.delta is not None:
            out.append((self.delta, positions[positions >= self.base.n] - self.base.n))
        return [(seg, local) for seg, local in out if len(local)]

    def _segment(self, position: int) -> tuple[_Segment, int]:
        if position < self.base.n:
            return self.base, position
        return self.delta, position - self.base.n  # type: ignore[return-value]

    def _is_live(self, position: int) -> bool:
        if position >= self.base.n:
            return True
        k = int(np.searchsorted(self.deleted, position))
        return not (k < len(self.deleted) and self.deleted[k] == position)

    # -- reads ---------------------------------------------------------------------------
    def records(self, ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks of these ids that have a row (live or not: the caller reads by its
        version's live set)."""
        out = {}
        for cid in ids:
            pos = self.table.position(cid)
            if pos < 0:
                continue
            seg, local = self._segment(pos)
            text, meta = seg.record(local)
            out[cid] = chunk_from_record(cid, text, meta)
        return out

    def of_documents(self, doc_ids: Iterable[str]) -> dict[str, list[tuple[str, dict]]]:
        """{doc_id: [(id, metadata)]} of the live rows of these documents."""
        wanted = {doc_key(d): d for d in doc_ids}
        keys = np.array(sorted(wanted), dtype=np.uint64)
        out: dict[str, list[tuple[str, dict]]] = {d: [] for d in wanted.values()}
        for seg in filter(None, (self.base, self.delta)):
            for local in np.flatnonzero(np.isin(seg.docs, keys)).tolist():
                if not self._is_live(seg.first + local):
                    continue
                _, meta = seg.record(local)
                doc = wanted.get(doc_key(meta.get("doc_id", "")))
                if doc is not None and meta.get("doc_id") == doc:
                    out[doc].append((seg.id(local), meta))
        return out

    def nearest(self, vector: np.ndarray, n: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the n nearest live rows, exactly (a scan of the
        vectors, stored unit-length: one matrix-vector product per block)."""
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        q = q / (np.linalg.norm(q) or 1.0)
        total = self.base.n + (self.delta.n if self.delta else 0)
        scores = np.empty(total, dtype=np.float32)
        for seg in filter(None, (self.base, self.delta)):
            for i in range(0, seg.n, SCAN_BLOCK):
                block = seg.vectors[i : i + SCAN_BLOCK]
                scores[seg.first + i : seg.first + i + len(block)] = block @ q
        scores[self.deleted] = -np.inf
        n = min(n, self.n)
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n] if n < total else np.arange(total)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.table[int(p)], float(scores[p])) for p in top]


def _gather(rows: RowStore, positions: np.ndarray):
    """(ids, doc keys, blob bytes, blob lengths, vectors) of these rows, per segment."""
    for seg, local in rows.split(positions):
        lo, hi = seg.offsets[local], seg.offsets[local + 1]
        blob = np.concatenate([seg.blob[a:b] for a, b in zip(lo, hi)])
        yield [seg.id(int(j)) for j in local], np.asarray(seg.docs[local]), blob, (hi - lo).tolist(), seg.vectors[local]


def vectors_shape_wrong(seg: _Segment, dimension: int) -> bool:
    return seg.vectors.ndim != 2 or seg.vectors.shape != (seg.n, dimension) or len(seg.offsets) != seg.n + 1


def open_rows(store, entry, on_problem=None) -> RowStore | None:
    """The live version's rows, or None where this machine has none (a reader of a Chroma
    server, an index built before rows were kept) or they are damaged (`on_problem` is
    told why): then records are read from Chroma, as before."""
    folder = store.side.path(entry, SIDE)
    if not folder.exists():
        return None
    try:
        return RowStore.open(folder, expected=entry.chunks)
    except IndexerError as exc:
        if on_problem is not None:
            on_problem(f"{exc}; records are read from Chroma until the next full build (indexer build --full)")
        return None


__all__ = ["SIDE", "RowStore", "RowsWriter", "open_rows", "doc_key"]
