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
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import StoreError
from ..types import Chunk
from ..version import VERSION
from .catalogue import Catalogue
from .chroma import Chroma, placeholders
from .delta import Deltas
from .entries import Entry, entry_key, name_prefix
from .layout import MANIFEST, write_json
from .manifest import Manifest
from .physical import PhysicalCollections
from .records import RecordMeta, all_of, chunk_metadata, documents_filter, generation_filter
from .side import SideFile, SideFiles

if TYPE_CHECKING:
    import numpy as np
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Metadata, PyEmbedding

LIVE_BATCH_DOCS = 64

Live = dict[str, tuple[set[str], set[str]]]  # {doc_id: (live record ids, live parent ids)}


class DocumentRows(Protocol):
    """The previous version's rows by document (`retrieval.rows.RowStore`)."""

    def of_documents(
        self, doc_ids: list[str]
    ) -> Mapping[str, Sequence[tuple[str, RecordMeta]]]: ...


class Staging:
    """The writer of one build: records, parent records, side files, then the switch.
    `Builds.begin` makes one (under the build lease)."""

    def __init__(
        self,
        chroma: Chroma,
        catalogue: Catalogue,
        side: SideFiles,
        deltas: Deltas,
        physical: PhysicalCollections,
        strategy: str,
        embedder: str,
        meta: dict[str, Any],
        old: Entry | None,
        full: bool,
        on_stage: Callable[[str], None] | None = None,
    ) -> None:
        self._chroma, self._catalogue, self._side_files = chroma, catalogue, side
        self._deltas, self._physical = deltas, physical
        self.strategy, self.embedder = strategy, embedder
        self.old = old
        self.full = full or old is None
        self.generation = (old.generation + 1) if old else 1
        self.on_stage = on_stage or (lambda _name: None)
        self.meta = {
            "indexer_key": entry_key(strategy, embedder),
            "indexer_version": VERSION,
            **meta,
        }
        if old is None or self.full:
            self._collection = self._start_full()
        else:
            self._collection = self._start_delta(old)
        self.parents_name = "" if old is None or self.full else old.parents
        self._parents: Collection | None = None
        self.retired: list[str] = []
        self.retired_parents: list[str] = []
        # a delta build's record ids (and parents'): some may be revived
        self.written: set[str] = set()
        self.written_parents: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="indexer-write")
        self._inflight: Future[None] | None = None
        self.write_seconds = 0.0

    def _start_full(self) -> Collection:
        """A full build: a new physical collection, named by the time and a random stamp."""
        stamp = time.strftime("%Y%m%d%H%M%S") + uuid.uuid4().hex[:6]
        self.name = f"{name_prefix(self.strategy, self.embedder)}{stamp}"[:500]
        self.delta = ""
        return self._chroma.create(self.name, self.meta)

    def _start_delta(self, old: Entry) -> Collection:
        """A delta build: the live collection, or for a large embedded one its delta
        collection (`Deltas.target`), which `Deltas.compact` merges later; marked as
        being written."""
        self.name = old.collection
        self.delta = self._deltas.target(old)
        if self.delta and not old.delta:
            collection = self._chroma.create(self.delta, {**self.meta, "role": "delta"})
        else:
            collection = self._chroma.collection(self.delta or old.collection)
        self._deltas.writing(old)
        return collection

    @property
    def _previous(self) -> Entry:
        """The version a delta build adds a generation to (a build without one is full)."""
        assert self.old is not None, "only a delta build reads its previous version"
        return self.old

    @property
    def _side(self) -> Path:
        return self._side_files.folder(self.name, self.generation)

    def side_path(self, name: str) -> Path:
        """Where this version's side file or folder `name` goes."""
        return self._side / name

    def save_sides(self, sides: Iterable[SideFile]) -> None:
        """Save side files of this version (`SideFile`: the BM25 index, the rows, the
        exact-match index), each at the path its name has in the version's side folder."""
        for side in sides:
            self.save_side(side.SIDE, side.save)

    def save_side(self, name: str, writer: Callable[[Path], None]) -> None:
        """Save a side file or folder of this version: `writer(path)` writes it at the path
        the store gives it (what it writes there is the writer's business)."""
        writer(self._side / name)

    def write_manifest(self, manifest: Manifest | dict[str, Any]) -> None:
        """Save the version's file manifest (read back with `SideFiles.manifest`; a tool
        that writes its own, as `bench/query_latency.py` does, may pass the JSON)."""
        data = manifest.to_json() if isinstance(manifest, Manifest) else manifest
        write_json(self._side / MANIFEST, data)

    # -- what is live --------------------------------------------------------------------
    def live(self, doc_ids: list[str], rows: DocumentRows | None = None) -> Live:
        """For a delta build: {doc_id: (live record ids, live parent ids)} of the given files
        — from the previous version's `rows` (`retrieval.rows.RowStore.of_documents`) when
        given, else by a metadata filter on the collection (tens of seconds at 1M)."""
        out: Live = {d: (set(), set()) for d in doc_ids}
        if self.full or not doc_ids:
            return out
        old = self._previous
        pending, pending_parents = old.pending_ids, old.pending_parents
        if rows is not None:
            return _live_from_rows(out, rows.of_documents(doc_ids), pending_parents)
        for name in old.record_collections:
            for cid, meta in self._records_of(name, doc_ids):
                if cid not in pending:
                    _add_live(out[meta["doc_id"]], cid, meta, pending_parents)
        return out

    def _records_of(self, name: str, doc_ids: list[str]) -> Iterable[tuple[str, RecordMeta]]:
        """(id, metadata) of the records of these documents in collection `name` up to the
        previous version's generation, in batches of documents."""
        col = self._chroma.collection(name)
        for i in range(0, len(doc_ids), LIVE_BATCH_DOCS):
            batch = doc_ids[i : i + LIVE_BATCH_DOCS]
            where = all_of(
                documents_filter(batch), generation_filter("$lte", self._previous.generation)
            )
            got = self._chroma.call(
                lambda: col.get(where=where, include=["metadatas"]), "reading records"
            )
            yield from zip(got["ids"], got["metadatas"] or [])

    # -- writing -------------------------------------------------------------------------
    def add(self, chunks: list[Chunk], vectors: np.ndarray) -> list[dict[str, Any]]:
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
        self._inflight = self._pool.submit(
            self._write, self._parents_collection(), chunks, placeholders(len(chunks), 1.0), metas
        )

    def _parents_collection(self) -> Collection:
        if self._parents is None:
            if not self.parents_name:
                self.parents_name = (
                    f"{self.name}-p" if self.full else f"{self.name}-p{uuid.uuid4().hex[:6]}"
                )
                self._parents = self._chroma.create(
                    self.parents_name, {**self.meta, "role": "parents"}
                )
            else:
                self._parents = self._chroma.collection(self.parents_name)
        return self._parents

    def _write(
        self,
        collection: Collection,
        chunks: list[Chunk],
        vectors: np.ndarray | list[PyEmbedding],
        records: list[dict[str, Any]],
    ) -> None:
        t0 = time.perf_counter()
        metas: list[Metadata] = list(records)
        # upsert: a record superseded earlier and not deleted yet may be written again (its
        # file restored); it takes this generation and the metadata of now
        # the text is metadata, not a document (`records`)
        self._chroma.call(
            lambda: collection.upsert(
                ids=[c.id for c in chunks], embeddings=vectors, metadatas=metas
            ),
            "writing records",
        )
        self.write_seconds += time.perf_counter() - t0

    def wait(self) -> None:
        if self._inflight is not None:
            future, self._inflight = self._inflight, None
            future.result()
            self.on_stage("embedding")

    def retire(self, ids: Iterable[str], parent_ids: Iterable[str] = ()) -> None:
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
        entry.collection, entry.parents, entry.generation = (
            self.name,
            self.parents_name,
            self.generation,
        )
        entry.delta = self.delta
        if self.full:
            entry.pending = []
        else:
            old = self._previous
            entry.pending = list(old.pending)  # each generation says what it retired (if only
            entry.pending.append(
                {
                    "at": time.time(),
                    "gen": self.generation,  # nothing), so a reader can
                    "ids": sorted(set(self.retired)),  # bring its BM25 index up to date
                    "parents": sorted(set(self.retired_parents)),
                    "revived": sorted(self.written & old.pending_ids),
                    "revived_parents": sorted(self.written_parents & old.pending_parents),
                }
            )
        return entry

    def publish(self, entry: Entry) -> None:
        """The switch: from here on readers see this version. It happens only if the
        catalogue still points where this build started from and its collections are still
        there: a drop under it (through a server by a builder whose lease lapsed, or a
        folder whose lock files do not lock) makes it fail, not report what nobody stores."""
        self.stamp(entry)
        self.on_stage("publish")
        self._verify()
        self._catalogue.publish(entry)
        self._verify(entry)
        if not self.full:
            self._deltas.done_writing(self._previous)
        self.on_stage("published")
        if self.full and self.old is not None:
            self._physical.remove_version(self.old)

    def _verify(self, published: Entry | None = None) -> None:
        """Before the switch (`published` None) the catalogue must still name the version
        this build started from, after it the version it published, and its collections
        must still exist. Otherwise what it wrote is removed (unless another version
        lives in the same collection) and the build fails."""
        current = self._catalogue.find_or_none(self.strategy, self.embedder)
        dangling = False
        if _version(current) == _version(published or self.old):
            gone = self._gone()
            if not gone:
                return
            problem = f"lost its collection {gone[0]}"
            # the entry it just published names a missing collection
            dangling = published is not None
            if published is not None:
                self._catalogue.forget(published, "removing a dangling entry")
        else:
            problem = "was dropped" if current is None else "was replaced by another build"
        if not self._shares_collection(current, dangling):
            self.abandon()
        raise StoreError(
            f"{self.strategy} ({self.embedder}) {problem} in {self._chroma.where} while this build ran "
            "(by a drop or build that did not wait for its lease); nothing of this build is live and "
            "what it wrote is removed: build it again"
        )

    def _gone(self) -> list[str]:
        """This build's collections that no longer exist."""
        return [
            n
            for n in (self.name, self.parents_name, self.delta)
            if n and not self._chroma.exists(n)
        ]

    def _shares_collection(self, current: Entry | None, dangling: bool) -> bool:
        """Does the version live now (`current`) still hold what this delta build wrote
        into (its collection)? Then nothing is removed."""
        return not (self.full or dangling or current is None or current.collection != self.name)

    def abandon(self) -> None:
        """Undo what this build wrote (best effort: the next build repairs the rest)."""
        with contextlib.suppress(Exception):
            self.wait()
        self._pool.shutdown(wait=True)
        # its collection may be gone already (dropped under it)
        with contextlib.suppress(Exception):
            if self.full:
                self._chroma.delete(self.name)
                if self.parents_name:
                    self._chroma.delete(self.parents_name)
            else:
                self._physical.drop_generations_after(self._previous)
                self._deltas.done_writing(self._previous)
        shutil.rmtree(
            self._side_files.folder(self.name) if self.full else self._side, ignore_errors=True
        )
        self._physical.collect_segments()


def _version(entry: Entry | None) -> tuple[str, int] | None:
    """What names a version: its collection and generation."""
    return (entry.collection, entry.generation) if entry else None


def _live_from_rows(
    out: Live, rows: Mapping[str, Sequence[tuple[str, RecordMeta]]], pending_parents: set[str]
) -> Live:
    """`Staging.live` from the previous version's rows by document (live records only)."""
    for doc, found in rows.items():
        for cid, meta in found:
            _add_live(out[doc], cid, meta, pending_parents)
    return out


def _add_live(
    found: tuple[set[str], set[str]], cid: str, meta: RecordMeta, pending_parents: set[str]
) -> None:
    """Count a live record, and its parent unless that was superseded."""
    found[0].add(cid)
    if meta.get("parent_id") and meta["parent_id"] not in pending_parents:
        found[1].add(meta["parent_id"])
