"""Physical collections and what they leave: deleting a version's collections with their
side folders, the records of a generation never published, the collections no live entry
names (what killed builds left), and the vector-segment folders Chroma leaves of deleted
collections in an embedded database (see `gc.py`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from ..errors import StoreError
from .catalogue import Catalogue
from .chroma import Chroma
from .entries import PREFIX, Entry
from .gc import GcReport, compact_if_grown, remove_orphan_segments
from .records import generation_filter
from .side import SideFiles


class PhysicalCollections:
    """The Chroma collections behind the catalogue's entries, and their side folders."""

    def __init__(self, chroma: Chroma, catalogue: Catalogue, side: SideFiles) -> None:
        self._chroma, self._catalogue, self._side = chroma, catalogue, side

    def remove(self, names: Iterable[str]) -> None:
        """Delete physical collections and their side files ("" names none)."""
        for name in names:
            if name:
                self._chroma.delete(name)
                self._side.remove(name)

    def remove_version(self, entry: Entry) -> None:
        """Delete a replaced version's collections and side files (readers still holding
        them reopen the live version on their next search)."""
        self.remove([entry.collection, entry.parents, entry.delta])

    def drop_generations_after(self, entry: Entry) -> int:
        """Delete records newer than the entry's generation (an unpublished build's)."""
        count = 0
        for name in (entry.collection, entry.parents, entry.delta):
            if not name:
                continue
            col = self._chroma.collection(name)
            where = generation_filter("$gt", entry.generation)
            got = self._chroma.call(lambda: col.get(where=where, include=[]), "reading records")
            if got["ids"]:
                self._chroma.call(lambda: col.delete(ids=got["ids"]), "deleting records")
                count += len(got["ids"])
        return count

    def unpublished(self, key: str | None = None) -> dict[str, list[str]]:
        """{entry key: names} of the physical collections no live entry names (what killed
        builds left), of one key (`entry_key`) or of every one."""
        live = {
            name for e in self._live_entries(key) for name in (e.collection, e.parents, e.delta)
        }
        out: dict[str, list[str]] = {}
        for name, meta in sorted(self._chroma.listing()):
            owner = meta.get("indexer_key")
            if name.startswith(PREFIX) and name not in live and owner and key in (None, owner):
                out.setdefault(owner, []).append(name)
        return out

    def _live_entries(self, key: str | None) -> list[Entry]:
        """The live entry of `key` (none or one), or with None every live entry."""
        if key is None:
            return self._catalogue.entries()
        one = self._catalogue.entry(key)
        return [one] if one else []

    def collect_segments(self) -> None:
        """Embedded database: remove the vector-index folders Chroma leaves of deleted
        collections (chroma-core/chroma#5259)."""
        if not self._chroma.url:
            with contextlib.suppress(OSError, StoreError):
                remove_orphan_segments(self._chroma.path, GcReport())

    def collect_after_full_build(self) -> None:
        """Embedded database: what Chroma leaves of a version a full build replaced (its
        vector-segment folders; a catalogue grown past its baseline is compacted)."""
        if not self._chroma.url:
            report = GcReport()
            remove_orphan_segments(self._chroma.path, report)
            compact_if_grown(self._chroma.path, report)
