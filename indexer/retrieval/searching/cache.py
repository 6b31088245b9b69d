"""The chunks a handle has read, kept for the next query: hits and tie-breaking read the
same few records again and again. Bounded: a cache, not a copy of the collection."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ...types import Chunk

LIMIT = 20_000  # records kept; past this the cache starts again


class RecordCache:
    """Chunks by id; `get` reads those not seen yet in one call of its `read`."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._records: dict[str, Chunk] = {}
        self._lock = threading.Lock()

    def get(
        self, ids: list[str], read: Callable[[list[str]], dict[str, Chunk]]
    ) -> dict[str, Chunk]:
        """The chunks of these ids that exist (`read(missing)` for the unseen ones)."""
        with self._lock:
            missing = [i for i in ids if i not in self._records]
        if missing:
            got = read(missing)
            with self._lock:
                if len(self._records) > self.limit:
                    self._records.clear()
                self._records.update(got)
        with self._lock:
            return {i: self._records[i] for i in ids if i in self._records}

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
