"""The units answer-sized context is packed from, worked out at build time.

A question's answer is a sentence, a list item, a table row or a few code lines, not a
whole chunk. At build time every document is cut into such units (`document_units`),
and every chunk records the units it overlaps (`unit_map`, stored with the chunk as
compact JSON): their spans, kinds, heading paths, token counts and pages, and the text
of what lies outside the chunk (the rest of a sentence a window cut, a table's header
row above it), so that the packer hands over whole units, each an exact slice of its
document, without reading the document again.

Headings are no units: they are the labels units carry. A table row carries its table's
header row (and the delimiter row under it), handed over with it, unless the header row
is too long to repeat (`text.headrows`). A code block is cut
into runs of lines at blank lines, at most CODE_LINES lines each. A unit over
UNIT_MAX_TOKENS tokens (a run-on line, a minified blob) is cut at whitespace into pieces
of about that size.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..loaders.markdown import Block, blocks_of
from ..text.headrows import first_line, header_repeats
from ..text.sentences import iter_sentences
from ..text.spans import index_at, strip_span
from ..text.tokens import Tokenizer
from ..types import Chunk, Document, join_path
from .units import item_sentences, line_spans

MAP_VERSION = 1
CODE_LINES = 12
UNIT_MAX_TOKENS = 160
KINDS = ("sentence", "item", "row", "code")

Span = tuple[int, int, str, tuple[int, int] | None]  # start, end, kind, table head


@dataclass(frozen=True, slots=True)
class DocUnit:
    """One unit of a document: characters [start, end), its kind, the heading path of
    its section, the span of its table's header rows (rows only), its page (PDF) and
    its size in tokens."""

    start: int
    end: int
    kind: str
    path: str
    head: tuple[int, int] | None
    page: int
    n_tokens: int


def embedded_text(label: str, head_text: str, text: str) -> str:
    """What a unit's vector is made of: its heading path, a row's header rows, its text."""
    return "\n".join(part for part in (label, head_text, text) if part)


def unit_texts(doc: Document, units: list[DocUnit]) -> list[str]:
    """The texts the units of a document are embedded as (`embedded_text`)."""
    return [
        embedded_text(
            u.path, doc.text[u.head[0] : u.head[1]] if u.head else "", doc.text[u.start : u.end]
        )
        for u in units
    ]


def document_units(doc: Document, tokenizer: Tokenizer) -> list[DocUnit]:
    """Every unit of a document, in order (cached on the document)."""
    cached = doc.derived.units
    if cached is not None:
        return cached
    path_at = _definition_paths(doc) if doc.format == "code" else _heading_paths(doc)
    out: list[DocUnit] = []
    for start, end, kind, head in _spans(doc):
        path = path_at(start)
        for s, e in _pieces(doc.text, start, end, tokenizer):
            n = tokenizer.count(doc.text[s:e])
            out.append(DocUnit(s, e, kind, path=path, head=head, page=doc.page_at(s), n_tokens=n))
    doc.derived.units = out
    return out


def _heading_paths(doc: Document) -> Callable[[int], str]:
    """The heading path of the section holding an offset (the title where there are none)."""
    starts = [s.start for s in doc.sections]
    paths = [join_path(s.heading_path) for s in doc.sections]
    return lambda at: paths[index_at(starts, at)] if paths else doc.title


def _definition_paths(doc: Document) -> Callable[[int], str]:
    """For code: the qualified name of the innermost definition holding an offset
    (`TextWrapper._wrap_chunks`), the file's title outside every definition. Offsets
    must come in document order (units do): one sweep over the definitions."""
    from ..loaders.symbols import outline, walk

    tree = outline(doc)
    found = walk(tree.definitions) if tree else iter(())
    text = doc.text
    # a unit starts at its line's start, a definition after the line's indentation
    defs = sorted(
        ((_line_start(text, d.start), d.end, d.symbol) for d in found),
        key=lambda d: (d[0], -d[1]),
    )
    open_: list[
        tuple[int, int, str]
    ] = []  # the definitions holding the last offset, outermost first
    nxt = 0

    def path_at(at: int) -> str:
        nonlocal nxt
        while nxt < len(defs) and defs[nxt][0] <= at:
            open_.append(defs[nxt])
            nxt += 1
        while open_ and open_[-1][1] <= at:  # ended before it (an inner one, a sibling)
            open_.pop()
        return open_[-1][2] if open_ else doc.title

    return path_at


def _line_start(text: str, at: int) -> int:
    """The start of the line holding `at` when only indentation comes before it there."""
    line = text.rfind("\n", 0, at) + 1
    return line if not text[line:at].strip() else at


def _spans(doc: Document) -> Iterator[Span]:
    """(start, end, kind, table head) of every unit, from the document's blocks."""
    text = doc.text
    if doc.format == "code":
        yield from ((s, e, "code", None) for s, e in code_runs(text, 0, len(text)))
        return
    for block in blocks_of(doc):
        if block.kind not in ("heading", "rule"):
            yield from _SPANS.get(block.kind, _sentence_spans)(text, block)


