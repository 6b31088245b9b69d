"""LLM replies kept in SQLite, so a rebuild (or the same questions asked again) costs no
call: keyed by (model, prompt version, document hash, item hash).

The file format is the one the contextual strategy has always written
(`<cache>/contexts.sqlite`, table `contexts`); question making keeps its replies in
another file of the same format (`questions.sqlite`)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class ReplyCache:
    """Replies by (model, prompt version, document hash, item hash); `path` None keeps
    them in memory. Safe to share between threads."""

    def __init__(self, path: Path | None, prompt_version: int) -> None:
        self.prompt_version = prompt_version
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        where = str(path) if path else ":memory:"
        self._db = sqlite3.connect(where, timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS contexts (model TEXT, prompt INTEGER, doc TEXT,"
            " chunk TEXT, context TEXT, input_tokens INTEGER, output_tokens INTEGER,"
            " PRIMARY KEY (model, prompt, doc, chunk)) WITHOUT ROWID"
        )
        self._db.commit()

    def get(self, model: str, doc_hash: str, item_hash: str) -> str | None:
        """The reply kept for this key, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT context FROM contexts WHERE model=? AND prompt=? AND doc=? AND chunk=?",
                (model, self.prompt_version, doc_hash, item_hash),
            ).fetchone()
        return row[0] if row else None

    def put(
        self, model: str, doc_hash: str, item_hash: str, reply: str, tokens_in: int, tokens_out: int
    ) -> None:
        """Keep a reply (and what it cost) for this key."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO contexts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (model, self.prompt_version, doc_hash, item_hash, reply, tokens_in, tokens_out),
            )
            self._db.commit()
