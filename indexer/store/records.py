"""Chunks as Chroma records: the text and every other field are metadata (plus the
generation that wrote the record); the record has no Chroma document. A document is
indexed by Chroma's full-text search (trigrams), which nothing here reads and which took
four times the text's bytes and half of Chroma's writing time (BM25 is the search's own,
beside the index). A field's empty value ("" or 0) is not stored (a reader's default),
nor is `indexed_text`, which is the header, context and text (`Chunk.indexed_text`):
Chroma keeps every metadata string twice (its table and an index of values). Records
written before 0.2 hold their text as the document (and `indexed_text`): read as well."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..types import Chunk

if TYPE_CHECKING:
    from chromadb.api.types import Where
    from chromadb.base_types import LiteralValue, LogicalOperator, WhereOperator

# A record's metadata as Chroma returns it: META_FIELDS' values (a str or an int each,
# by field; those left out empty), the chunk's `text` and the generation `gen` (records
# written before 0.2: the text is their document, and `indexed_text`, which nothing reads).
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
    meta: dict[str, Any] = {}
    for name in META_FIELDS:
        value = getattr(chunk, name)
        if value != "" and value != 0:
            meta[name] = value
    if chunk.text:
        meta["text"] = chunk.text
    meta["gen"] = generation
    return meta


def chunk_from_record(chunk_id: str, document: str | None, meta: RecordMeta) -> Chunk:
    """The chunk a record holds (`document`: its Chroma document, where an older build
    stored the text, or the text kept beside it in the rows)."""
    values = {name: meta.get(name, "") for name in META_FIELDS}
    for name in _INTS:
        values[name] = int(values[name] or 0)
    return Chunk(id=chunk_id, text=record_text(document, meta), **values)


def record_text(document: str | None, meta: RecordMeta) -> str:
    """A record's text: its metadata's `text`, or its Chroma document where an older build
    stored it there."""
    text = meta.get("text")
    return text if isinstance(text, str) else document or ""


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
