"""The index: Chroma (embedded in the index folder, or a server) plus local side files.

Each (strategy, embedder) has one live physical collection (`ix-<strategy>--<embedder>--
<stamp>`) and a generation number, both recorded in a catalogue — a small collection in
the same Chroma — which readers resolve names through, so they only ever see published
versions. Side files (BM25 index, file manifest) sit in `<db>/indexes/<collection>/g<N>/`,
named by the collection and generation they belong to; a machine that lacks them rebuilds
them from the stored records.

The store owns every path in the index folder: the marker, Chroma's folder, the side
folders, the lock files, the caches. Use cases ask it for them (`side_path`,
`read_manifest`, `cache_dir`, `Staging.save_side`, `Staging.write_manifest`) and never
join a name to the folder themselves; what goes into a side folder (the BM25 format) is
not the store's business: it hands the writer a path. The folder's layout is in
`layout.py`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import CollectionNotFound, IndexerError, ReadOnlyIndex, StoreError
from ..settings import Settings, settings_for
from .catalog import Entry, entry_key, slug
from .chroma import Chroma, disk_full, translate, writable
from .layout import CACHE, CHROMA, LOCKS, MANIFEST, MARKER, SIDE
from .leases import file_lease, held_file_leases, held_server_leases, server_lease
from .delta import DELTA_FROM, WRITING, Deltas
from .reading import Reads
from .staging import GRACE, PREFIX, Staging

CATALOG = "indexer-catalog"
STORE_FORMAT = 2


class Store(Deltas, Reads):
    """The index: a Chroma client (embedded or server) plus the side-file folder."""

    delta_from = DELTA_FROM

    def __init__(self, settings: Settings | str | os.PathLike | None = None, chroma_url: str | None = None, *,
                 db: str | os.PathLike | None = None, create: bool = False) -> None:
        """`Store(settings)`, or for short `Store(db_folder[, chroma_url])`."""
        if settings is not None and not isinstance(settings, Settings):
            settings, db = None, settings
        self.settings = settings_for(settings, db=db, chroma_url=chroma_url)
        self.db = self.settings.db
        self.url = self.settings.chroma_url
        self._check_folder(create)
        self.chroma = Chroma(self.chroma_path, self.url, read_only_ok=not create)

    # -- opening -------------------------------------------------------------------------
    def _check_folder(self, create: bool) -> None:
        marker = self.db / MARKER
        if self.db.exists() and not self.db.is_dir():
            raise StoreError(f"{self.db} is a file, not an index folder; pass another --db")
        if self.db.is_dir() and not marker.exists() and any(not _our_leftover(p) for p in self.db.iterdir()):
            raise StoreError(f"{self.db} is not an indexer database (no {MARKER} in it); pass another --db")
        if not marker.exists():
            if not create and self.url is None:
                raise CollectionNotFound(f"no index at {self.db}; build one first: indexer build PATH")
            if create or self.url is not None:
                try:
                    self.db.mkdir(parents=True, exist_ok=True)
                    marker.write_text(json.dumps({"format": STORE_FORMAT, "tool": "indexer"}) + "\n")
                except OSError as exc:
                    raise StoreError(f"cannot create the index folder {self.db} ({exc.strerror}); "
                                     "pass a writable --db") from None
            return
        try:
            fmt = json.loads(marker.read_text()).get("format")
        except (OSError, ValueError):
            raise StoreError(f"{marker} is unreadable; the index folder looks damaged") from None
        if fmt != STORE_FORMAT:
            raise StoreError(f"{self.db} was written by another version of indexer (format {fmt}, this one reads "
                             f"{STORE_FORMAT}); rebuild it: move it away and run indexer build")
        if create and not writable(self.db):
            raise ReadOnlyIndex(f"{self.db} is read-only: building needs write access (querying does not); "
                                "build into a writable --db")

    @staticmethod
    def holds_index(db: str | os.PathLike) -> bool:
        """Whether `db` is an index folder already (its marker is there)."""
        return (Path(db) / MARKER).exists()

    @property
    def where(self) -> str:
        return self.url or str(self.db)

    @property
    def chroma_path(self) -> Path:
        """The embedded Chroma database's folder (unused with a server)."""
        return self.db / CHROMA

    @property
    def cache_dir(self) -> Path:
        """Where caches of this index live (the embedding cache, the LLM context cache):
        each names its own file in it."""
        return self.db / CACHE

    def fault(self, exc: BaseException, what: str = "") -> IndexerError:
        """The one-line error for a failure writing into this index (a full disk...)."""
        return translate(exc, str(self.db), what, self.db)

    # -- catalogue -----------------------------------------------------------------------
    @property
    def catalog(self):
        return self.chroma.get_or_create(CATALOG, {"indexer": "catalog"})

    def entries(self) -> list[Entry]:
        got = self.chroma.call(lambda: self.catalog.get(include=["documents"]), "reading the catalogue")
        out = [Entry.from_json(doc) for cid, doc in zip(got["ids"], got["documents"] or [])
               if doc and not cid.startswith(("lease:", WRITING))]
        return sorted(out, key=lambda e: (e.strategy, e.embedder))

    def entry(self, key: str) -> Entry | None:
        """One live entry by key (one small read: what long-lived readers poll)."""
        got = self.chroma.call(lambda: self.catalog.get(ids=[key], include=["documents"]), "reading the catalogue")
        docs = got.get("documents") or []
        return Entry.from_json(docs[0]) if docs and docs[0] else None

    def find(self, names: str | Sequence[str], embedder: str | None = None) -> Entry:
        """The live entry for a collection name, or for the first of several names that has
        one (`chunkers.collection_names` resolves a strategy spec to them: `fixed:size=100`
        finds `fixed-100`); with no embedder given, the only one there is (or the default
        embedder's when several exist)."""
        names = [n.strip() for n in ([names] if isinstance(names, str) else names)]
        entries = self.entries()
        strategy = names[0]
        matches = [e for e in entries if e.strategy == strategy]
        for other in names[1:]:
            if matches:
                break
            matches = [e for e in entries if e.strategy == other]
            strategy = other if matches else strategy
        if embedder is not None:
            exact = [e for e in matches if e.embedder == embedder]
            if exact:
                return exact[0]
            if matches:
                built = ", ".join(e.embedder for e in matches)
                raise CollectionNotFound(
                    f"strategy {strategy!r} was built with {built}, not {embedder}; query with --embedder "
                    f"{matches[0].embedder}, or build it: indexer build PATH --strategy {strategy} --embedder {embedder}"
                )
        elif len(matches) == 1:
            return matches[0]
        elif matches:
            for e in matches:
                if e.embedder == self.settings.embedder:
                    return e
            built = ", ".join(e.embedder for e in matches)
            raise CollectionNotFound(f"strategy {strategy!r} exists for several embedders ({built}); pass --embedder")
        known = sorted({e.strategy for e in self.entries()})
        have = f"built: {', '.join(known)}" if known else "nothing is built yet"
        raise CollectionNotFound(  # the spelling given last: `fixed:size=7` builds, `fixed-7` does not
            f"no collection for strategy {strategy!r} in {self.where} ({have}); "
            f"build it: indexer build PATH --strategy {names[-1]}"
        )

    def find_or_none(self, strategy: str, embedder: str) -> Entry | None:
        return self.entry(entry_key(strategy, embedder))

    def publish(self, entry: Entry) -> None:
        """Make `entry` the live version for its key: one upsert, the switch point."""
        self.chroma.call(lambda: self.catalog.upsert(
            ids=[entry.key], embeddings=[[0.0]], documents=[entry.to_json()],
            metadatas=[{"kind": "entry", "strategy": entry.strategy, "embedder": entry.embedder}],
        ), "publishing a build")

    def save_search(self, strategy: str, embedder: str, settings: dict[str, Any] | None) -> Entry:
        """Store (or, with None, forget) a collection's default search settings: under the
        build lease, on the live entry, so a build running now keeps them."""
        with self.lease(strategy, embedder, doing="saving search settings"):
            entry = self.find_or_none(strategy, embedder)
            if entry is None:
                raise CollectionNotFound(f"no collection for strategy {strategy!r} ({embedder}) in {self.where}")
            if settings:
                entry.extra["search"] = settings
            else:
                entry.extra.pop("search", None)
            self.publish(entry)
        return entry

    # -- builds --------------------------------------------------------------------------
    def lease(self, strategy: str, embedder: str, wait: bool = True, on_wait=None, doing: str = "building",
              action: str = ""):
        """An exclusive build lease: a lock file in the index folder, or with a Chroma
        server a lease in the server's catalogue (so builders on other machines wait too).
        Whoever takes it writes into the index (`doing`, for the message when the folder is
        read-only); `action` names what a caller other than a build wants (`drop`), for the
        messages when a build holds the lease."""
        if self.url:
            return server_lease(self.catalog, self.chroma, entry_key(strategy, embedder), strategy, embedder,
                                wait, on_wait, self.settings.lease_ttl, action)
        self.require_writable(doing)
        return file_lease(self.db / LOCKS, strategy, embedder, self.where, wait, on_wait, action)

    def running_builds(self, names: Sequence[str],
                       embedder: str | None = None) -> list[tuple[str, str]]:
        """(strategy, embedder) of each build of one of `names` (of `embedder`, if given)
        holding its lease now."""
        if self.url:
            leases = held_server_leases(self.catalog, self.chroma)
            return [(r["strategy"], r["embedder"]) for r in leases
                    if r.get("strategy") in names and embedder in (None, r.get("embedder"))]
        return [(name, embedder or held) for name in names
                for held in held_file_leases(self.db / LOCKS, name)
                if embedder is None or slug(embedder) == held]

    def require_writable(self, doing: str) -> None:
        """Refuse, in one line, to write into a read-only index folder (before any write)."""
        if not self.url and self.db.is_dir() and not writable(self.db):
            raise ReadOnlyIndex(f"{self.db} is read-only: {doing} needs write access (query, eval and list do not); "
                                "run it where the index is writable, or remount it read-write")
        if not self.url and self.chroma.read_only_ok:
            self.chroma.client  # opened now: on a full disk, a reader's is a private copy
            if self.chroma.full_disk_copy:
                raise disk_full(self.where, self.db)  # what is written into the copy would be lost

    def begin(self, strategy: str, embedder: str, meta: dict[str, Any], old: Entry | None, full: bool,
              checkpoint=None) -> Staging:
        """Start writing a new version (hold the lease)."""
        return Staging(self, strategy, embedder, meta, old, full, checkpoint=checkpoint)

    def prepare(self, strategy: str, embedder: str, grace: float = GRACE) -> tuple[Entry | None, list[str]]:
        """Before a build (holding the lease): remove what killed builds left (collections
        never published, records of an unpublished generation) and superseded records
        whose grace period is over. Returns the live entry and what was removed."""
        removed = self._leftover_collections(strategy, embedder)
        for name in removed:
            self.chroma.delete(name)
            shutil.rmtree(self.side_dir(name), ignore_errors=True)
        entry = self.find_or_none(strategy, embedder)
        removed += self._remove_stale_side(strategy, embedder, entry)
        if entry is not None and self._was_writing(entry):
            if self.drop_generations_after(entry):
                removed.append(f"{entry.collection} records after generation {entry.generation}")
            self.done_writing(entry)
        if entry is not None and not entry.delta:  # a delta's superseded records go when it is merged
            if self._expire_pending(entry, grace):
                removed.append(f"{entry.collection} superseded records")
            self.prune_side(entry)
        return entry, removed

    def drop_generations_after(self, entry: Entry) -> int:
        """Delete records newer than the entry's generation (an unpublished build's)."""
        count = 0
        for name in (entry.collection, entry.parents, entry.delta):
            if not name:
                continue
            col = self.chroma.collection(name)
            where = {"gen": {"$gt": entry.generation}}
            got = self.chroma.call(lambda: col.get(where=where, include=[]), "reading records")
            if got["ids"]:
                self.chroma.call(lambda: col.delete(ids=got["ids"]), "deleting records")
                count += len(got["ids"])
        return count

    def _leftover_collections(self, strategy: str, embedder: str) -> list[str]:
        """Physical collections of this key that are not live: what a killed build left."""
        key = entry_key(strategy, embedder)
        live = self.find_or_none(strategy, embedder)
        keep = {live.collection, live.parents, live.delta} if live else set()
        return sorted(name for name, meta in self.chroma.listing()
                      if name.startswith(PREFIX) and name not in keep and meta.get("indexer_key") == key)

    def remove_collections(self, entry: Entry) -> None:
        """Delete a replaced version's collections and side files (readers still holding
        them reopen the live version on their next search)."""
        self.remove_physical([entry.collection, entry.parents, entry.delta])

    def remove_physical(self, names) -> None:
        """Delete physical collections and their side files."""
        for name in names:
            if name:
                self.chroma.delete(name)
                shutil.rmtree(self.side_dir(name), ignore_errors=True)

    def drop(self, names: str | Sequence[str], embedder: str | None = None, wait: bool = True,
             on_wait=None) -> Entry:
        """Remove a collection (found by its names as in `find`), its BM25 index and
        manifest, and whatever builds left; a build of it running now is waited for (or,
        without `wait`, LockTimeout), and what is dropped is the version live once it is
        done — a first build's too, though nothing of it is published yet. Returns that
        version's entry."""
        names = [names] if isinstance(names, str) else list(names)
        try:
            found = self.find(names, embedder)
        except CollectionNotFound:
            running = self.running_builds(names, embedder)
            if not running:
                raise
            with self.lease(*running[0], wait, on_wait, doing="dropping a collection", action="drop"):
                pass  # its first build is done (published, or failed: then find says nothing is there)
            found = self.find(names, embedder)
        strategy, embedder = found.strategy, found.embedder
        with self.lease(strategy, embedder, wait, on_wait, doing="dropping a collection", action="drop"):
            entry = self.find_or_none(strategy, embedder)
            if entry is None:
                raise CollectionNotFound(f"no collection for strategy {strategy!r} ({embedder}) in {self.where}")
            self.chroma.call(lambda: self.catalog.delete(ids=[entry.key]), "dropping a collection")
            self.remove_collections(entry)
            self.remove_physical(self._leftover_collections(strategy, embedder))
        self.collect_segments()
        return entry

    def collect_segments(self) -> None:
        """Embedded database: remove the vector-index folders Chroma leaves of deleted
        collections (chroma-core/chroma#5259)."""
        if not self.url:
            from .gc import GcReport, remove_orphan_segments

            with contextlib.suppress(OSError, StoreError):
                remove_orphan_segments(self.chroma_path, GcReport())

    def collect_after_full_build(self) -> None:
        """Embedded database: what Chroma leaves of a version a full build replaced (its
        vector-segment folders; a catalogue grown past its baseline is compacted)."""
        if not self.url:
            from .gc import GcReport, compact_if_grown, remove_orphan_segments

            report = GcReport()
            remove_orphan_segments(self.chroma_path, report)
            compact_if_grown(self.chroma_path, report)

    def discard_if_empty(self) -> None:
        """Remove an index folder that holds nothing published (a failed first build)."""
        with contextlib.suppress(Exception):
            if not self.url and not self.entries():
                self.chroma.close()
                shutil.rmtree(self.db, ignore_errors=True)

    # -- side files ----------------------------------------------------------------------
    @property
    def side_root(self) -> Path:
        return self.db / SIDE

    def side_dir(self, collection: str, generation: int | None = None) -> Path:
        base = self.side_root / collection
        return base if generation is None else base / f"g{generation}"

    def side_path(self, entry: Entry, name: str) -> Path:
        """Where the side file or folder `name` of a live version is (it may not exist: a
        machine that did not build the version)."""
        return self.side_dir(entry.collection, entry.generation) / name

    def read_manifest(self, entry: Entry) -> Any:
        """The JSON a version's build saved with `Staging.write_manifest` (None when it is
        missing or unreadable)."""
        try:
            return json.loads(self.side_path(entry, MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _remove_stale_side(self, strategy: str, embedder: str, live: Entry | None) -> list[str]:
        """This machine's side folders of a key's versions that are no longer live (with a
        server, another machine may have dropped or replaced them)."""
        base, prefix = self.side_root, f"{PREFIX}{slug(strategy)}--{slug(embedder)}--"
        keep = {live.collection, live.parents} if live else set()
        stale = [p for p in base.iterdir() if p.name.startswith(prefix) and p.name not in keep] if base.is_dir() else []
        for folder in stale:
            shutil.rmtree(folder, ignore_errors=True)
        return [f"side files of {folder.name} (not live)" for folder in stale]

    def retired_since(self, entry: Entry, generation: int) -> set[str] | None:
        """The ids the generations after `generation` up to the entry's retired, or None
        when the catalogue no longer says for each of them (their grace period is over)."""
        said = {p.get("gen"): p for p in entry.pending}
        if any(g not in said for g in range(generation + 1, entry.generation + 1)):
            return None
        return {i for g in range(generation + 1, entry.generation + 1) for i in said[g].get("ids", ())}

    def earlier_side_paths(self, entry: Entry, name: str) -> list[tuple[int, Path]]:
        """(generation, path) of the side file or folder `name` of each generation of the
        entry's collection before the live one that this machine has, newest first."""
        base = self.side_dir(entry.collection)
        names = [p.name for p in base.iterdir()] if base.is_dir() else []
        generations = sorted((int(n[1:]) for n in names if n.startswith("g") and n[1:].isdigit()), reverse=True)
        return [(g, self.side_dir(entry.collection, g) / name) for g in generations if g < entry.generation]

    def prune_side(self, entry: Entry) -> None:
        """Keep the live generation's side files and the one before (a reader may still be
        on it); older ones go."""
        base = self.side_dir(entry.collection)
        if not base.is_dir():
            return
        for folder in base.iterdir():
            if folder.name.startswith("g") and folder.name[1:].isdigit() and int(folder.name[1:]) < entry.generation - 1:
                shutil.rmtree(folder, ignore_errors=True)

def _our_leftover(path: Path) -> bool:
    """An embedding cache a failed first build could not remove (another process held it
    open): a folder holding only it is still ours to build in."""
    return path.name == CACHE and path.is_dir() and all(p.name.startswith("embeddings.sqlite") for p in path.iterdir())
