"""A persistent embedding cache keyed by (model, sha256 of the input text).

Rebuilding a strategy, or building another strategy whose chunks share text with it,
costs no embedding calls for what was embedded before. SQLite, so that concurrent builds
and a killed process never corrupt it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    def __init__(self, path: Path | None) -> None:
        """`path=None` keeps the cache in memory (nothing persists)."""
        self.path = path
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path) if path else ":memory:", timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, key BLOB NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model, key)) WITHOUT ROWID"
        )
        self._db.commit()

    def get_many(self, model: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                marks = ",".join("?" * len(batch))
                rows = self._db.execute(
                    f"SELECT key, vector FROM embeddings WHERE model = ? AND key IN ({marks})", [model, *batch]
                )
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: list[tuple[bytes, np.ndarray]]) -> None:
        if not items:
            return
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings (model, key, vector) VALUES (?, ?, ?)",
                [(model, key, np.asarray(vec, dtype=np.float32).tobytes()) for key, vec in items],
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
