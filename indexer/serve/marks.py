"""Boundary-quality marks for the documents view: which cuts fall inside a word, a
sentence, a table or one of its rows, a code block, a list item or a function.

The checks are `indexer.evaluation.chunk_boundaries` (the ones `indexer chunk` prints), run on
the document rebuilt from stored chunks: each chunk's start and end gets the kinds of
structure it falls strictly inside, and each collection the summary columns `indexer
chunk` shows (share of chunk ends inside each kind; tables, code blocks, list items and
functions kept whole).
"""

from __future__ import annotations

from ..evaluation.chunk_boundaries import KINDS, BoundaryStats, Structure, columns, structure_of
from ..loaders import make_document
from ..loaders.formats import format_of
from ..loaders.registry import stored_format
from ..types import Chunk, Document


def rebuilt_document(doc_id: str, text: str) -> Document:
    """A Document over rebuilt text, read as its file name says (an extracted text, such as
    HTML's, PDF's or a Word file's, is stored Markdown-shaped; unknown kinds as plain text)."""
    fmt, language = format_of(doc_id.rsplit("/", 1)[-1])
    return make_document(doc_id, text, stored_format(fmt), language)


def cut_marks(
    structure: Structure, chunks: list[Chunk]
) -> tuple[list[dict[str, list[str]]], dict[str, int]]:
    """Per chunk `{"start": kinds, "end": kinds}` it is cut inside, and how many distinct
    cut positions there are (`cuts`), fall inside anything (`inside`), and inside each
    kind. The document's first and last chunk edges are not cuts."""
    first = min((c.start for c in chunks), default=0)
    last = max((c.end for c in chunks), default=0)
    seen: dict[int, list[str]] = {}

    def judge(position: int) -> list[str]:
        if position <= first or position >= last:
            return []
        if position not in seen:
            seen[position] = [kind for kind in KINDS if structure.inside(kind, position)]
        return seen[position]

    marks = [{"start": judge(c.start), "end": judge(c.end)} for c in chunks]
    counts = {
        "cuts": len(seen),
        "inside": sum(1 for kinds in seen.values() if kinds),
        **{kind: sum(kind in kinds for kinds in seen.values()) for kind in KINDS},
    }
    return marks, counts


def quality_table(doc: Document, lanes: dict[str, list[Chunk]]) -> dict:
    """The boundary columns of `indexer chunk` for each collection's chunks of one document."""
    stats = []
    for name, chunks in lanes.items():
        st = BoundaryStats(name)
        st.add(doc, chunks)
        stats.append(st)
    headers, rows = columns(stats)
    return {"headers": headers, "rows": dict(zip(lanes, rows))}


__all__ = ["cut_marks", "quality_table", "rebuilt_document", "structure_of"]
