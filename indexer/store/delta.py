"""A large collection's delta: where incremental builds write, and its merge.

Chroma 1.5 loads a collection's whole HNSW index on the first read or write of a process:
at a million records that is seconds that every incremental build of one edited file
would pay. So once a version holds `DELTA_FROM` records, incremental builds write into a
companion collection (`Entry.delta`, `<collection>-d`), which reads cover beside the
collection (`reading.Reads`), and a later build merges it in once it (or what it
superseded) passes `COMPACT_SHARE` of the collection. A build writing into a delta marks
it in the catalogue first (`writing`), so the next build looks for a killed build's
records only when one was left.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..errors import IndexerError
from .catalog import Entry, superseded
from .staging import GRACE

DELTA_FROM = 50_000  # records from which incremental builds write into a delta collection
COMPACT_SHARE = 0.05  # ...merged into the collection once it (or what it superseded) passes this share
MERGE_BATCH = 2000
WRITING = "writing:"  # catalogue ids marking a delta build's writes in progress


class Deltas:
    """Mixed into `Store`, whose `chroma`, `catalog` and `publish` it uses."""

    chroma: Any
    catalog: Any

    def writing(self, entry: Entry) -> None:
        """Say in the catalogue, before a delta build writes records of the next generation
        into `entry`'s collection, that it does — until it publishes or undoes them
        (`done_writing`). `prepare` looks for an unpublished generation's records only when
        this mark was left (a killed build): looking costs a metadata scan of the collection,
        seconds at a million records, which every build paid before."""
        self.chroma.call(lambda: self.catalog.upsert(
            ids=[WRITING + entry.key], embeddings=[[0.0]], documents=[json.dumps({"generation": entry.generation + 1})],
            metadatas=[{"kind": "writing"}]), "writing the catalogue")

    def done_writing(self, entry: Entry) -> None:
        self.chroma.call(lambda: self.catalog.delete(ids=[WRITING + entry.key]), "writing the catalogue")

    def _was_writing(self, entry: Entry) -> bool:
        got = self.chroma.call(lambda: self.catalog.get(ids=[WRITING + entry.key], include=[]), "reading the catalogue")
        return bool(got["ids"])

    def merge_delta(self, entry: Entry, on_note=lambda _msg: None, grace: float = GRACE) -> Entry:
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
            on_note(f"could not merge {name} into {entry.collection} ({exc}); its records stay there and "
                    f"searches read both: indexer build --full rebuilds the collection")
            return entry
        on_note(f"merged the delta collection {name} into {entry.collection}")
        return entry

    def _delta_due(self, entry: Entry) -> bool:
        delta = self.chroma.call(self.chroma.collection(entry.delta).count, "counting a delta")
        return max(delta, len(entry.pending_ids)) > COMPACT_SHARE * max(entry.chunks, 1)

    def compact(self, entry: Entry, grace: float = GRACE) -> None:
        """Merge a version's delta collection into its collection (copy, then switch the
        entry, then drop the delta: a reader on the entry before reads both and sees each
        record once) and delete the records superseded since, once their grace is over.
        What every incremental build of a large collection would otherwise pay: Chroma
        loads the collection's whole HNSW index on the first read or write."""
        main, delta = self.chroma.collection(entry.collection), self.chroma.collection(entry.delta)
        while True:  # page from the start: each page is deleted from the delta once copied
            got = self.chroma.call(lambda: delta.get(include=["embeddings", "documents", "metadatas"],
                                                     limit=MERGE_BATCH), "reading a delta")
            if not got["ids"]:
                break
            self.chroma.call(lambda: main.upsert(ids=got["ids"], embeddings=got["embeddings"],
                                                 documents=got["documents"], metadatas=got["metadatas"]),
                             "merging a delta")
            self.chroma.call(lambda: delta.delete(ids=got["ids"]), "merging a delta")
        name, entry.delta = entry.delta, ""
        self.publish(entry)
        self.chroma.delete(name)
        self._expire_pending(entry, grace)

    def _expire_pending(self, entry: Entry, grace: float) -> bool:
        now = time.time()
        due = [p for p in entry.pending if now - p.get("at", 0) >= grace]
        if not due:
            return False
        later = [p for p in entry.pending if p not in due]
        for name, field, revived in ((entry.collection, "ids", "revived"), (entry.parents, "parents", "revived_parents")):
            # superseded by the due generations and not written again since, nor named by a
            # later generation (which decides their fate when its own grace is over)
            named_later = {i for p in later for i in (*p.get(field, ()), *p.get(revived, ()))}
            ids = sorted(superseded(due, field, revived) - named_later)
            if name and ids:
                col = self.chroma.collection(name)
                for i in range(0, len(ids), 5000):
                    part = ids[i : i + 5000]
                    self.chroma.call(lambda: col.delete(ids=part), "deleting superseded records")
        entry.pending = later
        self.publish(entry)
        return True
