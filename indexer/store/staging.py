"""One build of one (strategy, embedder) in progress, invisible to readers until published.

A *full* build writes a new physical collection (vectors of unchanged text come from the
embedding cache) and switches the catalogue to it. A *delta* build writes into the
live collection: records of the next generation, which readers ignore until the catalogue
entry says that generation is live; the records it supersedes stay readable until then
and are deleted after a grace period. Either way a kill at any point leaves the previous
version answering, and the next build removes what the killed one wrote.

Writes run in a background thread while the caller embeds the next batch; one write is
in flight at a time, so order and memory stay bounded.
"""

from __future__ import annotations

import contextlib
import shutil
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..version import VERSION
from ..errors import StoreError
from ..types import Chunk
from .catalogue import Catalogue
from .chroma import Chroma
from .delta import Deltas
from .entries import Entry, entry_key, name_prefix
from .layout import MANIFEST, write_json
from .physical import PhysicalCollections
from .records import chunk_metadata
from .side import SideFiles

LIVE_BATCH_DOCS = 64


class Staging:
    """The writer of one build: records, parent records, side files, then the switch.
    `Builds.begin` makes one (under the build lease)."""

    def __init__(self, chroma: Chroma, catalogue: Catalogue, side: SideFiles, deltas: Deltas,
                 physical: PhysicalCollections, strategy: str, embedder: str, meta: dict[str, Any],
                 old: Entry | None, full: bool, checkpoint: Callable[[str], None] | None = None) -> None:
        self._chroma, self._catalogue, self._side_files = chroma, catalogue, side
        self._deltas, self._physical = deltas, physical
        self.strategy, self.embedder = strategy, embedder
        self.old = old
        self.full = full or old is None
        self.generation = (old.generation + 1) if old else 1
        self.checkpoint = checkpoint or (lambda _name: None)
        self.meta = {"indexer_key": entry_key(strategy, embedder), "indexer_version": VERSION, **meta}
        if old is None or self.full:
            stamp = time.strftime("%Y%m%d%H%M%S") + uuid.uuid4().hex[:6]
            self.name = f"{name_prefix(strategy, embedder)}{stamp}"[:500]
            self._collection = chroma.create(self.name, self.meta)
            self.delta = ""
        else:
            self.name = old.collection
            # a large embedded collection's new records go into its delta collection
            # (`Deltas.target`), which `Deltas.compact` merges later
            self.delta = deltas.target(old)
            if self.delta and not old.delta:
                self._collection = chroma.create(self.delta, {**self.meta, "role": "delta"})
            else:
                self._collection = chroma.collection(self.delta or old.collection)
            deltas.writing(old)
        self.parents_name = "" if old is None or self.full else old.parents
        self._parents: Any = None
        self.retired: list[str] = []
        self.retired_parents: list[str] = []
        self.written: set[str] = set()  # a delta build's record ids (and parents'): some may be revived
        self.written_parents: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="indexer-write")
        self._inflight: Future[None] | None = None
        self.write_seconds = 0.0

    @property
    def _side(self) -> Path:
        return self._side_files.folder(self.name, self.generation)

    def side_path(self, name: str) -> Path:
        """Where this version's side file or folder `name` goes."""
        return self._side / name

    def save_side(self, name: str, writer: Callable[[Path], None]) -> None:
        """Save a side file or folder of this version: `writer(path)` writes it at the path
        the store gives it (what it writes there is the writer's business)."""
        writer(self._side / name)

    def write_manifest(self, data: Any) -> None:
        """Save the version's file manifest (JSON; read back with `SideFiles.read_manifest`)."""
        write_json(self._side / MANIFEST, data)

    # -- what is live --------------------------------------------------------------------
    def live(self, doc_ids: list[str], rows=None) -> dict[str, tuple[set[str], set[str]]]:
        """For a delta build: {doc_id: (live record ids, live parent ids)} of the given files
        — from the previous version's `rows` (`retrieval.rows.RowStore.of_documents`) when
        given, else by a metadata filter on the collection (tens of seconds at 1M)."""
        out: dict[str, tuple[set[str], set[str]]] = {d: (set(), set()) for d in doc_ids}
        if self.full or not doc_ids:
            return out
        pending, pending_parents = self.old.pending_ids, self.old.pending_parents
        if rows is not None:
            for doc, found in rows.of_documents(doc_ids).items():
                for cid, meta in found:
                    out[doc][0].add(cid)
                    if meta.get("parent_id") and meta["parent_id"] not in pending_parents:
                        out[doc][1].add(meta["parent_id"])
            return out
        for name in self.old.record_collections:
            col = self._chroma.collection(name)
            for i in range(0, len(doc_ids), LIVE_BATCH_DOCS):
                batch = doc_ids[i : i + LIVE_BATCH_DOCS]
                where = {"$and": [{"doc_id": {"$in": batch}}, {"gen": {"$lte": self.old.generation}}]}
                got = self._chroma.call(lambda: col.get(where=where, include=["metadatas"]), "reading records")
                for cid, meta in zip(got["ids"], got["metadatas"]):
                    if cid not in pending:
                        out[meta["doc_id"]][0].add(cid)
                        if meta.get("parent_id") and meta["parent_id"] not in pending_parents:
                            out[meta["doc_id"]][1].add(meta["parent_id"])
        return out

    # -- writing -------------------------------------------------------------------------
    def add(self, chunks: list[Chunk], vectors) -> list[dict[str, Any]]:
        """Write chunks with their vectors (in the background; the previous write is
        waited for first, so at most one is in flight). Returns their records' metadata."""
        if not chunks:
            return []
        self.wait()
        metas = [chunk_metadata(c, self.generation) for c in chunks]
        if not self.full:
            self.written.update(c.id for c in chunks)
        self._inflight = self._pool.submit(self._write, self._collection, chunks, vectors, metas)
        return metas

    def add_parents(self, chunks: list[Chunk]) -> None:
        """Parent records are fetched by id, never searched: a placeholder vector."""
        if not chunks:
            return
        self.wait()
        metas = [chunk_metadata(c, self.generation) for c in chunks]
        if not self.full:
            self.written_parents.update(c.id for c in chunks)
        self._inflight = self._pool.submit(self._write, self._parents_collection(), chunks, [[1.0]] * len(chunks),
                                           metas)

    def _parents_collection(self) -> Any:
        if self._parents is None:
            if not self.parents_name:
                self.parents_name = f"{self.name}-p" if self.full else f"{self.name}-p{uuid.uuid4().hex[:6]}"
                self._parents = self._chroma.create(self.parents_name, {**self.meta, "role": "parents"})
            else:
                self._parents = self._chroma.collection(self.parents_name)
        return self._parents

    def _write(self, collection, chunks: list[Chunk], vectors, metas) -> None:
        t0 = time.perf_counter()
        # upsert: a record superseded earlier and not deleted yet may be written again (its
        # file restored); it takes this generation and the metadata of now
        self._chroma.call(lambda: collection.upsert(
            ids=[c.id for c in chunks], embeddings=vectors, documents=[c.text for c in chunks], metadatas=metas,
        ), "writing records")
        self.write_seconds += time.perf_counter() - t0

    def wait(self) -> None:
        if self._inflight is not None:
            future, self._inflight = self._inflight, None
            future.result()
            self.checkpoint("embedding")

    def retire(self, ids, parent_ids=()) -> None:
        """A delta build: records the new version no longer has (deleted after publishing,
        once no reader can be on the previous version)."""
        self.retired.extend(ids)
        self.retired_parents.extend(parent_ids)

    # -- ending ------------------------------------------------------------------------
    def close(self) -> None:
        """Wait for the last write; raise its error, if any."""
        try:
            self.wait()
        finally:
            self._pool.shutdown(wait=True)

    def stamp(self, entry: Entry) -> Entry:
        """`entry` made this version (in place): its collections, generation and what it
        retired. `publish` stamps it; a build stamps it first to read the version (its
        side files, its records) before anyone else can."""
        entry.collection, entry.parents, entry.generation = self.name, self.parents_name, self.generation
        entry.delta = self.delta
        if self.full:
            entry.pending = []
        else:
            entry.pending = list(self.old.pending)  # each generation says what it retired (if only
            entry.pending.append({"at": time.time(), "gen": self.generation,  # nothing), so a reader can
                                  "ids": sorted(set(self.retired)),  # bring its BM25 index up to date
                                  "parents": sorted(set(self.retired_parents)),
                                  "revived": sorted(self.written & self.old.pending_ids),
                                  "revived_parents": sorted(self.written_parents & self.old.pending_parents)})
        return entry

    def publish(self, entry: Entry) -> None:
        """The switch: from here on readers see this version. It happens only if the
        catalogue still points where this build started from and its collections are still
        there: a drop under it (through a server by a builder whose lease lapsed, or a
        folder whose lock files do not lock) makes it fail, not report what nobody stores."""
        self.stamp(entry)
        self.checkpoint("publish")
        self._verify()
        self._catalogue.publish(entry)
        self._verify(entry)
        if not self.full:
            self._deltas.done_writing(self.old)
        self.checkpoint("published")
        if self.full and self.old is not None:
            self._physical.remove_version(self.old)

    def _verify(self, published: Entry | None = None) -> None:
        """Before the switch (`published` None) the catalogue must still name the version
        this build started from, after it the version it published, and its collections
        must still exist. Otherwise what it wrote is removed (unless another version
        lives in the same collection) and the build fails."""
        current = self._catalogue.find_or_none(self.strategy, self.embedder)
        base = published or self.old
        expected = (base.collection, base.generation) if base else None
        dangling = False
        if ((current.collection, current.generation) if current else None) == expected:
            gone = [n for n in (self.name, self.parents_name, self.delta) if n and not self._chroma.exists(n)]
            if not gone:
                return
            problem = f"lost its collection {gone[0]}"
            dangling = published is not None  # the entry it just published names a missing collection
            if published is not None:
                self._catalogue.forget(published, "removing a dangling entry")
        else:
            problem = "was dropped" if current is None else "was replaced by another build"
        if self.full or dangling or current is None or current.collection != self.name:
            self.abandon()
        raise StoreError(f"{self.strategy} ({self.embedder}) {problem} in {self._chroma.where} while this build ran "
                         "(by a drop or build that did not wait for its lease); nothing of this build is live and "
                         "what it wrote is removed: build it again")

    def abandon(self) -> None:
        """Undo what this build wrote (best effort: the next build repairs the rest)."""
        with contextlib.suppress(Exception):
            self.wait()
        self._pool.shutdown(wait=True)
        with contextlib.suppress(Exception):  # its collection may be gone already (dropped under it)
            if self.full:
                self._chroma.delete(self.name)
                if self.parents_name:
                    self._chroma.delete(self.parents_name)
            else:
                self._physical.drop_generations_after(self.old)
                self._deltas.done_writing(self.old)
        shutil.rmtree(self._side_files.folder(self.name) if self.full else self._side, ignore_errors=True)
        self._physical.collect_segments()
