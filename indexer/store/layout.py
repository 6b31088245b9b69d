"""The index folder's layout: the names of what the store keeps in it, known here only.

<db>/indexer.json                  the marker: format, tool
<db>/chroma/                       the embedded Chroma database (gc.json beside it)
<db>/indexes/<collection>/g<N>/    one version's side files: manifest.json, bm25/, ...
<db>/locks/                        build leases (an embedded database)
<db>/cache/                        the embedding cache, the LLM context and question caches
<db>/questions/                    question sets made from the documents (eval --generate)

A file or folder being written is named `<...>.tmp` (TEMPORARY) until it is renamed into
place; `gc` removes the ones a killed writer left (`gc.remove_temporaries`).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

MARKER = "indexer.json"
CHROMA = "chroma"
SIDE = "indexes"
LOCKS = "locks"
CACHE = "cache"
MANIFEST = "manifest.json"
GC_MARK = "gc.json"
QUESTIONS = "questions"
TEMPORARY = ".tmp"  # how the name of a file or folder being written ends, until it is renamed


def cache_folder(db: str | os.PathLike[str]) -> Path:
    """The caches of an index folder (for callers with settings but no open store)."""
    return Path(db) / CACHE


def questions_folder(db: str | os.PathLike[str]) -> Path:
    """Where made-up question sets of an index folder are kept."""
    return Path(db) / QUESTIONS


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temporary file + rename); the temporary file is removed
    whatever stops the write (a full disk, Ctrl-C). What a killed writer leaves, `gc`
    removes (`gc.remove_temporaries`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".{uuid.uuid4().hex[:8]}{TEMPORARY}")
    try:
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
