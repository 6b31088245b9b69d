"""Where things live: the index folder, the user cache, and environment overrides."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB_DIR = ".indexer"
ENV_DB = "INDEXER_DB"
ENV_CHROMA_URL = "INDEXER_CHROMA_URL"
ENV_EMBEDDER = "INDEXER_EMBEDDER"
ENV_CACHE = "INDEXER_CACHE_DIR"

DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024


def db_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The index folder: --db, else $INDEXER_DB, else ./.indexer."""
    value = explicit or os.environ.get(ENV_DB) or DEFAULT_DB_DIR
    return Path(value).expanduser()


def cache_dir() -> Path:
    """Per-user cache for files we install once (tokenizer BPE tables)."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "indexer"
