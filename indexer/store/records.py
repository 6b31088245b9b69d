"""Chunks as Chroma records: the text is the document, everything else metadata (plus
the generation that wrote the record)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..types import Chunk

if TYPE_CHECKING:
    from chromadb.api.types import Where
    from chromadb.base_types import LiteralValue, LogicalOperator, WhereOperator

# A record's metadata as Chroma returns it: META_FIELDS' values (a str or an int each,
# by field), `indexed_text` and the generation `gen`.
RecordMeta = Mapping[str, Any]

META_FIELDS = (
    "doc_id",
    "start",
    "end",
    "start_line",
    "end_line",
    "kind",
    "header",
    "heading_path",
    "n_tokens",
    "parent_id",
    "context",
    "symbol",
    "parent_symbol",
    "language",
    "strategy",
    "hash",
    "start_page",
    "end_page",
    "location",
    "units",
)
_INTS = ("start", "end", "start_line", "end_line", "n_tokens", "start_page", "end_page")


def chunk_metadata(chunk: Chunk, generation: int = 0) -> dict[str, Any]:
    meta = {name: getattr(chunk, name) for name in META_FIELDS}
    meta["indexed_text"] = chunk.indexed_text
    meta["gen"] = generation
    return meta


def chunk_from_record(chunk_id: str, document: str | None, meta: RecordMeta) -> Chunk:
    values = {name: meta.get(name, "") for name in META_FIELDS}
    for name in _INTS:
        values[name] = int(values[name] or 0)
    return Chunk(id=chunk_id, text=document or "", **values)


def generation_filter(op: Literal["$lte", "$gt"], generation: int) -> Where:
    """The records written by a generation at most (`$lte`) or after (`$gt`) `generation`."""
    test: dict[WhereOperator | LogicalOperator, LiteralValue] = {op: generation}
    return {"gen": test}


def documents_filter(doc_ids: Sequence[str]) -> Where:
    """The records of these documents."""
    test: dict[Literal["$in", "$nin"], list[LiteralValue]] = {"$in": list(doc_ids)}
    return {"doc_id": test}


def all_of(*filters: Where) -> Where:
    """The records every one of `filters` matches."""
    return {"$and": list(filters)}
