"""A build's rows (`retrieval.rows`), streamed to disk as the build writes them to Chroma,
then laid out as the version's rows folder: on their own (a full build), or with the
previous version's — its base kept and linked, the delta rewritten, or everything merged
into a new base once the delta and the deleted rows outgrow MERGE_SHARE of the base."""

from __future__ import annotations

import contextlib
import json
import shutil
import struct
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...store import SideFile
from ...types import Chunk
from ..bm25 import files
from ..bm25.lookup import IdTable, strings
from .table import (
    BASE,
    MERGE_SHARE,
    SCAN_BLOCK,
    SIDE,
    BaseArrays,
    Ints,
    Metadata,
    RowBlock,
    RowStore,
    doc_key,
    gather,
)

HEADER = 128  # bytes reserved for a streamed .npy file's header (data aligned to 64)


def npy_header(shape: tuple[int, ...], dtype: np.dtype[Any]) -> bytes:
    """A .npy (1.0) header of exactly HEADER bytes."""
    text = repr(
        {
            "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
            "fortran_order": False,
            "shape": tuple(shape),
        }
    ).encode("latin1")
    pad = HEADER - 10 - len(text) - 1
    if pad < 0:
        raise ValueError(f"shape {shape} does not fit a {HEADER}-byte header")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", HEADER - 10) + text + b" " * pad + b"\n"


class Stream:
    """A .npy file written a block at a time (its header filled in at the end)."""

    def __init__(self, path: Path, dtype: type[np.generic], width: int | None = None) -> None:
        self.path, self.dtype, self.width = path, np.dtype(dtype), width
        self.rows = 0
        self.fh: BinaryIO = open(path, "wb")
        self.fh.write(b"\0" * HEADER)

    def add(self, array: ArrayLike) -> None:
        contiguous = np.ascontiguousarray(array, dtype=self.dtype)
        self.fh.write(contiguous.tobytes())
        self.rows += len(contiguous)

    def close(self) -> None:
        shape = (self.rows, self.width) if self.width is not None else (self.rows,)
        self.fh.seek(0)
        self.fh.write(npy_header(shape, self.dtype))
        self.fh.close()


def _without_text(meta: Metadata) -> Metadata:
    """A record's metadata as a row keeps it: its text is the row's own (`d`), not again."""
    return {k: v for k, v in meta.items() if k != "text"} if "text" in meta else meta


class NoRows:
    """A build that keeps no rows."""

    previous: RowStore | None = None

    def add_chunks(self, *_: object) -> None: ...  # noqa: E704
    def finish(self, *_: object) -> None: ...  # noqa: E704
    def abandon(self) -> None: ...  # noqa: E704


