"""Sorted string tables over arrays a process maps: the BM25 vocabulary (term -> id) and
the chunk ids (id <-> position), looked up by binary search instead of being loaded into a
dictionary (a million-chunk index has millions of terms; a dict of them takes seconds to
build and hundreds of MB to hold)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np
from numpy.typing import NDArray

Bytes = NDArray[np.uint8]
Offsets = NDArray[np.int64]
Strings = NDArray[np.bytes_]  # fixed-width UTF-8 byte strings


def blob(strings: Sequence[str]) -> tuple[Bytes, Offsets]:
    """UTF-8 bytes of the strings end to end, and where each starts (plus the end)."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def strings_of(array: Strings) -> list[str]:
    """The strings of an array of UTF-8 byte strings."""
    return [bytes(x).decode("utf-8") for x in array]


def strings(values: Sequence[str]) -> Strings:
    """Strings as an array of their UTF-8 bytes (fixed width)."""
    if not values:
        return np.zeros(0, dtype="S1")
    return np.array([v.encode("utf-8") for v in values], dtype=bytes)


class Vocabulary:
    """Terms sorted by their UTF-8 bytes (= code points); a term's id is its rank. Terms an
    incremental build added after the base was written (`extra`) take the next ids."""

    def __init__(self, data: Bytes, offsets: Offsets, extra: Sequence[str] = ()) -> None:
        self.data, self.offsets = data, offsets
        self.base = len(offsets) - 1
        self.extra = list(extra)
        self._extra_id = {t: self.base + i for i, t in enumerate(self.extra)}

    def __len__(self) -> int:
        return self.base + len(self.extra)

    def _key(self, i: int) -> bytes:
        return self.data[self.offsets[i] : self.offsets[i + 1]].tobytes()

    def term(self, i: int) -> str:
        return self._key(i).decode("utf-8") if i < self.base else self.extra[i - self.base]

    def find(self, term: str) -> int:
        """The term's id, or -1."""
        key = term.encode("utf-8")
        lo, hi = 0, self.base
        while lo < hi:
            mid = (lo + hi) // 2
            if self._key(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.base and self._key(lo) == key:
            return lo
        return self._extra_id.get(term, -1)

    def __iter__(self) -> Iterator[str]:
        return (self.term(i) for i in range(len(self)))


class IdTable(Sequence[str]):
    """Chunk ids by position, and positions by id: the ids in position order and sorted
    (with the position of each), as fixed-width byte strings; `extra` are the ids of a
    small delta, held in a dict."""

    def __init__(
        self, ids: Strings, ordered: Strings, rank: NDArray[np.int32], extra: Sequence[str] = ()
    ) -> None:
        self.ids, self.ordered, self.rank = ids, ordered, rank
        self.base = len(ids)
        self.extra = list(extra)
        self._extra_pos = {cid: self.base + i for i, cid in enumerate(self.extra)}

    @classmethod
    def arrays_for(cls, ids: Sequence[str]) -> dict[str, NDArray[np.generic]]:
        """The arrays of a table of these ids (position order), by their file names."""
        return dict(zip(("ids", "ids_sorted", "ids_rank"), cls.columns_for(ids)))

    @staticmethod
    def columns_for(ids: Sequence[str]) -> tuple[Strings, Strings, NDArray[np.int32]]:
        """A table's arrays for these ids: the ids in position order, sorted, and the
        position of each sorted one."""
        raw = strings(list(ids))
        order = np.argsort(raw, kind="stable").astype(np.int32)
        return raw, raw[order], order

    def __len__(self) -> int:
        return self.base + len(self.extra)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if i >= self.base:
            return self.extra[i - self.base]
        return bytes(self.ids[i]).decode("utf-8")

    def __eq__(self, other: object) -> bool:
        return (
            list(self) == list(other)
            if isinstance(other, (list, tuple, IdTable))
            else NotImplemented
        )

    def position(self, chunk_id: str) -> int:
        """Where the id is, or -1."""
        if chunk_id in self._extra_pos:
            return self._extra_pos[chunk_id]
        if not self.base:
            return -1
        key = chunk_id.encode("utf-8")
        k = int(np.searchsorted(self.ordered, key))
        if k < self.base and bytes(self.ordered[k]) == key:
            return int(self.rank[k])
        return -1

    def positions(self, chunk_ids: Iterable[str]) -> NDArray[np.int64]:
        return np.array([self.position(c) for c in chunk_ids], dtype=np.int64)
