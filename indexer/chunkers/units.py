"""The sentence units of a document: what the sentence-based strategies (semantic,
parent) group and what the boundary measurement checks cuts against. A heading, a table
row and a list item are units of their own; prose is split into sentences
(`text.sentences`); a code block is one unit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..loaders.markdown import Block, blocks_of
from ..text.sentences import iter_sentences
from ..text.spans import index_at
from ..types import Document


class SentenceUnit(NamedTuple):
    """A sentence-level unit of a document: a prose sentence, a heading, a table row,
    a list item or a code block; `section` indexes `document.sections`."""

    start: int
    end: int
    kind: str
    section: int


def sentence_units(doc: Document) -> Iterator[SentenceUnit]:
    """Sentences of a document in order, made as they are taken. Each heading, table row
    and list item is a unit of its own; prose is split into sentences; a code block is one
    unit."""
    starts = [s.start for s in doc.sections]
    text = doc.text
    for block in blocks_of(doc):
        for s, e, kind in _block_units(text, block):
            yield SentenceUnit(s, e, kind, index_at(starts, s))


def _block_units(text: str, block: Block) -> Iterator[tuple[int, int, str]]:
    """The units of one block as (start, end, kind), made as they are taken."""
    return _UNITS.get(block.kind, _sentences)(text, block)


def _heading(_text: str, block: Block) -> Iterator[tuple[int, int, str]]:
    yield block.start, block.end, "heading"


def _rows(_text: str, block: Block) -> Iterator[tuple[int, int, str]]:
    for s, e in block.parts:
        yield s, e, "row"


def _items(text: str, block: Block) -> Iterator[tuple[int, int, str]]:
    for item_start, item_end in block.parts or ((block.start, block.end),):
        for s, e in item_sentences(text, item_start, item_end):
            yield s, e, "item"


def _code(_text: str, block: Block) -> Iterator[tuple[int, int, str]]:
    yield block.start, block.end, "code"


def _sentences(text: str, block: Block) -> Iterator[tuple[int, int, str]]:
    for s, e in iter_sentences(text, block.start, block.end):
        yield s, e, "sentence"


# a block's units by its kind; any other block is prose, cut into sentences
_UNITS: dict[str, Callable[[str, Block], Iterator[tuple[int, int, str]]]] = {
    "heading": _heading,
    "table": _rows,
    "list": _items,
    "code": _code,
}


def item_sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """A list item is one unit unless it holds several sentences or nested items: the
    sentences of each of its lines."""
    for line_start, line_end in line_spans(text, start, end):
        yield from iter_sentences(text, line_start, line_end)


def line_spans(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The non-empty lines of text[start:end], without their line breaks (no copy of the text)."""
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl
        if stop > pos:
            yield pos, stop
        pos = stop + 1
