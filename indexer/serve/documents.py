"""The documents view: a document rebuilt from stored chunk texts only, and each
collection's chunks laid over it with their boundary-quality marks.

Nothing is read from disk: every chunk's `text` is the exact slice `document[start:end]`,
so laying the chunks of every collection on their spans gives the document back; what no
chunk covers is whitespace between chunks, shown as line breaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..evaluation.chunk_boundaries import Structure
from ..types import Chunk
from .marks import cut_marks

if TYPE_CHECKING:
    from ..store import Entry

GAP = "\n"  # what no chunk covers: whitespace between chunks (a line break keeps Markdown blocks apart)
_HOLE = "\0"
CHUNK_FIELDS = (
    "id",
    "start",
    "end",
    "start_line",
    "end_line",
    "kind",
    "n_tokens",
    "header",
    "heading_path",
    "parent_id",
    "symbol",
    "context",
    "start_page",
    "end_page",
    "location",
)


@dataclass
class Rebuilt:
    """A document laid out from chunks: its text, how many characters some chunk covers,
    and the layers (collections) whose chunks disagree with the text the first layers
    gave (built from another version of the document)."""

    text: str
    covered: int
    conflicts: list[str] = field(default_factory=list)


def rebuild(layers: list[tuple[str, list[Chunk]]]) -> Rebuilt:
    """Lay every layer's chunks on their [start, end) spans, earlier layers winning where
    two disagree; a layer with a disagreeing chunk is listed in `conflicts`."""
    length = max((c.end for _, chunks in layers for c in chunks), default=0)
    buf = [_HOLE] * length
    conflicts = []
    for name, chunks in layers:
        clash = False
        for c in chunks:
            if len(c.text) != c.end - c.start or c.start < 0:
                clash = True
                continue
            clash |= not _lay(buf, c.start, c.text)
        if clash:
            conflicts.append(name)
    text = "".join(buf)
    return Rebuilt(text.replace(_HOLE, GAP), length - text.count(_HOLE), conflicts)


def _lay(buf: list[str], start: int, text: str) -> bool:
    """Write `text` into the holes of buf[start:...]; False when it disagrees with what
    is there already."""
    end = start + len(text)
    existing = "".join(buf[start:end])
    if _HOLE not in existing:
        return existing == text
    if existing == _HOLE * len(text):
        buf[start:end] = text
        return True
    ok = True
    for i, (have, new) in enumerate(zip(existing, text)):
        if have == _HOLE:
            buf[start + i] = new
        elif have != new:
            ok = False
    return ok


def chunk_view(chunk: Chunk) -> dict:
    """What the view shows of a chunk (its text is the document's slice, not repeated)."""
    data = {name: getattr(chunk, name, 0) for name in CHUNK_FIELDS}
    data["indexed_text"] = chunk.indexed_text
    return data


def lane(
    name: str, entry: Entry, chunks: list[Chunk], parents: list[Chunk], structure: Structure
) -> dict[str, Any]:
    """One collection's chunks of one document with their cut marks and a summary."""
    marks, quality = cut_marks(structure, chunks)
    out = []
    for chunk, mark in zip(chunks, marks):
        data = chunk_view(chunk)
        data["cuts"] = mark
        out.append(data)
    tokens = [c.n_tokens for c in chunks]
    return {
        "name": name,
        "strategy": entry.strategy,
        "embedder": entry.embedder,
        "kind": entry.kind,
        "parent_child": bool(entry.parents),
        "chunks": out,
        "parents": [chunk_view(p) for p in sorted(parents, key=lambda p: (p.start, p.end))],
        "tokens": {
            "total": sum(tokens),
            "mean": round(sum(tokens) / len(tokens), 1) if tokens else 0,
            "max": max(tokens, default=0),
        },
        "overlap": sum(max(0, a.end - b.start) for a, b in zip(chunks, chunks[1:])),
        "quality": quality,
    }
