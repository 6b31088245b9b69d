"""The index folder's checks when a store opens it: an index (its marker, `indexer.json`,
says so and names the format), not a file or someone else's folder, writable to build.

A marker that cannot be read (garbled, cut short) in a folder whose contents are this
format's index — an embedded Chroma database, side folders by generation — is written
again, the garbled one kept beside it (`indexer.json.damaged-<time>`): it holds nothing
but the format, which the folder's layout tells. Otherwise the one-line error says what
to do."""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from pathlib import Path

from ..errors import CollectionNotFound, ReadOnlyIndex, StoreError
from ..settings import build_command
from .chroma import writable
from .layout import CACHE, CHROMA, MARKER, SIDE, write_json

STORE_FORMAT = 2
SQLITE = b"SQLite format 3\x00"  # the first bytes of an SQLite database
DATABASE = "chroma.sqlite3"  # the embedded Chroma's database file, in CHROMA


def check_folder(db: Path, url: str | None, create: bool) -> None:
    """Refuse, in one line, a folder that is not an index (or, to build, not writable);
    make a new one's marker when building, or with a server."""
    marker = db / MARKER
    refuse_other_folder(db, marker)
    if not marker.exists():
        if not create and url is None:
            command = build_command("PATH", db=db)
            raise CollectionNotFound(f"no index at {db}; build one first: {command}")
        make_marker(db, marker)
        return
    check_marker(db, marker, url)
    if create and not writable(db):
        raise ReadOnlyIndex(
            f"{db} is read-only: building needs write access (querying does not); "
            "build into a writable --db"
        )


def refuse_other_folder(db: Path, marker: Path) -> None:
    """Refuse a file, or a folder holding something else than an index (bar our leftovers)."""
    if db.exists() and not db.is_dir():
        raise StoreError(f"{db} is a file, not an index folder; pass another --db")
    if db.is_dir() and not marker.exists() and any(not our_leftover(p) for p in db.iterdir()):
        raise StoreError(f"{db} is not an indexer database (no {MARKER} in it); pass another --db")


def make_marker(db: Path, marker: Path) -> None:
    """Make a new index folder (and its parents) with its marker."""
    try:
        db.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"format": STORE_FORMAT, "tool": "indexer"}) + "\n")
    except OSError as exc:
        raise StoreError(
            f"cannot create the index folder {db} ({exc.strerror}); pass a writable --db"
        ) from None


def check_marker(db: Path, marker: Path, url: str | None = None) -> None:
    """Refuse an index folder of another format; write an unreadable marker again where
    the folder is this format's index (`recover_marker`)."""
    fmt = marker_format(marker)
    if fmt is None:
        recover_marker(db, marker, url)
    elif fmt != STORE_FORMAT:
        raise StoreError(
            f"{db} was written by another version of indexer (format {fmt}, "
            f"this one reads {STORE_FORMAT}); rebuild it: move it away and run "
            "indexer build"
        )


def marker_format(marker: Path) -> object | None:
    """The format a marker names; None when it cannot be read or names none."""
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("format") if isinstance(data, dict) else None


def recover_marker(db: Path, marker: Path, url: str | None) -> None:
    """Write an unreadable marker again when the rest of the folder is an index of this
    format (the garbled one copied aside first: nothing is lost); a read-only folder is
    read as it is. StoreError, saying what to do, when the folder does not look like one."""
    why = not_this_index(db, url)
    if why:
        raise StoreError(
            f"{marker} is unreadable and {db} {why}: if it is an index folder, move it "
            "away and build again (indexer build PATH --db DIR); else pass another --db"
        )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with contextlib.suppress(OSError):  # read-only: nothing to write, and nothing needs it
        shutil.copyfile(marker, marker.with_name(f"{MARKER}.damaged-{stamp}"))
        write_json(marker, {"format": STORE_FORMAT, "tool": "indexer"})


def not_this_index(db: Path, url: str | None) -> str:
    """Why `db` is not an index folder of this format ("" when it is one): its embedded
    Chroma database missing (without a server), or side files in another layout."""
    database = db / CHROMA / DATABASE
    if url is None and not _is_sqlite(database):
        return f"holds no Chroma database ({database})"
    side = db / SIDE
    for collection in side.iterdir() if side.is_dir() else ():
        if collection.is_dir() and not all(_generation(p) for p in collection.iterdir()):
            return f"keeps its side files in another layout ({collection})"
    return ""


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE)) == SQLITE
    except OSError:
        return False


def _generation(path: Path) -> bool:
    """A side folder of one generation (`g<N>`), or a writer's hidden leftover."""
    name = path.name
    return name.startswith(".") or (name[:1] == "g" and name[1:].isdigit())


def our_leftover(path: Path) -> bool:
    """An embedding cache a failed first build could not remove (another process held it
    open): a folder holding only it is still ours to build in."""
    return (
        path.name == CACHE
        and path.is_dir()
        and all(p.name.startswith("embeddings.sqlite") for p in path.iterdir())
    )
