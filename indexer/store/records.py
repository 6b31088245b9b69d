"""Chunks as Chroma records: the text is the document, everything else metadata (plus
the generation that wrote the record)."""

from __future__ import annotations

from typing import Any

from ..types import Chunk

META_FIELDS = (
    "doc_id", "start", "end", "start_line", "end_line", "kind", "header", "heading_path", "n_tokens",
    "parent_id", "context", "symbol", "parent_symbol", "language", "strategy", "hash", "start_page", "end_page",
    "units",
)
_INTS = ("start", "end", "start_line", "end_line", "n_tokens", "start_page", "end_page")


def chunk_metadata(chunk: Chunk, generation: int = 0) -> dict[str, Any]:
    meta = {name: getattr(chunk, name) for name in META_FIELDS}
    meta["indexed_text"] = chunk.indexed_text
    meta["gen"] = generation
    return meta


def chunk_from_record(chunk_id: str, document: str | None, meta: dict[str, Any]) -> Chunk:
    values = {name: meta.get(name, "") for name in META_FIELDS}
    for name in _INTS:
        values[name] = int(values[name] or 0)
    return Chunk(id=chunk_id, text=document or "", **values)
