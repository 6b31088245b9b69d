"""The writer of an index (`store.builds`): build leases, the clean-up before a build, a
build's `Staging` (`begin`), dropping a collection, and what a failed first build or a
full rebuild leaves. Delta collections (`delta.py`) and physical collections
(`physical.py`) are its parts."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..errors import CollectionNotFound
from .catalogue import Catalogue
from .chroma import Chroma
from .delta import Deltas
from .entries import GRACE, Entry, entry_key
from .leases import Leases
from .physical import PhysicalCollections
from .side import SideFiles
from .staging import Staging

DROPPING = "dropping a collection"


class Builds:
    """What writes into one index, each write under its (strategy, embedder)'s lease."""

    def __init__(
        self, chroma: Chroma, catalogue: Catalogue, side: SideFiles, leases: Leases
    ) -> None:
        self._chroma, self._catalogue = chroma, catalogue
        self._side, self._leases = side, leases
        self.deltas = Deltas(chroma, catalogue)
        self.physical = PhysicalCollections(chroma, catalogue, side)

    def lease(
        self,
        strategy: str,
        embedder: str,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        doing: str = "building",
        action: str = "",
    ) -> AbstractContextManager[object]:
        """An exclusive build lease (`Leases.hold`): a lock file in the index folder, or
        with a Chroma server a lease in the server's catalogue."""
        return self._leases.hold(
            strategy, embedder, wait, on_wait=on_wait, doing=doing, action=action
        )

    def require_writable(self, doing: str) -> None:
        """Refuse, in one line, to write into a read-only index folder (before any write)."""
        self._chroma.require_writable(doing)

    def begin(
        self,
        strategy: str,
        embedder: str,
        meta: dict[str, Any],
        old: Entry | None,
        full: bool,
        on_stage: Callable[[str], None] | None = None,
    ) -> Staging:
        """Start writing a new version (hold the lease)."""
        return Staging(
            self._chroma,
            self._catalogue,
            self._side,
            deltas=self.deltas,
            physical=self.physical,
            strategy=strategy,
            embedder=embedder,
            meta=meta,
            old=old,
            full=full,
            on_stage=on_stage,
        )

    def prepare(
        self, strategy: str, embedder: str, grace: float = GRACE
    ) -> tuple[Entry | None, list[str]]:
        """Before a build (holding the lease): remove what killed builds left (collections
        never published, records of an unpublished generation) and superseded records
        whose grace period is over. Returns the live entry and what was removed."""
        key = entry_key(strategy, embedder)
        removed = self.physical.unpublished(key).get(key, [])
        self.physical.remove(removed)
        entry = self._catalogue.find_or_none(strategy, embedder)
        removed += self._side.remove_stale(strategy, embedder, entry)
        if entry is not None and self.deltas.was_writing(entry):
            if self.physical.drop_generations_after(entry):
                removed.append(f"{entry.collection} records after generation {entry.generation}")
            self.deltas.done_writing(entry)
        # a delta's superseded records go when it is merged
        if entry is not None and not entry.delta:
            if self.deltas.expire_pending(entry, grace):
                removed.append(f"{entry.collection} superseded records")
            self._side.prune(entry)
        return entry, removed

    def drop(
        self,
        names: str | Sequence[str],
        built_with: str | None = None,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
    ) -> Entry:
        """Remove a collection (found by its names as in `Catalogue.find`), its BM25 index
        and manifest, and whatever builds left; a build of it running now is waited for
        (or, without `wait`, LockTimeout), and what is dropped is the version live once it
        is done — a first build's too, though nothing of it is published yet. Returns that
        version's entry."""
        names = [names] if isinstance(names, str) else list(names)
        catalogue = self._catalogue
        try:
            found = catalogue.find(names, built_with)
        except CollectionNotFound:
            running = catalogue.running_builds(names, built_with)
            if not running:
                raise
            with self.lease(*running[0], wait, on_wait, doing=DROPPING, action="drop"):
                pass  # its first build is done (published, or failed: then nothing is found)
            found = catalogue.find(names, built_with)
        strategy, embedder = found.strategy, found.embedder
        with self.lease(strategy, embedder, wait, on_wait, doing=DROPPING, action="drop"):
            entry = catalogue.find_or_none(strategy, embedder)
            if entry is None:
                raise CollectionNotFound(
                    f"no collection for strategy {strategy!r} ({embedder}) in {self._chroma.where}"
                )
            catalogue.forget(entry)
            self.physical.remove_version(entry)
            key = entry_key(strategy, embedder)
            self.physical.remove(self.physical.unpublished(key).get(key, []))
        self.physical.collect_segments()
        return entry

    def collect_after_full_build(self) -> None:
        """What Chroma leaves of a version a full build replaced (embedded database)."""
        self.physical.collect_after_full_build()

    def discard_if_empty(self) -> None:
        """Remove an index folder that holds nothing published (a failed first build)."""
        folder = self._chroma.folder
        with contextlib.suppress(Exception):
            if folder is not None and not self._catalogue.entries():
                self._chroma.close()
                shutil.rmtree(folder, ignore_errors=True)
