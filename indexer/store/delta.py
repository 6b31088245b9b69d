"""A large collection's delta: where incremental builds write, and its merge.

Chroma 1.5 loads a collection's whole HNSW index on the first read or write of a process:
at a million records that is seconds that every incremental build of one edited file
would pay. So once a version holds `DELTA_FROM` records, incremental builds write into a
companion collection (`Entry.delta`, `<collection>-d`), which reads cover beside the
collection (`reading.Records`), and a later build merges it in once it (or what it
superseded) passes `COMPACT_SHARE` of the collection. A build writing into a delta marks
it in the catalogue first (`writing`), so the next build looks for a killed build's
records only when one was left. `Builds` holds the one `Deltas` of an index.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from ..errors import IndexerError
from .catalogue import WRITING, Catalogue
from .chroma import Chroma, placeholders
from .entries import GRACE, Entry, superseded

DELTA_FROM = 50_000  # records from which incremental builds write into a delta collection
# ...merged into the collection once it (or what it superseded) passes this share
COMPACT_SHARE = 0.05
MERGE_BATCH = 2000


class Deltas:
    """The delta collections of one index: where a build writes, the marks, the merge."""

    def __init__(self, chroma: Chroma, catalogue: Catalogue) -> None:
        self._chroma, self._catalogue = chroma, catalogue

    def target(self, old: Entry) -> str:
        """The delta collection an incremental build of `old` writes into ("" for none): a
        large embedded collection's new records go into its delta collection, as writing
        into the collection would load its whole HNSW index first (Chroma does, on any read
        or write: 6-10 s at a million records; a server holds it loaded already)."""
        large = old.chunks >= DELTA_FROM and not self._chroma.url
        return old.delta or (f"{old.collection}-d" if large else "")

    def writing(self, entry: Entry) -> None:
        """Say in the catalogue, before a delta build writes records of the next generation
        into `entry`'s collection, that it does — until it publishes or undoes them
        (`done_writing`). `Builds.prepare` looks for an unpublished generation's records
        only when this mark was left (a killed build): looking costs a metadata scan of the
        collection, seconds at a million records, which every build paid before."""
        self._chroma.call(
            lambda: self._chroma.catalogue().upsert(
                ids=[WRITING + entry.key],
                embeddings=placeholders(1),
                documents=[json.dumps({"generation": entry.generation + 1})],
                metadatas=[{"kind": "writing"}],
            ),
            "writing the catalogue",
        )

    def done_writing(self, entry: Entry) -> None:
        self._chroma.call(
            lambda: self._chroma.catalogue().delete(ids=[WRITING + entry.key]),
            "writing the catalogue",
        )

    def was_writing(self, entry: Entry) -> bool:
        """Did a build writing into `entry`'s collection stop before it published?"""
        got = self._chroma.call(
            lambda: self._chroma.catalogue().get(ids=[WRITING + entry.key], include=[]),
            "reading the catalogue",
        )
        return bool(got["ids"])

    def merge(
        self,
        entry: Entry,
        on_note: Callable[[str], object] = lambda _msg: None,
        grace: float = GRACE,
    ) -> Entry:
        """Before an incremental build (holding the lease): merge the entry's delta
        collection into its collection once due (`compact`). A merge that fails does not
        fail the build — Chroma 1.5 can be left unable to apply its log to a collection's
        HNSW index when a write into it is killed (chroma-core/chroma#7678) — the delta
        stays and takes the build's records, and the note says how to rebuild."""
        if not entry.delta or not self._delta_due(entry):
            return entry
        name = entry.delta
        try:
            self.compact(entry, grace)
        except IndexerError as exc:
            on_note(
                f"could not merge {name} into {entry.collection} ({exc}); its records stay there and "
                "searches read both: "
                + self._chroma.rebuild_command(entry, "--full")
                + " rebuilds the collection"
            )
            return entry
        on_note(f"merged the delta collection {name} into {entry.collection}")
        return entry

    def _delta_due(self, entry: Entry) -> bool:
        delta: int = self._chroma.call(
            self._chroma.collection(entry.delta).count, "counting a delta"
        )
        return max(delta, len(entry.pending_ids)) > COMPACT_SHARE * max(entry.chunks, 1)

    def compact(self, entry: Entry, grace: float = GRACE) -> None:
        """Merge a version's delta collection into its collection (copy, then switch the
        entry, then drop the delta: a reader on the entry before reads both and sees each
        record once) and delete the records superseded since, once their grace is over.
        What every incremental build of a large collection would otherwise pay: Chroma
        loads the collection's whole HNSW index on the first read or write."""
        main, delta = (
            self._chroma.collection(entry.collection),
            self._chroma.collection(entry.delta),
        )
        while True:  # page from the start: each page is deleted from the delta once copied
            got = self._chroma.call(
                lambda: delta.get(
                    include=["embeddings", "documents", "metadatas"], limit=MERGE_BATCH
                ),
                "reading a delta",
            )
            if not got["ids"]:
                break
            # records written before 0.2 hold their text as the document, later ones none
            metas = got["metadatas"] or []
            documents = [
                d if d is not None else str((m or {}).get("text", ""))
                for d, m in zip(got["documents"] or [], metas)
            ]
            older = any(d is not None for d in got["documents"] or [])
            self._chroma.call(
                lambda: main.upsert(
                    ids=got["ids"],
                    embeddings=got["embeddings"],
                    metadatas=got["metadatas"],
                    documents=documents if older else None,
                ),
                "merging a delta",
            )
            self._chroma.call(lambda: delta.delete(ids=got["ids"]), "merging a delta")
        name, entry.delta = entry.delta, ""
        self._catalogue.publish(entry)
        self._chroma.delete(name)
        self.expire_pending(entry, grace)

    def _delete(self, name: str, ids: list[str]) -> None:
        """Delete records by id from collection `name` ("" names none), in batches."""
        if not name or not ids:
            return
        col = self._chroma.collection(name)
        for i in range(0, len(ids), 5000):
            part = ids[i : i + 5000]
            self._chroma.call(lambda: col.delete(ids=part), "deleting superseded records")

    def expire_pending(self, entry: Entry, grace: float) -> bool:
        """Delete the records superseded by generations whose grace period is over (and
        take them off the entry); False when none is due."""
        now = time.time()
        due = [p for p in entry.pending if now - p.get("at", 0) >= grace]
        if not due:
            return False
        later = [p for p in entry.pending if p not in due]
        for name, field, revived in (
            (entry.collection, "ids", "revived"),
            (entry.parents, "parents", "revived_parents"),
        ):
            # superseded by the due generations and not written again since, nor named by a
            # later generation (which decides their fate when its own grace is over)
            named_later = {i for p in later for i in (*p.get(field, ()), *p.get(revived, ()))}
            self._delete(name, sorted(superseded(due, field, revived) - named_later))
        entry.pending = later
        self._catalogue.publish(entry)
        return True