def _row_spans(text: str, block: Block) -> Iterator[Span]:
    """A table's rows, each with the header row and its |---| delimiter line."""
    if not block.parts:
        yield from _sentence_spans(text, block)
        return
    start, end = block.parts[0]
    # a header row too long to carry with every row: each row goes alone (`text.headrows`)
    fits = header_repeats(first_line(text, start, end))
    head = (start, end) if fits else None
    for s, e in block.parts[1:]:
        yield s, e, "row", head


def _item_spans(text: str, block: Block) -> Iterator[Span]:
    for item_start, item_end in block.parts or ((block.start, block.end),):
        yield from ((s, e, "item", None) for s, e in item_sentences(text, item_start, item_end))


def _code_spans(text: str, block: Block) -> Iterator[Span]:
    yield from ((s, e, "code", None) for s, e in code_runs(text, *_inside_fences(text, block)))


def _sentence_spans(text: str, block: Block) -> Iterator[Span]:
    yield from ((s, e, "sentence", None) for s, e in iter_sentences(text, block.start, block.end))


# a block's spans by its kind; any other block is prose, cut into sentences
_SPANS: dict[str, Callable[[str, Block], Iterator[Span]]] = {
    "table": _row_spans,
    "list": _item_spans,
    "code": _code_spans,
}


def _inside_fences(text: str, block: Block) -> tuple[int, int]:
    """A code block's span without its opening and closing fence lines (``` or ~~~)."""
    start, end = block.start, block.end
    if text.startswith(("```", "~~~"), start):
        nl = text.find("\n", start, end)
        start = end if nl == -1 else nl + 1
        last = text.rfind("\n", start, end)
        if last >= start and text[last + 1 : end].strip().startswith(("```", "~~~")):
            end = max(last, start)
    return start, end


def code_runs(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Runs of non-blank lines in text[start:end], at most CODE_LINES lines each: a blank
    or an empty line ends a run (`line_spans` skips empty lines, so a run also ends where
    the next line does not start right after the last one)."""
    run: list[tuple[int, int]] = []
    for s, e in line_spans(text, start, end):
        blank = not text[s:e].strip()
        if run and (blank or s > run[-1][1] + 1 or len(run) == CODE_LINES):
            yield run[0][0], run[-1][1]
            run = []
        if not blank:
            run.append((s, e))
    if run:
        yield run[0][0], run[-1][1]


def _pieces(text: str, start: int, end: int, tokenizer: Tokenizer) -> Iterator[tuple[int, int]]:
    """The span, or pieces of it cut at whitespace when it holds over UNIT_MAX_TOKENS."""
    start, end = strip_span(text, start, end)
    if end - start <= UNIT_MAX_TOKENS * 2 or tokenizer.count(text[start:end]) <= UNIT_MAX_TOKENS:
        if start < end:
            yield start, end
        return
    bounds = tokenizer.boundaries(text[start:end])
    pos = start
    while pos < end:
        at = bisect_left(bounds, pos - start)
        limit = start + int(bounds[min(at + UNIT_MAX_TOKENS, len(bounds) - 1)])
        cut = (
            end
            if limit >= end
            else max(text.rfind(" ", pos + 1, limit), text.rfind("\n", pos + 1, limit))
        )
        if cut <= pos:
            cut = limit if limit > pos else end
        s, e = strip_span(text, pos, cut)
        if s < e:
            yield s, e
        pos = cut


def unit_map(chunk: Chunk, units: list[DocUnit], doc: Document) -> str:
    """The chunk's units as compact JSON (see the module docstring): spans relative to
    the chunk's start, and the document's text outside the chunk they need."""
    starts = [u.start for u in units]
    first = max(bisect_right(starts, chunk.start) - 1, 0)
    mine = [u for u in units[first : bisect_left(starts, chunk.end)] if u.end > chunk.start]
    if not mine:
        return ""
    paths: list[str] = []
    heads: list[tuple[int, int]] = []
    rows = []
    outside: list[tuple[int, int]] = []
    for u in mine:
        if u.path not in paths:
            paths.append(u.path)
        head = -1
        if u.head is not None:
            if u.head not in heads:
                heads.append(u.head)
            head = heads.index(u.head)
            outside.append(u.head)
        outside.append((u.start, u.end))
        rows.append(
            [
                u.start - chunk.start,
                u.end - chunk.start,
                KINDS.index(u.kind),
                paths.index(u.path),
                u.n_tokens,
                u.page,
                head,
            ]
        )
    extra = [[s, doc.text[s:e]] for s, e in _outside(outside, chunk.start, chunk.end)]
    data = {"v": MAP_VERSION, "p": paths, "u": rows, "h": heads, "x": extra}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _outside(spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """The parts of the spans that lie outside [start, end), merged."""
    parts = []
    for s, e in spans:
        if s < start:
            parts.append((s, min(e, start)))
        if e > end:
            parts.append((max(s, end), e))
    merged: list[list[int]] = []
    for s, e in sorted(parts):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]
