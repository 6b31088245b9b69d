"""Markdown structure with exact character spans, from markdown-it-py's line maps.

Two views of a Markdown text: its headings (which make the sections) and its top-level
blocks (heading, paragraph, code, table, list, quote, html, rule) with the split points
a chunker may use when a block is too large (table rows, list items, code lines).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..text.spans import line_starts, lstrip_start, rstrip_end
from ..types import Document, Section
from .segments import segments

if TYPE_CHECKING:
    from markdown_it.token import Token


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    start: int
    body_start: int


@dataclass(frozen=True, slots=True)
class Block:
    """A top-level Markdown block. `parts` are the spans it may be split into, in order:
    table rows (the first is the header row), list items, or code lines."""

    kind: str  # heading | paragraph | code | table | list | quote | html | rule
    start: int
    end: int
    level: int = 0
    parts: tuple[tuple[int, int], ...] = ()
    info: str = ""  # fence opening line for code blocks


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    # commonmark's maxNesting of 20 stops parsing inside a list nested ~10 levels deep
    # (each level opens a list and an item) and swallows the text after it into the list.
    # Only the block structure is needed: inline parsing (emphasis, links...) runs for
    # headings alone (see `parse`), since on a long paragraph it makes a Python token
    # per piece of text (a 50 MB single-line file took 2 GB).
    md = (
        MarkdownIt("commonmark", {"html": True, "maxNesting": 64})
        .enable("table")
        .enable("strikethrough")
    )
    return md.disable(
        ["inline", "linkify", "replacements", "smartquotes", "text_join"], ignoreInvalid=True
    )


MAX_TITLE = 200  # characters of a heading's text kept as its title (and in heading paths)

# a trailing attribute list (Python-Markdown's attr_list as mkdocs uses it, Pandoc's header
# attributes): `## Title { #anchor .class key=value }`, `{: #anchor}`, `{-}`
_ATTR_LIST = re.compile(
    r"""[ \t]+\{:?[ \t]*(?:(?:[#.][^\s{}#.="']+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s{}"']+)|-)[ \t]*)+\}[ \t]*$"""
)


def strip_attr_list(content: str) -> str:
    """A heading's content without a trailing attribute list (`Title { #anchor }` ->
    `Title`); a heading that is nothing but one stays as it is."""
    m = _ATTR_LIST.search(content)
    return content[: m.start()] if m and content[: m.start()].strip() else content


def _heading_title(content: str, env: dict) -> str:
    """A heading's plain text: its content inline-parsed as markdown-it's own `inline`
    rule would (with the document's link references in `env`), without a trailing
    attribute list (`{ #anchor .class }`: markup, not words). A heading is a title:
    an absurdly long one (a 50 MB single-line file that starts with `#`) is cut to
    MAX_TITLE characters, since the heading path goes into the header of every chunk;
    only its first MAX_TITLE * 4 characters are parsed (the caller cuts `content`)."""
    md = _parser()
    children: list = []
    md.inline.parse(strip_attr_list(content), md, env, children)
    title = _inline_text(children)
    return title if len(title) <= MAX_TITLE else title[:MAX_TITLE].rstrip() + "…"


def _inline_text(children: list) -> str:
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return " ".join("".join(parts).split())


_KIND = {
    "paragraph_open": "paragraph",
    "heading_open": "heading",
    "fence": "code",
    "code_block": "code",
    "table_open": "table",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "quote",
    "html_block": "html",
    "hr": "rule",
}


_ATX_OPEN = re.compile(r"#{1,6}(?= )")  # what opens an ATX heading: `# `, `## `
_ATX_EMPTY = re.compile(r"#{1,6}")  # an empty heading


def text_line(line: str, marks: str = ">") -> str:
    """A line of text (from HTML or a PDF) that Markdown must read as text, with its
    characters kept: a line opening like a heading keeps its `#`s and the space after them
    becomes a no-break one (U+00A0), which opens no heading (bash's `# ($#) Expands to the
    number of positional parameters`: the parameter's name is its `#`); a lone `#` or a
    line opening with one of `marks` (`>`, a quote) is escaped with a backslash."""
    m = _ATX_OPEN.match(line)
    if m:
        return line[: m.end()] + "\u00a0" + line[m.end() + 1 :]
    if line[:1] in marks or _ATX_EMPTY.fullmatch(line):
        return "\\" + line
    return line


SEGMENT = 1 << 18  # characters of Markdown parsed at a time (see `parse`)


def parse(text: str, max_heading_level: int = 6) -> tuple[list[Heading], list[Block]]:
    """Headings and top-level blocks of a Markdown text, with character spans.

    Text that markdown-it does not turn into a block (link reference definitions, say)
    becomes a paragraph block, so the blocks cover every non-whitespace character. A long
    text is parsed by segments of about SEGMENT characters (see `segments`); heading
    titles are inline-parsed at the end, with every link reference of the document known.
    """
    env: dict = {}
    starts = line_starts(text)
    n_lines = len(starts)

    def offset(line: int) -> int:
        return starts[line] if line < n_lines else len(text)

    titled: list[tuple[int, str, int, int]] = []  # level, inline content, start, end
    blocks: list[Block] = []
    cuts = segments(text, starts, SEGMENT)
    k = 0
    while k < len(cuts):
        first, last = cuts[k]
        tokens = _parser().parse(text[offset(first) : offset(last)], env)
        if k + 1 < len(cuts) and _runs_to_the_end(tokens, last - first):
            # a fence or HTML block the scan took for closed is still open at the cut
            # (a fence line inside an HTML block, say): parse it with the next segment
            cuts[k + 1] = (first, cuts[k + 1][1])
            k += 1
            continue
        k += 1
        for tok in tokens:
            if tok.map:
                tok.map = [tok.map[0] + first, tok.map[1] + first]
        packed = _Packed()
        _Collector(text, offset, max_heading_level, packed, titled).collect(tokens)
        del tokens  # the Blocks are made once the tokens are gone, in the memory they leave
        blocks.extend(packed.blocks(text))
    headings = [
        Heading(level, _heading_title(content, env), start, end)
        for level, content, start, end in titled
    ]
    front = front_matter_end(text)
    if front:  # YAML front matter: metadata, one block, and none of its lines a heading
        headings = [h for h in headings if h.start >= front]
        blocks = [Block("code", 0, rstrip_end(text, 0, front))] + [
            b for b in blocks if b.start >= front
        ]
    return headings, _fill_gaps(text, blocks)


_FRONT_LINE = re.compile(r"(\s*#.*|[\w.-]+\s*:.*|\s+\S.*|-\s.*|\s*)")


def front_matter_end(text: str, max_lines: int = 200) -> int:
    """Where a Markdown file's YAML front matter (`---` lines around `key: value` lines, as
    Jekyll, Hugo, MkDocs and model cards write it) ends; 0 when there is none. Unparsed, its
    closing `---` made the lines above it a heading (`name: typer description: ...`)."""
    if not text.startswith("---\n"):
        return 0
    lines = text[4:].split("\n", max_lines)[:max_lines]
    pos = 4
    keys = 0
    for line in lines:
        if line.rstrip() in ("---", "...") and keys:
            return pos + len(line) + 1 if pos + len(line) < len(text) else len(text)
        if not _FRONT_LINE.fullmatch(line):
            return 0
        keys += bool(re.match(r"[\w.-]+\s*:", line))
        pos += len(line) + 1
    return 0


def _runs_to_the_end(tokens: list, n_lines: int) -> bool:
    """Does a top-level fence or HTML block of a segment run to its last line? Then the
    construct was open at the cut, and the whole text would have parsed it on."""
    return any(
        tok.level == 0 and tok.type in ("fence", "html_block") and tok.map and tok.map[1] >= n_lines
        for tok in tokens
    )


_KINDS = ("heading", "paragraph", "code", "table", "list", "quote", "html", "rule")


class _Packed:
    """Blocks as machine integers while markdown-it's tokens are alive: Python objects
    made among the tokens would pin their memory pages after the tokens are freed (on a
    50 MB file, RSS twice what the blocks need)."""

    def __init__(self) -> None:
        self.values = array("q")  # kind, start, end, level, info start, info end, n parts, parts...

    def add(
        self,
        kind: str,
        start: int,
        end: int,
        level: int = 0,
        parts=(),
        info: tuple[int, int] = (0, 0),
    ) -> None:
        self.values.extend((_KINDS.index(kind), start, end, level, *info, len(parts)))
        for s, e in parts:
            self.values.extend((s, e))

    def blocks(self, text: str) -> list[Block]:
        v = self.values.tolist()
        out, i = [], 0
        while i < len(v):
            kind, start, end, level, info0, info1, n = v[i : i + 7]
            parts = tuple(zip(v[i + 7 : i + 7 + 2 * n : 2], v[i + 8 : i + 8 + 2 * n : 2]))
            info = text[info0:info1]
            out.append(Block(_KINDS[kind], start, end, level=level, parts=parts, info=info))
            i += 7 + 2 * n
        return out


@dataclass
class _Collector:
    """Puts the top-level blocks of parsed segments (maps already in document lines) in
    `blocks`, and the level, inline content and span of each heading in `titled`."""

    text: str
    offset: Callable[[int], int]
    max_heading_level: int
    blocks: _Packed
    titled: list[tuple[int, str, int, int]]

    def collect(self, tokens: list[Token]) -> None:
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            kind = _KIND.get(tok.type)
            if tok.level != 0 or kind is None or tok.map is None:
                i += 1
                continue
            j = _closing(tokens, i)
            self.add(kind, tok, tok.map, tokens[i + 1 : j])
            i = j

    def add(self, kind: str, tok: Token, lines: list[int], inner: list[Token]) -> None:
        """One top-level block: its span, and the parts of a table, a list or code."""
        text, offset = self.text, self.offset
        start = lstrip_start(text, offset(lines[0]), offset(lines[1]))
        end = rstrip_end(text, start, offset(lines[1]))
        if kind == "heading":
            self.heading(tok, inner, start, end)
        elif kind == "table":
            self.blocks.add("table", start, end, parts=self.rows(inner, start, offset(lines[1])))
        elif kind == "list":
            self.blocks.add("list", start, end, parts=self.items(inner))
        elif kind == "code":
            spans = _line_spans(text, start, end)
            info = spans[0] if tok.type == "fence" and spans else (0, 0)
            self.blocks.add("code", start, end, parts=spans, info=info)
        else:
            self.blocks.add(kind, start, end)

    def heading(self, tok: Token, inner: list[Token], start: int, end: int) -> None:
        """A heading, or a paragraph when it is deeper than the headings kept."""
        level = int(tok.tag[1])
        if level > self.max_heading_level:
            self.blocks.add("paragraph", start, end)
            return
        self.titled.append((level, inner[0].content[: MAX_TITLE * 4], start, end))
        self.blocks.add("heading", start, end, level=level)

    def rows(self, inner: list[Token], start: int, table_end: int) -> list[tuple[int, int]]:
        """A table's parts: the header row with its |---| delimiter line, then each body row."""
        offset = self.offset
        body = [t.map for t in inner if t.type == "tbody_open" and t.map]
        header_end = offset(body[0][0]) if body else table_end
        rows = [(start, rstrip_end(self.text, start, header_end))]
        for t in inner:
            if t.type == "tr_open" and t.map and offset(t.map[0]) >= header_end:
                rows.append(self.span(t.map))
        return rows

    def items(self, inner: list[Token]) -> tuple[tuple[int, int], ...]:
        """A list's parts: its items."""
        return tuple(
            self.span(t.map) for t in inner if t.type == "list_item_open" and t.level == 1 and t.map
        )

    def span(self, lines: list[int]) -> tuple[int, int]:
        """The span of lines [first, last) without the blanks around it."""
        text, offset = self.text, self.offset
        start = lstrip_start(text, offset(lines[0]), offset(lines[1]))
        return start, rstrip_end(text, start, offset(lines[1]))


def _closing(tokens: list[Token], i: int) -> int:
    """The index after the token that closes `tokens[i]` (i + 1 for a token that opens nothing)."""
    opening = tokens[i].type
    j = i + 1
    if not opening.endswith("_open"):
        return j
    close = opening.replace("_open", "_close")
    depth = 1
    while j < len(tokens) and depth:
        if tokens[j].type == opening:
            depth += 1
        elif tokens[j].type == close:
            depth -= 1
        j += 1
    return j


def _line_spans(text: str, start: int, end: int) -> tuple[tuple[int, int], ...]:
    spans = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl == -1 else nl
        if text[pos:line_end].strip():
            spans.append((pos, line_end))
        pos = line_end + 1
    return tuple(spans)


def _fill_gaps(text: str, blocks: list[Block]) -> list[Block]:
    """Turn any non-blank text between blocks into paragraph blocks."""
    out: list[Block] = []
    pos = 0
    for block in blocks + [Block("end", len(text), len(text))]:
        if block.start > pos and text[pos : block.start].strip():
            s = lstrip_start(text, pos, block.start)
            out.append(Block("paragraph", s, rstrip_end(text, s, block.start)))
        if block.kind != "end":
            if block.start < pos:  # overlapping maps never happen in practice; be safe
                continue
            if block.start >= block.end:  # only Unicode spaces (a line of U+00A0): no block
                continue
            out.append(block)
            pos = max(pos, block.end)
    return out


def blocks_of(doc: Document) -> list[Block]:
    """Top-level blocks of a document (parsed once, cached on the document)."""
    cached = doc.derived.blocks
    if cached is None:
        if doc.format in ("markdown", "html"):
            _, cached = parse(doc.text, 3 if doc.format == "html" else 6)
        elif doc.format == "code":
            s = lstrip_start(doc.text, 0, len(doc.text))
            e = rstrip_end(doc.text, s, len(doc.text))
            cached = [Block("code", s, e, parts=_line_spans(doc.text, s, e))] if s < e else []
        else:
            cached = paragraph_blocks(doc.text, [s for s in doc.sections if s.level > 0])
        doc.derived.blocks = cached
    return cached


def paragraph_blocks(text: str, heading_sections: list[Section]) -> list[Block]:
    """Blocks of a plain-text document: headings (from rst underlines) and paragraphs."""
    blocks: list[Block] = []
    heading_spans = [(s.start, s.body_start, s.level) for s in heading_sections]
    hi = 0
    pos = 0
    n = len(text)
    while pos < n:
        if hi < len(heading_spans) and heading_spans[hi][0] <= pos:
            hs, he, lvl = heading_spans[hi]
            blocks.append(Block("heading", hs, rstrip_end(text, hs, he), level=lvl))
            pos = max(pos, he)
            hi += 1
            continue
        limit = heading_spans[hi][0] if hi < len(heading_spans) else n
        brk = text.find("\n\n", pos, limit)
        end = limit if brk == -1 else brk
        s = lstrip_start(text, pos, end)
        e = rstrip_end(text, s, end)
        if s < e:
            blocks.append(Block("paragraph", s, e, parts=_line_spans(text, s, e)))
        pos = end + (2 if brk != -1 else 0)
    return blocks
