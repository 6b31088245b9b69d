"""PDF layout, second half: lines to Markdown-shaped text with a page map.

Lines join into paragraphs, list items and code blocks; line-end hyphens are joined
where the word was split; lines in a larger or bold font become `#`/`##`/`###`
headings; ruled tables come in as Markdown tables. `layout_markdown(pages)` returns the
text and, per page, the span of its characters, so a chunk's offsets map to pages.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...types import page_at
from ..markdown import text_line
from ..skips import SkipFile
from .blocks import BULLET, LineBlock, line_blocks
from .columns import reading_order
from .furniture import furniture
from .layout import Box, Packed, Page, fragments, merge_boxes, words_of
from .tables import ruled_tables

__all__ = ["OCR_HINT", "PdfText", "layout_markdown", "page_list"]

OCR_HINT = "OCR it first, e.g. with ocrmypdf"
MARKDOWN_BULLETS = "*-+"  # bullets Markdown reads as such: kept as the PDF has them


@dataclass(slots=True)
class PdfText:
    """Markdown-shaped text of a PDF. `pages[i]` is the (start, end) character span of
    page i+1 within `text` (an empty span where a page has no text)."""

    text: str
    pages: list[tuple[int, int]]
    title: str = ""
    warnings: list[str] = field(default_factory=list)

    def page_at(self, offset: int) -> int:
        """1-based number of the page a character offset falls in."""
        return page_at([s for s, _ in self.pages], offset)

    def page_span(self, start: int, end: int) -> tuple[int, int]:
        """First and last page (1-based) of the characters start..end."""
        return self.page_at(start), self.page_at(max(start, end - 1))


def page_list(numbers: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f" and {len(numbers) - limit} more" if len(numbers) > limit else "")


_WORD = re.compile(r"[\w'’-]+")
# no Unicode map: the replacement character, private use
_UNDECODED = re.compile("[\ufffd\ue000-\uf8ff]")


def _join_hyphen(left: str, right: str, vocab: set[str]) -> str | None:
    """The joined text when `left` ends with a hyphen that meets `right`, else None.
    "kulla-" + "nım" -> "kullanım"; "e-" + "posta" -> "e-posta"; "Ar-" + "Ge" -> "Ar-Ge"."""
    if not _hyphen_break(left, right):
        return None
    head = left.rsplit(" ", 1)[-1][:-1]
    tail = right.split(" ", 1)[0]
    stem = re.sub(r"^\W+", "", head)
    second = re.sub(r"\W+$", "", tail)
    if not right[0].isalpha() or not right[0].islower():
        return left + right  # "Ar-Ge", "COVID-19": a real hyphen
    if len(stem.rsplit("-", 1)[-1]) <= 1 or stem.isupper():
        return left + right  # "e-posta", "SMS-"
    joined, kept = (stem + second).lower(), (stem + "-" + second).lower()
    if kept in vocab and joined not in vocab:
        return left + right
    return left[:-1] + right


def _hyphen_break(left: str, right: str) -> bool:
    """Whether `left` ends with a hyphen after a letter and `right` goes on."""
    return left.endswith("-") and len(left) >= 2 and left[-2].isalpha() and bool(right)


def layout_markdown(
    pages: Iterable[Page], meta_title: str = "", warnings: list[str] | None = None
) -> PdfText:
    """Markdown-shaped text and page spans from pages of glyphs and rules. `pages` may be
    a generator: each page is read once and let go (its glyphs become compact words), so a
    long document never holds the glyphs of more than one page. `warnings` is read after
    the pages (a reader may add to it as it goes). Raises SkipFile when no page has text."""
    doc = _read(pages)  # pass 1: words, tables and the font sizes of every page
    warnings = list(warnings or [])
    _check_text_layer(doc)
    body = doc.sizes.most_common(1)[0][0]  # the document's body font, from every page
    gutter = max(0.8 * body, 4.0)
    if doc.scanned:
        warnings.append(
            f"page(s) {page_list(doc.scanned)} have no text layer (scanned?); {OCR_HINT} to index them"
        )
    rows_by_page, drop = _fragments(doc, body, gutter)  # pass 2
    lines = _ordered_lines(rows_by_page, drop, doc.tables, gutter)  # pass 3
    vocab = {
        m.group().lower() for line in lines if not line.table for m in _WORD.finditer(line.text)
    }
    blocks = line_blocks(lines, body)
    del lines
    text, spans = _render(blocks, len(doc.heights), vocab)
    title = _title(meta_title, blocks, vocab)
    return PdfText(text, spans, unicodedata.normalize("NFC", title), warnings)


def _check_text_layer(doc: _Read) -> None:
    """Raise SkipFile when the pages have no text, or text that cannot be decoded."""
    if not doc.chars:
        raise SkipFile(f"no text layer (a scanned PDF?); {OCR_HINT}")
    if doc.bad * 2 > doc.chars:
        raise SkipFile(
            f"text layer cannot be decoded (fonts without a Unicode map); {OCR_HINT} --force-ocr"
        )


def _fragments(
    doc: _Read, body: float, gutter: float
) -> tuple[list[Packed | None], list[set[tuple[int, int]]]]:
    """Pass 2: each page's fragments, packed again, and per page the positions of the
    furniture to drop (the rows at each page's edges stay for the furniture pass)."""
    rows_by_page: list[Packed | None] = []
    edges: list[list[list[Box]]] = []
    totals: list[int] = []
    for i, packed in enumerate(doc.words):
        assert packed is not None  # each page's words are read once, here
        rows = fragments(packed.boxes(i), gutter)
        doc.words[i] = None  # the page's words go as its fragments come
        rows_by_page.append(Packed.of_rows(rows))
        edges.append(rows if len(rows) <= 2 * _EDGE else rows[:_EDGE] + rows[-_EDGE:])
        totals.append(len(rows))
    return rows_by_page, _positions(edges, totals, furniture(edges, doc.heights, body))


def _ordered_lines(
    rows_by_page: list[Packed | None],
    drop: list[set[tuple[int, int]]],
    tables: list[list[Box]],
    gutter: float,
) -> list[Box]:
    """Pass 3: the lines (and tables) of each page in reading order, furniture left out;
    each page's fragments are let go once read."""
    lines: list[Box] = []
    for i, packed in enumerate(rows_by_page):
        assert packed is not None  # each page's fragments are read once, here
        items = [
            f
            for r, row in enumerate(packed.rows(i))
            for k, f in enumerate(row)
            if (r, k) not in drop[i]
        ]
        items += tables[i]
        rows_by_page[i] = None
        if items:
            lines += _page_lines(items, gutter)
    return lines


def _page_lines(items: list[Box], gutter: float) -> list[Box]:
    """A page's fragments and tables in reading order: each group a line or its tables."""
    lines: list[Box] = []
    lo, hi = min(b.x0 for b in items), max(b.x1 for b in items)
    for group in reading_order(items, lo, hi, gutter):
        tables = [b for b in group if b.table]
        lines += tables if tables else [merge_boxes(group)]
    return lines


def _title(meta_title: str, blocks: list[LineBlock], vocab: set[str]) -> str:
    """The document's title: its metadata title when it is a real one, else its first
    level-1 heading ("" when it has neither)."""
    if _clean_title(meta_title):
        return meta_title
    return next((_plain(b, vocab) for b in blocks if b.kind == "heading" and b.level == 1), "")


_EDGE = 5  # rows kept from each edge of a page for the furniture pass (it looks at four)


def _positions(
    edges: list[list[list[Box]]], totals: list[int], drop: set[int]
) -> list[set[tuple[int, int]]]:
    """Per page, the (row, fragment) positions of the dropped fragments, rows counted on
    the whole page (`edges` holds its first and last `_EDGE` rows of `totals` rows)."""
    out: list[set[tuple[int, int]]] = []
    for rows, total in zip(edges, totals):
        at: set[tuple[int, int]] = set()
        for t, row in enumerate(rows):
            r = t if total == len(rows) or t < _EDGE else total - (len(rows) - t)
            at.update((r, k) for k, f in enumerate(row) if id(f) in drop)
        out.append(at)
    return out


@dataclass(slots=True)
class _Read:
    """What the first pass over the pages keeps: per page its height, ruled tables and
    compact words; for the document, the characters by font size (the body font), and
    the counts that tell an undecodable or scanned PDF."""

    heights: list[float] = field(default_factory=list)
    tables: list[list[Box]] = field(default_factory=list)
    words: list[Packed | None] = field(default_factory=list)
    sizes: Counter = field(default_factory=Counter)
    chars: int = 0
    bad: int = 0
    scanned: list[int] = field(default_factory=list)


def _read(pages: Iterable[Page]) -> _Read:
    doc = _Read()
    for i, page in enumerate(pages):
        words = words_of(page.glyphs, i)
        if not words and page.images:
            doc.scanned.append(i + 1)
        for w in words:
            doc.sizes[w.size] += len(w.text)
        text = "".join([w.text for w in words])
        doc.chars += len(text)
        if not text.isascii():
            doc.bad += len(_UNDECODED.findall(text))
        tables, rest = ruled_tables(page.rules, words, i)
        doc.heights.append(page.height)
        doc.tables.append(tables)
        doc.words.append(Packed(rest))
    return doc


def _clean_title(title: str) -> bool:
    t = title.strip().lower()
    return (
        bool(t)
        and any(c.isalpha() for c in t)
        and not re.search(
            r"^(untitled|microsoft (word|powerpoint)|document\d*$|slide\s*\d*$)|\.(docx?|pdf|tex|rtf|odt|indd|pptx?)$",
            t,
        )
    )


def _pieces(block: LineBlock, vocab: set[str]) -> list[tuple[str, int | None]]:
    """The text of a block's lines as (text, page) pieces: lines joined by a space, or
    without one where a line-end hyphen meets the next line (the hyphen dropped when
    it only split the word)."""
    texts = [line.text for line in block.lines]
    m = BULLET.match(texts[0]) if block.kind == "item" else None
    if m and m.group(1) not in MARKDOWN_BULLETS:
        texts[0] = "- " + m.group(2)  # a bullet glyph; `*`, `-`, `+` stay: a term (bash's `*`)
    pieces: list[tuple[str, int | None]] = []
    acc = ""
    for line, text in zip(block.lines, texts):
        if acc:
            joined = _join_hyphen(acc, text, vocab)
            if joined is None:
                pieces.append((" ", None))
                acc += " "
            elif len(joined) < len(acc) + len(text):
                prev, page = pieces[-1]
                pieces[-1] = (prev[:-1], page)
                acc = acc[:-1]
        pieces.append((text, line.page))
        acc += text
    return pieces


def _code_pieces(block: LineBlock) -> list[tuple[str, int | None]]:
    """A fenced code block; indentation from the x offset in character widths, and a
    blank line where the gap between lines is a line or more."""
    lines = block.lines
    left = min(b.x0 for b in lines)
    advance = min((b.x1 - b.x0) / len(b.text) for b in lines if b.text)
    step = _line_step(lines)
    fence = "~~~" if any("```" in b.text for b in lines) else "```"
    pieces: list[tuple[str, int | None]] = [(fence + "\n", None)]
    for k, b in enumerate(lines):
        if k:
            pieces.append(("\n" * max(1, min(3, round((b.y - lines[k - 1].y) / step))), None))
        pieces.append((" " * round((b.x0 - left) / advance) + b.text, b.page))
    pieces.append(("\n" + fence, None))
    return pieces


def _line_step(lines: list[Box]) -> float:
    """The smallest baseline distance between the lines (their font's leading for one)."""
    return min((b.y - a.y for a, b in zip(lines, lines[1:])), default=0) or 1.2 * lines[0].size


def _plain(block: LineBlock, vocab: set[str]) -> str:
    return "".join(t for t, _ in _pieces(block, vocab))


def _render(
    blocks: list[LineBlock], n_pages: int, vocab: set[str]
) -> tuple[str, list[tuple[int, int]]]:
    parts: list[str] = []
    first = [-1] * n_pages
    last = [-1] * n_pages
    pos = 0
    for k, block in enumerate(blocks):
        if k:
            parts.append("\n\n")
            pos += 2
        pos = _place(_block_pieces(block, vocab), parts, pos, first, last)
    parts.append("\n")
    return "".join(parts), _page_spans(first, last, pos)


def _block_pieces(block: LineBlock, vocab: set[str]) -> list[tuple[str, int | None]]:
    """A block's text as (text, page) pieces, with its Markdown marks."""
    if block.kind == "table":
        return [(block.lines[0].table, block.lines[0].page)]
    if block.kind == "code":
        return _code_pieces(block)
    pieces = _pieces(block, vocab)
    if block.kind == "heading":
        pieces.insert(0, ("#" * block.level + " ", None))
    elif block.kind == "paragraph":
        pieces[0] = (text_line(pieces[0][0], ">|"), pieces[0][1])
    return pieces


def _place(
    pieces: list[tuple[str, int | None]],
    parts: list[str],
    pos: int,
    first: list[int],
    last: list[int],
) -> int:
    """Append a block's pieces to `parts` from offset `pos`, widening the spans of their
    pages (`first`, `last`); the offset after it. A block's marks (`## `, a code fence)
    belong to the page its text starts or ends on."""
    block_start, block_page = pos, None
    for text, page in pieces:
        if page is not None and text:
            if first[page] < 0:
                first[page] = block_start if block_page is None else pos
            last[page] = pos + len(text)
            block_page = page
        parts.append(text)
        pos += len(text)
    if block_page is not None:
        last[block_page] = pos
    return pos


def _page_spans(first: list[int], last: list[int], end: int) -> list[tuple[int, int]]:
    """Each page's span. A page without text gets an empty span where the next page's
    text starts, so that it never owns an offset (bisect lands on the later of equal starts)."""
    spans: list[tuple[int, int]] = []
    nxt = end
    for i in reversed(range(len(first))):
        if first[i] < 0:
            spans.append((nxt, nxt))
        else:
            spans.append((first[i], last[i]))
            nxt = first[i]
    return spans[::-1]
