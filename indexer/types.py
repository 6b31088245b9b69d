"""The records every part of indexer passes around: Document, Section, Chunk, Hit."""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property, lru_cache
from typing import Any

from .text.spans import index_at, line_of, line_starts

PATH_SEP = " › "


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def join_path(parts: tuple[str, ...] | list[str]) -> str:
    if isinstance(parts, tuple):
        return _join_tuple(parts)
    return PATH_SEP.join(p for p in parts if p)


@lru_cache(maxsize=4096)
def _join_tuple(parts: tuple[str, ...]) -> str:
    """One string per heading path: the chunks of a section share it instead of each
    holding a copy (a 50 MB file's 700k sentence chunks held 1.3x the file in paths)."""
    return PATH_SEP.join(p for p in parts if p)


def page_at(page_starts: list[int], offset: int) -> int:
    """1-based page of a character offset, from where each page's text starts (a page
    without text starts where the next one does, so it owns no offset)."""
    return max(1, bisect.bisect_right(page_starts, offset))


def pages_label(start_page: int, end_page: int) -> str:
    """`p.3` or `p.3-4`; empty for a document without pages."""
    if not start_page:
        return ""
    return f"p.{start_page}" if end_page == start_page else f"p.{start_page}-{end_page}"


def marks_label(first: str, last: str) -> str:
    """Where a span lies, from the marks at its two ends: `slide 3`, `slide 3-4`,
    `Sales row 2-40`, `Sales row 40 – Totals row 2`; empty when neither end has one.

    >>> marks_label("Sales row 2", "Sales row 40")
    'Sales row 2-40'
    """
    if not first or not last or first == last:
        return first or last
    head, _, a = first.rpartition(" ")
    other, _, b = last.rpartition(" ")
    if head and head == other:
        return f"{head} {a}-{b}"
    return f"{first} – {last}"


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a location starts in a document's extracted text (`slide 3`, `Sales row 12`,
    `cell 4`); it lasts to the next mark (a mark with no label ends one)."""

    start: int
    label: str


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the text under it, up to the next heading of any level.

    `heading_path` starts with the document title, or with a top-level heading when the
    title is one of those (`# One`, `# Two`: `Two`, not `One › Two`). `start`/`end` are
    character offsets into the document text; `body_start` is where the text after the
    heading line begins.
    Level 0 is text before the first heading (or a document without headings).
    """

    heading_path: tuple[str, ...]
    level: int
    start: int
    end: int
    body_start: int

    @property
    def path(self) -> str:
        return join_path(self.heading_path)

    def trail(self, title: str) -> tuple[str, ...]:
        """The heading path without the document title in front (a later top-level
        heading, a sibling of the title, has none in front)."""
        path = self.heading_path
        return path[1:] if path and path[0] == title else path


@dataclass
class Derived:
    """What is worked out once per document and reused by loaders and chunkers.

    The items are of types the layers above define (`loaders.markdown.Block`,
    `chunkers.unit_map.DocUnit`, `chunkers.parent.ParentSpan`): this layer cannot name
    them, so each cache holds `Any` and its one owner gives it its type."""

    blocks: list[Any] | None = None  # Markdown blocks (loaders.markdown)
    outline: Any = None  # the tree-sitter outline of code (loaders.symbols)
    # outline is None both before parsing and for files without a grammar
    outline_done: bool = False
    bounds: dict[str, Any] = field(default_factory=dict)  # token boundaries, by tokenizer name
    # section starts and joined heading paths
    section_index: tuple[list[int], list[str]] | None = None
    # parent sections (spans), by parent-child strategy
    parents: dict[str, list[Any]] = field(default_factory=dict)
    units: list[Any] | None = None  # the units answer-sized context packs (chunkers.unit_map)


