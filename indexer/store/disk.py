"""What an index folder holds on disk, per collection (`indexer list`) and shared.

A collection's bytes: its side files (BM25, rows, exact-match index, manifest: every
generation this machine keeps), its Chroma vector index folders (its own, its delta's,
its parents'), and its share of Chroma's database file, which every collection shares:
the file's bytes divided by the records each collection holds in it (an estimate: the
database keeps no account per collection). The embedding cache is shared by every
collection of the index (each distinct text once) and is counted apart. With a Chroma
server only the side files are on this machine.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .entries import Entry
from .layout import CACHE, CHROMA, SIDE

DATABASE = "chroma.sqlite3"  # Chroma's own file in its folder
_SEGMENTS = (
    "SELECT c.name, s.id, s.scope, "
    "(SELECT count(*) FROM embeddings e WHERE e.segment_id = s.id) "
    "FROM segments s JOIN collections c ON s.collection = c.id"
)


@dataclass(kw_only=True)
class DiskUse:
    """Bytes of one collection: `records` (its share of Chroma's database, None with a
    server), `vectors` (Chroma's vector index folders, None with a server) and `side`."""

    records: int | None
    vectors: int | None
    side: int

    @property
    def total(self) -> int:
        return (self.records or 0) + (self.vectors or 0) + self.side

    def to_dict(self) -> dict[str, int | None]:
        return {
            "records": self.records,
            "vectors": self.vectors,
            "side": self.side,
            "total": self.total,
        }


class Disk:
    """The disk use of an index folder's collections (`db`; `local`: Chroma is embedded
    in it), read once when made."""

    def __init__(self, db: Path, local: bool = True) -> None:
        self.db = db
        self.local = local
        self.records: dict[str, int] = {}  # collection -> records in Chroma's database
        self.segments: dict[str, list[str]] = {}  # collection -> its vector segment folders
        database = db / CHROMA / DATABASE
        self.database = file_bytes(database) if local else 0
        if local and database.is_file():
            self._read(database)

    def _read(self, database: Path) -> None:
        try:
            uri = f"{database.absolute().as_uri()}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
                rows = conn.execute(_SEGMENTS).fetchall()
        except sqlite3.Error:
            return  # unreadable now (a build writing?): no database share, sizes still
        for name, segment, scope, count in rows:
            if scope == "VECTOR":
                self.segments.setdefault(name, []).append(segment)
            else:
                self.records[name] = self.records.get(name, 0) + int(count)

    def of(self, entry: Entry) -> DiskUse:
        """The bytes `entry`'s collection takes (`DiskUse`)."""
        names = [*entry.record_collections, *([entry.parents] if entry.parents else [])]
        side = sum(folder_bytes(self.db / SIDE / name) for name in names)
        if not self.local:
            return DiskUse(records=None, vectors=None, side=side)
        vectors = sum(
            folder_bytes(self.db / CHROMA / segment)
            for name in names
            for segment in self.segments.get(name, ())
        )
        everyone = sum(self.records.values())
        mine = sum(self.records.get(name, 0) for name in names)
        share = round(self.database * mine / everyone) if everyone else 0
        return DiskUse(records=share, vectors=vectors, side=side)

    @property
    def cache(self) -> int:
        """The caches every collection shares (embeddings, LLM contexts), in bytes."""
        return folder_bytes(self.db / CACHE)

    @property
    def total(self) -> int:
        """The whole index folder, in bytes."""
        return folder_bytes(self.db)


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under `folder` (0 when it is missing), each file once: the
    generations of a collection's rows share their base segment's files (hard links)."""
    if not folder.is_dir():
        return file_bytes(folder)
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            st = path.stat()
            if path.is_file() and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def file_bytes(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
