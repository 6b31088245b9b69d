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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..version import VERSION
from ..errors import StoreError
from ..types import Chunk
from .catalog import Entry, entry_key, slug
from .layout import MANIFEST, write_json
from .records import chunk_metadata

PREFIX = "ix-"
GRACE = 60.0  # seconds a superseded record stays readable for readers still on the previous version
LIVE_BATCH_DOCS = 64


class Staging:
    def __init__(self, store, strategy: str, embedder: str, meta: dict[str, Any], old: Entry | None, full: bool,
                 timer=None, checkpoint=None) -> None:
        self.store = store
        self.chroma = store.chroma
        self.strategy, self.embedder = strategy, embedder
        self.old = old
        self.full = full or old is None
        self.generation = (old.generation + 1) if old else 1
        self.timer = timer
        self.checkpoint = checkpoint or (lambda _name: None)
        self.meta = {"indexer_key": entry_key(strategy, embedder), "indexer_version": VERSION, **meta}
        if self.full:
            stamp = time.strftime("%Y%m%d%H%M%S") + uuid.uuid4().hex[:6]
            self.name = f"{PREFIX}{slug(strategy)}--{slug(embedder)}--{stamp}"[:500]
            self.collection = self.chroma.create(self.name, self.meta)
            self.delta = ""
        else:
            self.name = old.collection
            # a large embedded collection's new records go into its delta collection: writing
            # into the collection would load its whole HNSW index first (Chroma does, on any
            # read or write: 6-10 s at a million records; a server holds it loaded already);
            # `Store.compact` merges them later
            large = old.chunks >= store.delta_from and not store.url
            self.delta = old.delta or (f"{old.collection}-d" if large else "")
            if self.delta and not old.delta:
                self.collection = self.chroma.create(self.delta, {**self.meta, "role": "delta"})
            else:
                self.collection = self.chroma.collection(self.delta or old.collection)
            store.writing(old)
        self.parents_name = "" if self.full else old.parents
        self._parents = None
        self.retired: list[str] = []
        self.retired_parents: list[str] = []
        self.written: set[str] = set()  # a delta build's record ids (and parents'): some may be revived
        self.written_parents: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="indexer-write")
        self._inflight = None
        self.write_seconds = 0.0

    @property
    def _side(self) -> Path:
        return self.store.side_dir(self.name, self.generation)

    def side_path(self, name: str) -> Path:
        """Where this version's side file or folder `name` goes."""
        return self._side / name

    def save_side(self, name: str, writer: Callable[[Path], None]) -> None:
        """Save a side file or folder of this version: `writer(path)` writes it at the path
        the store gives it (what it writes there is the writer's business)."""
        writer(self._side / name)

    def write_manifest(self, data: Any) -> None:
        """Save the version's file manifest (JSON; read back with `Store.read_manifest`)."""
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
        for name in self.store.record_collections(self.old):
            col = self.chroma.collection(name)
            for i in range(0, len(doc_ids), LIVE_BATCH_DOCS):
                batch = doc_ids[i : i + LIVE_BATCH_DOCS]
                where = {"$and": [{"doc_id": {"$in": batch}}, {"gen": {"$lte": self.old.generation}}]}
                got = self.chroma.call(lambda: col.get(where=where, include=["metadatas"]), "reading records")
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
        self._inflight = self._pool.submit(self._write, self.collection, chunks, vectors, metas)
        return metas

    def add_parents(self, chunks: list[Chunk]) -> None:
        """Parent records are fetched by id, never searched: a placeholder vector."""
        if not chunks:
            return
        self.wait()
        metas = [chunk_metadata(c, self.generation) for c in chunks]
        if not self.full:
            self.written_parents.update(c.id for c in chunks)
        self._inflight = self._pool.submit(self._write, self.parents_collection(), chunks, [[1.0]] * len(chunks),
                                           metas)

    def parents_collection(self):
        if self._parents is None:
            if not self.parents_name:
                self.parents_name = f"{self.name}-p" if self.full else f"{self.name}-p{uuid.uuid4().hex[:6]}"
                self._parents = self.chroma.create(self.parents_name, {**self.meta, "role": "parents"})
            else:
                self._parents = self.chroma.collection(self.parents_name)
        return self._parents

    def _write(self, collection, chunks: list[Chunk], vectors, metas) -> None:
        t0 = time.perf_counter()
        # upsert: a record superseded earlier and not deleted yet may be written again (its
        # file restored); it takes this generation and the metadata of now
        self.chroma.call(lambda: collection.upsert(
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

    def publish(self, entry: Entry) -> None:
        """The switch: from here on readers see this version. It happens only if the
        catalogue still points where this build started from and its collections are still
        there: a drop under it (through a server by a builder whose lease lapsed, or a
        folder whose lock files do not lock) makes it fail, not report what nobody stores."""
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
        self.checkpoint("publish")
        self._verify()
        self.store.publish(entry)
        self._verify(entry)
        if not self.full:
            self.store.done_writing(self.old)
        self.checkpoint("published")
        if self.full and self.old is not None:
            self.store.remove_collections(self.old)

    def _verify(self, published: Entry | None = None) -> None:
        """Before the switch (`published` None) the catalogue must still name the version
        this build started from, after it the version it published, and its collections
        must still exist. Otherwise what it wrote is removed (unless another version
        lives in the same collection) and the build fails."""
        current = self.store.find_or_none(self.strategy, self.embedder)
        base = published or self.old
        expected = (base.collection, base.generation) if base else None
        dangling = False
        if ((current.collection, current.generation) if current else None) == expected:
            gone = [n for n in (self.name, self.parents_name, self.delta) if n and not self.chroma.exists(n)]
            if not gone:
                return
            problem = f"lost its collection {gone[0]}"
            dangling = published is not None  # the entry it just published names a missing collection
            if dangling:
                self.chroma.call(lambda: self.store.catalog.delete(ids=[published.key]), "removing a dangling entry")
        else:
            problem = "was dropped" if current is None else "was replaced by another build"
        if self.full or dangling or current is None or current.collection != self.name:
            self.abandon()
        raise StoreError(f"{self.strategy} ({self.embedder}) {problem} in {self.store.where} while this build ran "
                         "(by a drop or build that did not wait for its lease); nothing of this build is live and "
                         "what it wrote is removed: build it again")

    def abandon(self) -> None:
        """Undo what this build wrote (best effort: the next build repairs the rest)."""
        with contextlib.suppress(Exception):
            self.wait()
        self._pool.shutdown(wait=True)
        with contextlib.suppress(Exception):  # its collection may be gone already (dropped under it)
            if self.full:
                self.chroma.delete(self.name)
                if self.parents_name:
                    self.chroma.delete(self.parents_name)
            else:
                self.store.drop_generations_after(self.old)
                self.store.done_writing(self.old)
        shutil.rmtree(self.store.side_dir(self.name) if self.full else self._side, ignore_errors=True)
        self.store.collect_segments()
