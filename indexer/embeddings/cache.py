"""A persistent embedding cache keyed by (model, sha256 of the input text).

Rebuilding a strategy, or building another strategy whose chunks share text with it,
costs no embedding calls for what was embedded before. SQLite, so that concurrent builds
and a killed process never corrupt it.

Vectors are stored as float16 in a rowid table (8 KiB pages): about 1.2 KB per 512-d
vector, where float32 rows in a WITHOUT ROWID table took 4.7 KB (a row over ~1 KB
spills into an overflow page of its own). Unit vectors lose nothing that matters in
float16: cosine similarities move by about 1e-4 (bench/RESULTS.md, "Embedder speed by
chunk size" and the cache note). A cache written by an older version (float32 table
`embeddings`) is converted when opened.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

STORED = np.float16  # the dtype of vectors on disk
QUERY_WAIT = 0.5  # seconds a query waits for a build's write before it skips its own


def stored(vector: np.ndarray) -> np.ndarray:
    """A vector as the cache gives it back: rounded to float16, as float32."""
    return np.asarray(vector, dtype=STORED).astype(np.float32)


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    FILE = "embeddings.sqlite"  # its name in the cache folder an index gives it

    @classmethod
    def in_folder(cls, folder: Path) -> EmbeddingCache:
        """The cache kept in `folder` (an index's cache folder: `Store.cache_dir`)."""
        return cls(folder / cls.FILE)

    @classmethod
    def reader(cls, folder: Path) -> EmbeddingCache | None:
        """The cache in `folder` opened for reading only (a query on a read-only mount or
        a full disk reads it too); None where there is none or it cannot be read."""
        path = folder / cls.FILE
        if not path.is_file():
            return None
        cache = cls.__new__(cls)
        cache.path, cache.note, cache._broken, cache._lock = path, "", False, threading.Lock()
        cache.busy_ok = True
        try:
            uri = f"{path.absolute().as_uri()}?mode=ro"  # a relative --db too
            cache._db = sqlite3.connect(uri, uri=True, timeout=5, check_same_thread=False)
            cache._db.execute("SELECT 1 FROM vectors LIMIT 1").fetchall()
        except sqlite3.DatabaseError:
            return None
        return cache

    @classmethod
    def for_queries(cls, folder: Path) -> EmbeddingCache | None:
        """The cache in `folder` opened for a query to read and add to (the vectors of the
        units answer-sized context embeds on demand): made when missing, never moved
        aside when damaged (a build does that), waiting at most a moment for a build's
        write. A read-only index gives the read-only cache; None where neither opens."""
        path = folder / cls.FILE
        cache = cls.__new__(cls)
        cache.path, cache.note, cache._broken, cache._lock = path, "", False, threading.Lock()
        cache.busy_ok = True
        try:
            cache._db = cls._open(path, timeout=QUERY_WAIT)
        except (sqlite3.DatabaseError, OSError):
            return cls.reader(folder)
        return cache

    def __init__(self, path: Path | None) -> None:
        """`path=None` keeps the cache in memory (nothing persists). A damaged cache file
        (truncated, not a database) is moved aside and a fresh one started: it is a cache,
        and the build recomputes what it held. `self.note` says so."""
        self.path = path
        self.note = ""
        self._broken = False
        self.busy_ok = False  # a write finding the file busy is skipped, not a failure
        self._lock = threading.Lock()
        try:
            self._db = self._open(path)
        except sqlite3.DatabaseError as exc:
            if path is None:
                raise
            # a full disk damages nothing
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                raise OSError(
                    errno.ENOSPC, f"no space left for the embedding cache {path}"
                ) from None
            aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    Path(str(path) + suffix).rename(str(aside) + suffix)
            self.note = f"the embedding cache {path} was damaged ({exc}); moved it to {aside.name} and started afresh (what it held is embedded again as it is needed)"
            self._db = self._open(path)

    @staticmethod
    def _open(path: Path | None, timeout: float = 60) -> sqlite3.Connection:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            str(path) if path else ":memory:", timeout=timeout, check_same_thread=False
        )
        try:
            db.execute("PRAGMA page_size=8192")  # takes effect only on a new, empty file
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key BLOB NOT NULL, "
                "vector BLOB NOT NULL, UNIQUE (model, key))"
            )
            db.execute("SELECT count(*) FROM vectors WHERE model = ''").fetchone()
            db.commit()
            _convert_legacy(db)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def get_many(self, model: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            if self._broken:
                return found
            try:
                for i in range(0, len(keys), 500):
                    batch = keys[i : i + 500]
                    marks = ",".join("?" * len(batch))
                    rows = self._db.execute(
                        f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                        [model, *batch],
                    )
                    for key, blob in rows:
                        found[key] = np.frombuffer(blob, dtype=STORED).astype(np.float32)
            except (
                sqlite3.DatabaseError
            ) as exc:  # damaged after opening: compute instead of reading
                self._fail(exc)
                return {}
        return found

    def _fail(self, exc: Exception) -> None:
        self._broken = True
        self.note = (
            f"the embedding cache {self.path} failed ({exc}); embeddings are computed without it"
        )

    def put_many(self, model: str, items: list[tuple[bytes, np.ndarray]]) -> bool:
        """Store the vectors; False when they were not stored (a failed cache; for a
        query's cache, also a file busy with a build's write or opened read-only)."""
        if not items:
            return True
        with self._lock:
            if self._broken:
                return False
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                    [(model, key, np.asarray(vec, dtype=STORED).tobytes()) for key, vec in items],
                )
                self._db.commit()
            except sqlite3.OperationalError as exc:
                self._skip_or_fail(exc)
                return False
            except (
                sqlite3.DatabaseError
            ) as exc:  # a full disk or a damaged file: go on without caching
                self._fail(exc)
                return False
        return True

    def _skip_or_fail(self, exc: sqlite3.OperationalError) -> None:
        """A write that could not happen: for a query's cache, a busy or read-only file
        is no failure (the next query tries again); anything else is."""
        with contextlib.suppress(sqlite3.Error):
            self._db.rollback()
        if not (self.busy_ok and _passing(exc)):
            self._fail(exc)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _passing(exc: sqlite3.OperationalError) -> bool:
    """A write refused for a passing reason: the file is busy or locked (another process
    writes), or opened read-only."""
    text = str(exc).lower()
    return any(word in text for word in ("locked", "busy", "readonly", "read-only"))


def _convert_legacy(db: sqlite3.Connection) -> None:
    """Move the float32 vectors of an older cache (table `embeddings`) into `vectors`,
    as float16, and drop the old table; one process does it, the others wait for it."""
    legacy = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'"
    if db.execute(legacy).fetchone() is None:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute(legacy).fetchone() is not None:
            rows = db.execute("SELECT model, key, vector FROM embeddings")
            while batch := rows.fetchmany(2000):
                db.executemany(
                    "INSERT OR IGNORE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                    [
                        (m, k, np.frombuffer(v, dtype=np.float32).astype(STORED).tobytes())
                        for m, k, v in batch
                    ],
                )
            db.execute("DROP TABLE embeddings")
        db.commit()
    except BaseException:
        db.rollback()
        raise