@dataclass(eq=False)
class Document:
    """One source file, decoded and normalised: newlines are `\\n` and a byte-order mark
    is dropped, as Python's `open(path, encoding=...).read()` gives it; `newline` says
    what the file itself has (`lf`, `crlf`, `cr`, `mixed`; "" for a PDF's extracted text).
    Chunk offsets index `text`."""

    doc_id: str
    text: str
    title: str
    format: str  # markdown | text | html | code
    sections: list[Section] = field(default_factory=list)
    language: str = ""  # programming language for code files
    source_path: str = ""
    warnings: list[str] = field(default_factory=list)
    # PDF: (start, end) of page i+1 in text
    pages: list[tuple[int, int]] = field(default_factory=list)
    # slides, sheet rows, notebook cells...: where each location starts (see `location`)
    marks: list[Mark] = field(default_factory=list)
    newline: str = "lf"
    derived: Derived = field(default_factory=Derived, repr=False)

    @cached_property
    def hash(self) -> str:
        return sha256_hex(self.text)

    @cached_property
    def line_starts(self) -> Sequence[int]:
        """Offset of the first character of every line."""
        return line_starts(self.text)

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return line_of(self.line_starts, offset)

    @cached_property
    def _section_starts(self) -> list[int]:
        return [s.start for s in self.sections]

    def sections_starting_in(self, start: int, end: int) -> list[Section]:
        """The sections that begin after `start` and before `end` (not the one a span
        starting at `start` opens with), in order."""
        starts = self._section_starts
        return self.sections[bisect.bisect_right(starts, start) : bisect.bisect_left(starts, end)]

    def section_at(self, offset: int) -> Section | None:
        """The section a character offset falls in (None for a document without sections)."""
        if not self.sections:
            return None
        return self.sections[index_at(self._section_starts, offset)]

    @cached_property
    def _page_starts(self) -> list[int]:
        return [s for s, _ in self.pages]

    def page_at(self, offset: int) -> int:
        """1-based page a character offset falls on (0 for a document without pages)."""
        return page_at(self._page_starts, offset) if self.pages else 0

    @cached_property
    def _mark_starts(self) -> list[int]:
        return [m.start for m in self.marks]

    def mark_at(self, offset: int) -> str:
        """The label of the mark a character offset falls under ("" before the first)."""
        i = bisect.bisect_right(self._mark_starts, offset) - 1
        return self.marks[i].label if i >= 0 else ""

    def location(self, start: int, end: int) -> str:
        """Where the span [start, end) lies (`slide 3-4`); "" for a document without marks.
        A span starting where no mark is (a sheet's heading) starts at its first mark."""
        if not self.marks:
            return ""
        first = self.mark_at(start)
        if not first:
            i = bisect.bisect_right(self._mark_starts, start)
            if i < len(self.marks) and self.marks[i].start < end:
                first = self.marks[i].label
        return marks_label(first, self.mark_at(max(start, end - 1)))

    def heading_path_at(self, offset: int) -> tuple[str, ...]:
        section = self.section_at(offset)
        return section.heading_path if section else (self.title,)


@dataclass(slots=True, kw_only=True)
class Chunk:
    """A retrievable piece of a document.

    `text` is the exact source slice shown to people and put in prompts
    (`document.text[start:end] == text`); `header` says what the chunk is and where it
    lives; `indexed_text` (header, optional context, text) is what gets embedded and
    BM25-indexed.
    """

    id: str
    doc_id: str
    text: str
    start: int
    end: int
    start_line: int
    end_line: int
    kind: str
    header: str = ""
    heading_path: str = ""
    n_tokens: int = 0
    parent_id: str = ""
    context: str = ""
    symbol: str = ""
    parent_symbol: str = ""
    language: str = ""
    strategy: str = ""
    hash: str = ""
    start_page: int = 0  # PDF pages the chunk spans (1-based; 0 for documents without pages)
    end_page: int = 0
    # the chunk's place in a file without pages: `slide 3`, `Sales row 2-40`, `cell 4`
    location: str = ""
    # the units it overlaps, as the packer reads them (chunkers.unit_map); not shown
    units: str = ""

    @property
    def indexed_text(self) -> str:
        return "\n\n".join(part for part in (self.header, self.context, self.text) if part)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["units"]
        data["indexed_text"] = self.indexed_text
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(slots=True, kw_only=True)
class Hit:
    """One search result: a chunk (or, for parent-child strategies, its parent) and why it ranked."""

    rank: int
    score: float
    chunk: Chunk
    embedding_rank: int | None = None
    embedding_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    child_ids: list[str] = field(default_factory=list)
    # weighted and adaptive fusion: the embedding side's weight
    embedding_share: float | None = None
    # exact-match tier: query codes held, +2 for the definition a bare symbol query names
    exact: int = 0
    match: str = ""  # what put it in its exact-match tier: exact symbol | exact code | file name | exact term
    # the mode's own score, when `score` was raised to keep rank order
    search_score: float | None = None
    # other documents whose hits had this text (dropped)
    same_text: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        c = self.chunk
        return {
            "rank": self.rank,
            "score": self.score,
            "id": c.id,
            "doc_id": c.doc_id,
            "start": c.start,
            "end": c.end,
            "start_line": c.start_line,
            "end_line": c.end_line,
            "kind": c.kind,
            "header": c.header,
            "heading_path": c.heading_path,
            "symbol": c.symbol,
            "start_page": c.start_page,
            "end_page": c.end_page,
            "location": c.location,
            "n_tokens": c.n_tokens,
            "text": c.text,
            "embedding_rank": self.embedding_rank,
            "embedding_score": self.embedding_score,
            "bm25_rank": self.bm25_rank,
            "bm25_score": self.bm25_score,
            **({"child_ids": self.child_ids} if self.child_ids else {}),
            **(
                {"embedding_share": self.embedding_share}
                if self.embedding_share is not None
                else {}
            ),
            **({"exact": self.exact, "match": self.match} if self.exact else {}),
            **({"search_score": self.search_score} if self.search_score is not None else {}),
            **({"same_text": self.same_text} if self.same_text else {}),
        }
