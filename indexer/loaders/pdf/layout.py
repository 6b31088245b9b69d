"""PDF layout, first half: glyphs to lines, in reading order.

A reader gives `Page`s of `Glyph`s and rule segments (`pdf.reader` reads them with
PDFium; bench/pdf_compare.py feeds other libraries). Glyphs become words, and the words
of a row become fragments wherever a gap is wider than a gutter (`fragments`); running
headers, footers and page numbers among them are found by `furniture`. The fragments
of a page are read in order: columns left then right, by recursive cuts along white
gutters (`reading_order`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from array import array
from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple

__all__ = [
    "Box", "GUTTER_LINES", "Glyph", "Glyphs", "Packed", "Page", "fixed_pitch", "fragments",
    "merge_boxes", "reading_order", "rows_of", "words_of",
]


class Glyph(NamedTuple):
    """One character in page display coordinates: points, origin top-left, y downwards;
    `y` is the baseline. A reader may hand plain tuples in this field order."""

    text: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool
    mono: bool = False  # a fixed-pitch font: code


@dataclass(slots=True)
class Glyphs:
    """A page's glyphs as columns, one entry a glyph (what a fast reader hands over:
    appending to a few lists costs less than a tuple a glyph, and words are found in bulk)."""

    text: list[str] = field(default_factory=list)
    x0: list[float] = field(default_factory=list)
    x1: list[float] = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    size: list[float] = field(default_factory=list)
    bold: list[bool] = field(default_factory=list)
    mono: list[bool] = field(default_factory=list)

    @classmethod
    def of(cls, glyphs: list[Glyph]) -> Glyphs:
        return cls(*(list(map(itemgetter(k), glyphs)) for k in range(7)))


@dataclass(slots=True)
class Page:
    width: float
    height: float
    glyphs: list[Glyph] | Glyphs = field(default_factory=list)  # in content order
    rules: list[tuple[float, float, float, float]] = field(default_factory=list)  # x0, y0, x1, y1 segments
    images: int = 0


_SPACE = re.compile(r"\s")
_NARROW = frozenset(".,:;'!|iljI()[]")  # letters a proportional font sets narrow...
_WIDE = frozenset("mwMW@%")  # ...and wide
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})


def fixed_pitch(text: list[str], x0: list[float], x1: list[float]) -> bool | None:
    """Do glyphs of one font advance alike though they hold narrow and wide letters
    (`i` about as wide as `m`: a fixed-pitch font, whatever its name says)? None when
    the text holds no narrow or no wide letter to tell."""
    narrow = [b - a for c, a, b in zip(text, x0, x1) if c in _NARROW]
    wide = [b - a for c, a, b in zip(text, x0, x1) if c in _WIDE]
    if not narrow or not wide:
        return None
    return sum(wide) / len(wide) <= 1.15 * sum(narrow) / len(narrow)


@dataclass(slots=True)
class Box:
    """A word, a line fragment, a line or a table, in display coordinates."""

    text: str
    x0: float
    x1: float
    y: float  # baseline
    size: float
    bold: bool
    page: int = 0
    table: str = ""  # Markdown of a table box
    top_: float = 0.0
    bottom_: float = 0.0
    mono: bool = False

    @property
    def top(self) -> float:
        return self.top_ if self.table else self.y - 0.8 * self.size

    @property
    def bottom(self) -> float:
        return self.bottom_ if self.table else self.y + 0.25 * self.size


def words_of(glyphs: list[Glyph] | Glyphs, page_no: int) -> list[Box]:
    """Words from glyphs in content order: a space, a jump back or down, or a gap wider
    than 0.15 em ends a word. The glyphs of a page are compared in bulk (numpy)."""
    import numpy as np

    g = glyphs if isinstance(glyphs, Glyphs) else Glyphs.of(glyphs)
    if not g.text:
        return []
    chars = g.text
    joined = "".join(chars)
    if len(joined) == len(chars) and joined.isprintable() and not _SPACE.search(joined):
        skip = np.zeros(len(chars), dtype=bool)  # no blank to skip (the usual page)
    else:
        blank = {c: c.isspace() or not c.isprintable() and c != "\u00ad" for c in set(chars)}
        skip = np.array([blank[c] for c in chars], dtype=bool)
    x0, x1, y, size = np.array(g.x0, dtype=float), np.array(g.x1, dtype=float), np.array(g.y, dtype=float), np.array(
        g.size, dtype=float)
    em = np.maximum(size[1:], size[:-1])
    start = np.ones(len(chars), dtype=bool)  # a glyph that does not go on with the one before it
    start[1:] = skip[:-1] | (np.abs(y[1:] - y[:-1]) > 0.35 * em) | (x0[1:] - x1[:-1] > 0.15 * em) | (x0[1:] < x0[:-1] - 0.2 * em)
    kept = np.flatnonzero(~skip)
    if not len(kept):
        return []
    starts = np.flatnonzero(start[kept])  # word starts, counted among the kept glyphs
    ends = np.append(starts[1:], len(kept))
    mids = kept[starts + (ends - starts) // 2]
    half = (ends - starts) / 2
    if len(kept) < len(chars):
        chars = [chars[i] for i in kept.tolist()]
        joined = "".join(chars)
    bounds = zip(starts.tolist(), ends.tolist())
    if len(joined) == len(chars):  # one character a glyph: slice the page's text
        texts = [joined[a:b] for a, b in bounds]
    else:
        texts = ["".join(chars[a:b]) for a, b in bounds]
    columns = zip(
        texts, x0[kept[starts]].tolist(), np.maximum.reduceat(x1[kept], starts).tolist(), y[mids].tolist(),
        (np.round(size[mids] * 2) / 2).tolist(),
        (np.add.reduceat(np.array(g.bold, dtype=int)[kept], starts) > half).tolist(),
        (np.add.reduceat(np.array(g.mono, dtype=int)[kept], starts) > half).tolist(),
    )
    words = []
    for text, left, right, base, em_size, heavy, fixed in columns:
        if not text.isascii():  # ligatures, soft hyphens and composed letters are never ASCII
            text = unicodedata.normalize("NFC", text.translate(_LIGATURES)).replace("\u00ad", "")
            if not text:
                continue
        words.append(Box(text, left, right, base, em_size, heavy, page_no, mono=fixed))
    return words


class Packed:
    """Boxes of one page held compactly (text as UTF-8; position and size as float32, the
    precision PDFium reports them in; weight), alone or as rows, so that a document's
    worth of pages waits for the next pass in a fraction of the memory of Box objects."""

    __slots__ = ("texts", "numbers", "flags", "lengths")

    def __init__(self, boxes: list[Box], lengths: list[int] | None = None):
        self.texts = "\x00".join([b.text for b in boxes]).encode()  # no box text holds a NUL (not printable)
        self.numbers = (
            array("f", [b.x0 for b in boxes]), array("f", [b.x1 for b in boxes]),
            array("f", [b.y for b in boxes]), array("f", [b.size for b in boxes]),
        )
        self.flags = bytes([b.bold | b.mono << 1 for b in boxes])
        self.lengths = array("I", lengths or ())

    @classmethod
    def of_rows(cls, rows: list[list[Box]]) -> Packed:
        return cls([b for row in rows for b in row], [len(row) for row in rows])

    def boxes(self, page_no: int) -> list[Box]:
        if not self.flags:
            return []
        return [
            Box(text, x0, x1, y, size, bool(f & 1), page_no, mono=bool(f & 2))
            for text, x0, x1, y, size, f in zip(self.texts.decode().split("\x00"), *self.numbers, self.flags)
        ]

    def rows(self, page_no: int) -> list[list[Box]]:
        boxes, rows, at = self.boxes(page_no), [], 0
        for n in self.lengths:
            rows.append(boxes[at : at + n])
            at += n
        return rows


def rows_of(boxes: list[Box]) -> list[list[Box]]:
    """Boxes grouped by shared baseline (within 0.3 em), top to bottom, each row left to right."""
    rows: list[list[Box]] = []
    for b in sorted(boxes, key=lambda b: b.y):
        if rows and abs(b.y - rows[-1][0].y) <= 0.3 * max(b.size, rows[-1][0].size):
            rows[-1].append(b)
        else:
            rows.append([b])
    for row in rows:
        row.sort(key=lambda b: b.x0)
    return rows


def merge_boxes(boxes: list[Box]) -> Box:
    """Boxes side by side as one: words joined by a space (code keeps its spacing)."""
    size = boxes[0].size
    if any(b.size != size for b in boxes):  # the size most characters have
        chars: Counter[float] = Counter()
        for b in boxes:
            chars[b.size] += len(b.text)
        size = chars.most_common(1)[0][0]
    mono = all(b.mono for b in boxes) or _code_with_marks(boxes)
    if mono and len(boxes) > 1:
        advance = sum(b.x1 - b.x0 for b in boxes) / max(1, sum(len(b.text) for b in boxes))
        text = boxes[0].text
        for a, b in zip(boxes, boxes[1:]):
            text += " " * max(1, round((b.x0 - a.x1) / advance)) + b.text
    else:
        text = " ".join(b.text for b in boxes)
    return Box(
        text, boxes[0].x0, max(b.x1 for b in boxes), boxes[0].y,
        size, all(b.bold for b in boxes), boxes[0].page, mono=mono,
    )


def _code_with_marks(boxes: list[Box]) -> bool:
    """A code line with a few characters in a smaller other font (a raised mark)?"""
    code = [b for b in boxes if b.mono]
    marks = [b for b in boxes if not b.mono]
    return bool(code) and all(m.size < min(b.size for b in code) for m in marks) and (
        10 * sum(len(m.text) for m in marks) <= sum(len(b.text) for b in code)
    )


def fragments(words: list[Box], gutter: float) -> list[list[Box]]:
    """Rows of line fragments: words of a row joined while the gap stays under `gutter`
    (or both words are code, whose alignment makes wide gaps)."""
    out = []
    for row in rows_of(words):
        frags, cur = [], [row[0]]
        for w in row[1:]:
            if w.x0 - cur[-1].x1 >= gutter and not (w.mono and cur[-1].mono):
                frags.append(merge_boxes(cur))
                cur = []
            cur.append(w)
        frags.append(merge_boxes(cur))
        out.append(frags)
    return out


# ---- reading order


def _free(strip: list[Box], lo: float, hi: float, gutter: float) -> list[tuple[float, float]]:
    gaps, x = [], lo
    for b in sorted(strip, key=lambda b: b.x0):
        if b.x0 - x >= gutter:
            gaps.append((x, b.x0))
        x = max(x, b.x1)
    if hi - x >= gutter:
        gaps.append((x, hi))
    return gaps


def _across(strips: list[list[Box]], g0: float, g1: float) -> list[str]:
    """How each strip meets the channel g0..g1: "beside" when it holds text on both
    sides, a column's lines: the right side starts where it does on another strip (the
    column's edge), or the gap there is wider than the strip's other gaps; "through"
    when the gap is one of the alike spaces of a line that runs across (justified
    text); "" when its text stands on one side only."""
    sides: list[tuple[float, bool] | None] = []
    for strip in strips:
        xs = sorted(strip, key=lambda b: b.x0)
        left = [b.x1 for b in xs if b.x1 <= g0 + 0.01]
        right = [b.x0 for b in xs if b.x0 >= g1 - 0.01]
        if not left or not right:
            sides.append(None)
            continue
        gap = min(right) - max(left)
        spaces = [b.x0 - a.x1 for a, b in zip(xs, xs[1:])
                  if not (a.x1 <= g0 + 0.01 and b.x0 >= g1 - 0.01)]
        sides.append((min(right), all(space < 0.8 * gap for space in spaces)))
    edges = Counter(round(s[0]) for s in sides if s)
    kinds = []
    for side in sides:
        if side is None:
            kinds.append("")
        else:
            edge = sum(edges[round(side[0]) + d] for d in (-1, 0, 1)) >= 2
            kinds.append("beside" if edge or side[1] else "through")
    return kinds


def _inner(gaps: list[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    """The gaps with text on both sides somewhere (not along the left or right margin)."""
    return [(g0, g1) for g0, g1 in gaps if g0 > lo + 0.01 and g1 < hi - 0.01]


def _intersect(a, b, gutter):
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi - lo >= gutter:
                out.append((lo, hi))
    return out


GUTTER_LINES = 3  # strips a white channel must run down to be a gutter between columns


def _gutter(strips: list[list[Box]], common: list[tuple[float, float]], lo: float, hi: float,
            gutter: float) -> tuple[float, int] | None:
    """Where to cut strips that share the white channels `common` into a left and a
    right part, and how many of the strips the columns take (they end at a line of
    text running through the channel); None when no channel is a gutter."""
    narrow = max(7.5 * gutter, 0.12 * (hi - lo))
    for g0, g1 in sorted(common if len(strips) >= GUTTER_LINES else (), key=lambda g: g[0] - g[1]):
        kinds = _across(strips, g0, g1)
        n = kinds.index("through") if "through" in kinds else len(kinds)
        if n < GUTTER_LINES or kinds[:n].count("beside") < 2:
            continue  # a space of a line or two, above short lines: no gutter
        region = [b for strip in strips[:n] for b in strip]
        left = [b for b in region if b.x1 <= g0 + 0.01]
        right = [b for b in region if b.x0 >= g1 - 0.01]
        if min(max(b.x1 for b in left) - min(b.x0 for b in left),
               max(b.x1 for b in right) - min(b.x0 for b in right)) >= narrow:
            return (g0 + g1) / 2, n
    return None


def reading_order(items: list[Box], lo: float, hi: float, gutter: float, depth: int = 0) -> list[list[Box]]:
    """Items in reading order, as lines (lists of items side by side).

    Items are cut into strips (runs that overlap vertically); consecutive strips that
    share a white channel form a region, which is read as its left part then its right
    part, each recursively, when the channel is a gutter: it runs down `GUTTER_LINES`
    strips or more, two of them or more hold text on both of its sides with the gap
    there wider than their other gaps, and both parts are wide enough to be columns (a
    column of numbers or labels is not: a table of contents reads row by row). The
    columns end at a line whose spaces run through the channel. A wide space in a
    justified line, or in a line of code, over short lines below it is no gutter, nor
    are the alike spaces of justified lines that happen to line up. A strip that opens
    no region is read as a line, and the search starts again below it."""
    strips: list[list[Box]] = []
    bottom = -math.inf
    for b in sorted(items, key=lambda b: (b.top, b.x0)):
        if strips and b.top < bottom - 0.5:
            strips[-1].append(b)
            bottom = max(bottom, b.bottom)
        else:
            strips.append([b])
            bottom = b.bottom
    lines: list[list[Box]] = []
    free = [_free(strip, lo, hi, gutter) for strip in strips]
    i = 0
    while i < len(strips):
        common = free[i]
        j = i + 1
        while j < len(strips) and common:
            nxt = _inner(_intersect(common, free[j], gutter), lo, hi)
            if not nxt:  # the channel ends (white along a margin is no channel)
                break
            common, j = nxt, j + 1
        found = _gutter(strips[i:j], common, lo, hi, gutter) if depth < 12 else None
        if found is not None:
            cut, n = found
            region = [b for strip in strips[i : i + n] for b in strip]
            lines += reading_order([b for b in region if b.x1 <= cut], lo, cut, gutter, depth + 1)
            lines += reading_order([b for b in region if b.x0 >= cut], cut, hi, gutter, depth + 1)
            i += n
        else:  # no columns from here: read this strip, look again from the next one
            lines.append(sorted(strips[i], key=lambda b: b.x0))
            i += 1
    return lines
