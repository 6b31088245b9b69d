"""What a build measures of its embedder on the collection it made (`retrieval.worth`),
before the version is published, so the default search of the new version narrows the
embedding share where the embedder reads this collection poorly.

A full build measures; an incremental one keeps the live version's measurement while the
collection stays about the size it was measured at (a watcher's saves cost nothing); an
unchanged build measures a collection built before measurements existed.
"""

from __future__ import annotations

from dataclasses import replace

from ..embeddings import CachedEmbedder
from ..retrieval.snapshot import Snapshot
from ..retrieval.worth import measure
from ..store import Entry, Store

GROWTH = 2.0  # re-measured when the collection grew or shrank by this factor since


def measured(
    store: Store, entry: Entry, embedder: CachedEmbedder, old: Entry | None = None
) -> dict:
    """The measurement for `entry` (a version about to be published): `old`'s when it
    has one and the collection is about the same size, else measured now ({}: too small)."""
    if old is not None:
        kept = (old.extra.get("fusion") or {}).get("measured")
        if kept and old.chunks and 1 / GROWTH <= entry.chunks / old.chunks <= GROWTH:
            return kept
    return measure(Snapshot.of(store, entry, embedder=lambda: embedder))


def measure_unchanged(store: Store, entry: Entry, embedder: CachedEmbedder) -> None:
    """An unchanged build of a collection built before measurements (or measured when it
    was too small to tell): measure it and store the measurement on the live entry (the
    caller holds the build lease)."""
    fusion = entry.extra.get("fusion")
    if isinstance(fusion, dict) and not fusion.get("measured"):
        found = measure(Snapshot.of(store, entry, embedder=lambda: embedder))
        if found:  # {}: too small to tell, as before
            extra = {**entry.extra, "fusion": {**fusion, "measured": found}}
            store.catalogue.publish(replace(entry, extra=extra))
