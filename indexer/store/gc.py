"""What Chroma leaves on disk, and its collection.

Chroma leaves a deleted collection's vector-index folder on disk (chroma-core/chroma
#5259, #5520), so a rebuilt index grows by a whole vector index per full rebuild. Here:
the vector-segment folders that Chroma's own catalogue no longer lists (in the embedded
database, or in a server's data folder given by path on the server's machine), and the
VACUUM of its catalogue database. `collect.py` runs the whole collection over an index
(`indexer gc`); builds remove segment folders after a drop or a full rebuild.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import StoreError
from .layout import GC_MARK, TEMPORARY

TEMPORARY_AGE = 900.0  # seconds a temporary file rests before `gc` takes it for a leftover

_SEGMENT_DIR = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass
class GcReport:
    """What was removed, and the bytes that freed: `collect.collect` measures its folders before
    and after (`add`'s sizes serve builds, which only remove segment folders)."""

    removed: list[str] = field(default_factory=list)
    bytes_freed: int = 0
    measured: list[str] = field(default_factory=list)  # the folders whose size was measured

    def add(self, what: str, size: int = 0) -> None:
        self.removed.append(what)
        self.bytes_freed += size


def folder_size(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def orphan_segments(chroma_path: Path, min_age: float = 0.0) -> list[Path]:
    """Vector-segment folders in a Chroma data folder that its catalogue no longer lists
    (left behind by deleted collections)."""
    database = chroma_path / "chroma.sqlite3"
    if not database.exists():
        return []
    live = _listed_segments(database)
    now = time.time()
    out = []
    for child in chroma_path.iterdir():
        if child.is_dir() and _SEGMENT_DIR.match(child.name) and child.name not in live:
            if _age(child, now) >= min_age:
                out.append(child)
    return out


def _listed_segments(database: Path) -> set[str]:
    """The segment ids Chroma's catalogue database lists."""
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as conn:
            return {row[0] for row in conn.execute("SELECT id FROM segments")}
    except sqlite3.Error as exc:
        raise StoreError(
            f"cannot read Chroma's catalogue in {database} ({exc}); is it a Chroma data folder?"
        ) from None


def _age(path: Path, now: float) -> float:
    """Seconds since `path` changed (-inf when it cannot be read: never old enough)."""
    try:
        return now - path.stat().st_mtime
    except OSError:
        return float("-inf")


def remove_temporaries(
    folder: Path, report: GcReport, min_age: float = TEMPORARY_AGE, deep: bool = True
) -> None:
    """Files and folders named `*.tmp` (`layout.TEMPORARY`) in `folder` (and below, when
    `deep`) that nothing wrote into for `min_age` seconds: what a killed writer left (a
    writer that fails removes its own). The caller holds the lease of whatever builds
    write there; readers write theirs in seconds."""
    now = time.time()
    found = folder.rglob(f"*{TEMPORARY}") if deep else folder.glob(f"*{TEMPORARY}")
    for path in sorted(found, key=lambda p: len(p.parts)):  # a folder before its files
        if not os.path.lexists(path) or _idle(path, now) < min_age:
            continue
        size = folder_size(path) if path.is_dir() else _size(path)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        report.add(f"temporary {path.name} (left by a writer that stopped)", size)


def _idle(path: Path, now: float) -> float:
    """Seconds since `path`, or a file right inside it, last changed."""
    ages = [_age(path, now)]
    if path.is_dir() and not path.is_symlink():
        with contextlib.suppress(OSError):
            ages += [_age(p, now) for p in path.iterdir()]
    return min(ages)


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def remove_orphan_segments(chroma_path: Path, report: GcReport) -> None:
    for folder in orphan_segments(chroma_path):
        size = folder_size(folder)
        shutil.rmtree(folder, ignore_errors=True)
        report.add(f"vector segment {folder.name} (deleted collection)", size)


def vacuum(chroma_path: Path, report: GcReport, force: bool = False) -> None:
    """Compact Chroma's catalogue database when replaced versions left enough behind in it:
    free pages (deleted rows), and the segments of its full-text index, which keeps
    deleted documents until merged (a full rebuild a day grows it by a whole collection's
    text). FTS5's own `optimize` merges them, SQLite's VACUUM returns the pages. Readers
    in other processes keep working meanwhile; a busy database just skips it (it only
    costs disk)."""
    database = chroma_path / "chroma.sqlite3"
    if not database.exists():
        return
    before = database.stat().st_size
    try:
        with contextlib.closing(sqlite3.connect(str(database), timeout=30)) as conn:
            tables = {
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            fts = (
                "embedding_fulltext_search" in tables and "embedding_fulltext_search_data" in tables
            )
            bloated = _bloated(conn, tables, fts)
            if not force and not bloated:
                return
            if fts:
                conn.execute(
                    "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')"
                )
                conn.commit()
            conn.execute("VACUUM")
    except sqlite3.Error:
        return
    freed = before - database.stat().st_size
    if freed > 0:
        report.add("space in Chroma's catalogue (full-text index merged, vacuumed)", freed)


def _bloated(conn: sqlite3.Connection, tables: set[str], fts: bool) -> bool:
    """Does Chroma's catalogue keep enough of replaced versions to compact it: over 30%
    free pages, or far more full-text index segments than records?"""
    free: int = conn.execute("PRAGMA freelist_count").fetchone()[0]
    pages: int = conn.execute("PRAGMA page_count").fetchone()[0] or 1
    segments: int = (
        conn.execute("SELECT count(*) FROM embedding_fulltext_search_data").fetchone()[0]
        if fts
        else 0
    )
    rows: int = (
        conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        if "embeddings" in tables
        else 0
    )
    return not (free / pages <= 0.3 and segments <= 2 * rows + 200)


def compact_if_grown(chroma_path: Path, report: GcReport, growth: float = 1.2) -> None:
    """After a full rebuild: compact Chroma's catalogue when it has grown `growth` times
    past its size after the last compaction (what it kept of replaced versions: free
    pages and full-text residue), remembered in `gc.json` beside it."""
    import json

    database, mark = chroma_path / "chroma.sqlite3", chroma_path.parent / GC_MARK
    if not database.exists():
        return
    try:
        baseline = json.loads(mark.read_text())["catalog_bytes"]
    except (OSError, ValueError, KeyError, TypeError):
        baseline = 0
    size = database.stat().st_size
    if baseline and size > growth * baseline:
        vacuum(chroma_path, report, force=True)
        size = database.stat().st_size
    if not baseline or size > growth * baseline or size < baseline:
        with contextlib.suppress(OSError):
            mark.write_text(json.dumps({"catalog_bytes": size}))