class RowsWriter:
    """The rows of one build, streamed to disk as they are written to Chroma (memory holds
    ids and offsets, not texts or vectors); `finish` turns them into the version's folder,
    on their own (a full build) or with the previous version's (an incremental one)."""

    def __init__(self, folder: Path, dimension: int) -> None:
        self.folder = folder
        self.tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.rows.tmp")
        self.tmp.mkdir(parents=True)
        self.dimension = dimension
        self.ids: list[str] = []
        self.docs: list[int] = []
        self.lengths: list[int] = []
        self.blob = Stream(self.tmp / "blob.npy", np.uint8)
        self.vectors = Stream(self.tmp / "vectors.npy", np.float32, dimension)
        self.previous: RowStore | None = None  # the rows an incremental build starts from

    @classmethod
    def for_build(
        cls, previous: RowStore | None, folder: Path, dimension: int, full: bool
    ) -> RowsWriter | NoRows:
        """A build's writer (its `previous`: the rows it starts from, the previous
        version's, repaired if need be: `rows.repair`), when the build can make the rows
        whole: a full build, or an incremental one whose previous version has them.
        Otherwise one that keeps none: partial rows would answer for records they lack;
        readers use Chroma until a full build writes rows again."""
        if full:
            previous = None
        if not dimension or not (full or previous is not None):
            return NoRows()
        writer = cls(folder, dimension)
        writer.previous = previous
        return writer

    def add_chunks(
        self, chunks: Sequence[Chunk], metas: Sequence[Metadata], vectors: ArrayLike
    ) -> None:
        self.add(
            [c.id for c in chunks],
            [c.doc_id for c in chunks],
            [c.text for c in chunks],
            metas,
            vectors,
        )

    def add(
        self,
        ids: Sequence[str],
        docs: Sequence[str],
        texts: Sequence[str],
        metas: Sequence[Metadata],
        vectors: ArrayLike,
    ) -> None:
        encoded = [
            json.dumps({"d": t, "m": _without_text(m)}, ensure_ascii=False).encode("utf-8")
            for t, m in zip(texts, metas)
        ]
        self.blob.add(np.frombuffer(b"".join(encoded), dtype=np.uint8))
        self.lengths.extend(len(e) for e in encoded)
        self.ids.extend(ids)
        self.docs.extend(doc_key(d) for d in docs)
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # unit length: a scan's cosine is a dot
        self.vectors.add(matrix / np.where(norms > 0, norms, 1.0))

    def add_rows(self, rows: RowStore, positions: Ints) -> None:
        """Rows of an earlier version, copied (a merge), a block at a time."""
        for i in range(0, len(positions), SCAN_BLOCK):
            for block in gather(rows, positions[i : i + SCAN_BLOCK]):
                self.blob.add(block.blob)
                self.lengths.extend(block.lengths)
                self.ids.extend(block.ids)
                self.docs.extend(block.docs.tolist())
                self.vectors.add(block.vectors)

    def abandon(self) -> None:
        with contextlib.suppress(OSError):
            self.blob.fh.close()
            self.vectors.fh.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _offsets(self) -> Ints:
        offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        return offsets

    def _arrays(self) -> dict[str, NDArray[np.generic]]:
        return {
            **IdTable.arrays_for(self.ids),
            "docs": np.array(self.docs, dtype=np.uint64),
            "offsets": self._offsets(),
        }

    def _own_rows(self) -> RowStore:
        """These rows, read back from the writer's folder (once its streams are closed)."""
        ids, ordered, rank = IdTable.columns_for(self.ids)
        arrays: BaseArrays = {
            "ids": ids,
            "ids_sorted": ordered,
            "ids_rank": rank,
            "docs": np.array(self.docs, dtype=np.uint64),
            "offsets": self._offsets(),
            "blob": np.asarray(
                np.load(self.tmp / "blob.npy", mmap_mode="r").view(np.ndarray), dtype=np.uint8
            ),
            "vectors": np.asarray(
                np.load(self.tmp / "vectors.npy", mmap_mode="r").view(np.ndarray), dtype=np.float32
            ),
        }
        return RowStore.load(arrays, None, self.dimension)

    def finish(self, retired: Iterable[str] = (), folder: Path | None = None) -> None:
        """Write the version's rows folder (at `folder`, else where the writer was opened
        for): these rows alone (no `previous`), or the previous version's without the
        `retired` ones plus these."""
        self.folder = folder or self.folder
        previous = self.previous
        try:
            self.blob.close()
            self.vectors.close()
            if previous is None:
                self._write_base({})
            # else not an incremental build's case: no partial rows
            elif previous.dimension == self.dimension:
                self._write_with(previous, retired)
        finally:
            self.abandon()

    def _write_with(self, previous: RowStore, retired: Iterable[str]) -> None:
        """The previous version's rows without the `retired` ones, plus these: a new delta,
        or everything merged into a new base."""
        drop = previous.table.positions(sorted(set(retired)))
        drop = drop[drop >= 0]
        deleted = np.union1d(previous.deleted, drop[drop < previous.base.n])
        delta = previous.delta
        keep = np.setdiff1d(
            np.arange(previous.base.n, previous.base.n + (delta.n if delta else 0)), drop
        )
        if len(keep) + len(self.ids) + len(deleted) > MERGE_SHARE * previous.base.n:
            self._merge(previous, deleted, keep)
        else:
            self._write_delta(previous, deleted, keep)

    def _write_base(self, extra: dict[str, bool]) -> None:
        moved = {"blob.npy": self.tmp / "blob.npy", "vectors.npy": self.tmp / "vectors.npy"}
        files.write(
            self.folder,
            self._arrays(),
            {},
            {
                "what": "rows",
                "dimension": self.dimension,
                "base": len(self.ids),
                "delta": 0,
                "deleted": 0,
                **extra,
            },
            moved=moved,
        )

    def _merge(self, previous: RowStore, deleted: Ints, keep: Ints) -> None:
        merged = RowsWriter(self.folder, self.dimension)
        try:
            live = np.setdiff1d(np.arange(previous.base.n), deleted)
            merged.add_rows(previous, np.concatenate([live, keep]).astype(np.int64))
            merged.add_rows(self._own_rows(), np.arange(len(self.ids), dtype=np.int64))
            merged.blob.close()
            merged.vectors.close()
            merged._write_base({"merged": True})
        finally:
            merged.abandon()

    def _write_delta(self, previous: RowStore, deleted: Ints, keep: Ints) -> None:
        # the delta: the previous delta's rows still live, then the new ones (small: in memory)
        blocks = [
            *gather(previous, keep),
            *gather(self._own_rows(), np.arange(len(self.ids), dtype=np.int64)),
        ]
        arrays = delta_arrays(blocks, deleted, self.dimension)
        if previous.source is None:
            raise ValueError("the previous rows were not read from a folder")
        src, sums = previous.source
        linked = {f"{name}.npy": (src / f"{name}.npy", sums[f"{name}.npy"]) for name in BASE}
        files.write(
            self.folder,
            arrays,
            linked,
            {
                "what": "rows",
                "dimension": self.dimension,
                "base": previous.base.n,
                "delta": len(arrays["delta_ids"]),
                "deleted": int(len(deleted)),
            },
        )


@dataclass(frozen=True)
class BuiltRows(SideFile):
    """A build's rows as a side folder of its version (`store.SideFile`): the writer's
    rows, finished without those its version `retired`."""

    SIDE: ClassVar[str] = SIDE
    writer: RowsWriter | NoRows
    retired: tuple[str, ...] = ()

    def save(self, path: Path) -> None:
        self.writer.finish(self.retired, path)


def delta_arrays(
    blocks: list[RowBlock], deleted: Ints, dimension: int
) -> dict[str, NDArray[np.generic]]:
    """A delta's files: the rows of `blocks` end to end, and the base's `deleted` positions."""
    ids = [i for block in blocks for i in block.ids]
    lengths = [n for block in blocks for n in block.lengths]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    docs = np.zeros(0, np.uint64)
    blob = np.zeros(0, np.uint8)
    vectors: NDArray[np.floating[Any]] = np.zeros((0, dimension))
    if blocks:
        docs = np.concatenate([b.docs for b in blocks]).astype(np.uint64)
        blob = np.concatenate([b.blob for b in blocks])
        vectors = np.concatenate([b.vectors for b in blocks])
    return {
        "delta_ids": strings(ids),
        "delta_docs": docs,
        "delta_offsets": offsets,
        "delta_blob": blob,
        "delta_vectors": vectors.astype(np.float32),
        "deleted": deleted.astype(np.int64),
    }


__all__ = ["SIDE", "BuiltRows", "NoRows", "RowsWriter", "Stream", "delta_arrays", "npy_header"]
