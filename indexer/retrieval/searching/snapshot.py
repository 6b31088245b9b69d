"""One published version of a collection, as a query reads it: its catalogue entry and
the parts opened for it (BM25, the exact-match index, the rows beside it, the embedder,
its records), each opened once, on first use, and never switched.

A long-lived `Index` follows rebuilds by taking a new `Snapshot`; a query holds the one it
started with to the end, so it never reads one version's BM25 index and another's
records. Nothing here knows the handle that made it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...embeddings import Embedder
from ...store import Entry, Store
from ..options import ResolvedOptions, SearchOptions, resolve
from .parts import Parts
from .sides import Sides, SidesFactory


@dataclass(frozen=True)
class Snapshot:
    """One version of a collection as a query reads it: its catalogue entry, its parts
    and the candidate lists of each side (`Sides`), remembered for its recent queries."""

    entry: Entry
    parts: Parts = field(repr=False)
    sides: Sides = field(repr=False)

    @classmethod
    def of(
        cls,
        store: Store,
        entry: Entry,
        *,
        embedder: Callable[[], Embedder],
        bm25_engine: str | None = None,
        one_shot: bool = False,
        repairs: list[str] | None = None,
        sides: SidesFactory = Sides,
    ) -> Snapshot:
        """The snapshot of `entry` (a live version) in `store`. `embedder` loads the
        collection's embedder when a side first needs it; `sides` searches each side
        (replace it to search another way)."""
        parts = Parts(store, entry, embedder=embedder, bm25_engine=bm25_engine, repairs=repairs)
        return cls(entry, parts, sides(parts, one_shot=one_shot))

    def renamed(self, entry: Entry) -> Snapshot:
        """The same version under a newer catalogue entry (its saved search settings
        changed; the version's parts stay open)."""
        return Snapshot(entry, self.parts, self.sides)

    def resolve(self, options: SearchOptions | ResolvedOptions | None = None) -> ResolvedOptions:
        """`options` resolved for this version (`options.resolve`: the collection's saved
        settings, then its calibrated fusion, then the defaults; checked)."""
        saved = self.entry.extra.get("search") or {}
        return resolve(options or SearchOptions(), saved, self.entry.embedder, self.parts.fusion)
