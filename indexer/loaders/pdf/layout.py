"""PDF layout, first half: glyphs to lines, in reading order.

A reader gives `Page`s of `Glyph`s and rule segments (`pdf.reader` reads them with
PDFium; bench/pdf_compare.py feeds other libraries). Glyphs become words, and the words
of a row become fragments wherever a gap is wider than a gutter (`fragments`); running
headers, footers and page numbers among them are found by `furniture`. The fragments
of a page are read in order: columns left then right, by recursive cuts along white
gutters (`columns.reading_order`).
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Box",
    "Glyph",
    "Glyphs",
    "Packed",
    "Page",
    "fixed_pitch",
    "fragments",
    "merge_boxes",
    "rows_of",
    "words_of",
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
    # x0, y0, x1, y1 segments
    rules: list[tuple[float, float, float, float]] = field(default_factory=list)
    images: int = 0


_SPACE = re.compile(r"\s")
_NARROW = frozenset(".,:;'!|iljI()[]")  # letters a proportional font sets narrow...
_WIDE = frozenset("mwMW@%")  # ...and wide
_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
)


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
    skip = _blanks(g.text)
    x0, x1, y, size = (np.array(v, dtype=float) for v in (g.x0, g.x1, g.y, g.size))
    start = _word_starts(skip, x0, x1, y, size)
    kept = np.flatnonzero(~skip)
    if not len(kept):
        return []
    starts = np.flatnonzero(start[kept])  # word starts, counted among the kept glyphs
    ends = np.append(starts[1:], len(kept))
    mids = kept[starts + (ends - starts) // 2]
    half = (ends - starts) / 2
    columns = zip(
        _texts(g.text, kept, starts, ends),
        x0[kept[starts]].tolist(),
        np.maximum.reduceat(x1[kept], starts).tolist(),
        y[mids].tolist(),
        (np.round(size[mids] * 2) / 2).tolist(),
        (np.add.reduceat(np.array(g.bold, dtype=int)[kept], starts) > half).tolist(),
        (np.add.reduceat(np.array(g.mono, dtype=int)[kept], starts) > half).tolist(),
    )
    return _words(columns, page_no)


def _blanks(chars: list[str]) -> np.ndarray:
    """Per glyph, whether it is blank (a space or not printable, a soft hyphen aside)."""
    import numpy as np

    joined = "".join(chars)
    if len(joined) == len(chars) and joined.isprintable() and not _SPACE.search(joined):
        return np.zeros(len(chars), dtype=bool)  # no blank to skip (the usual page)
    blank = {c: c.isspace() or not c.isprintable() and c != "\u00ad" for c in set(chars)}
    return np.array([blank[c] for c in chars], dtype=bool)


def _word_starts(
    skip: np.ndarray, x0: np.ndarray, x1: np.ndarray, y: np.ndarray, size: np.ndarray
) -> np.ndarray:
    """Per glyph, whether it does not go on with the one before it (a new word)."""
    import numpy as np

    em = np.maximum(size[1:], size[:-1])
    start = np.ones(len(skip), dtype=bool)
    start[1:] = (
        skip[:-1]
        | (np.abs(y[1:] - y[:-1]) > 0.35 * em)
        | (x0[1:] - x1[:-1] > 0.15 * em)
        | (x0[1:] < x0[:-1] - 0.2 * em)
    )
    return start


def _texts(chars: list[str], kept: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """The words' texts: the kept glyphs from each start to its end."""
    if len(kept) < len(chars):
        chars = [chars[i] for i in kept.tolist()]
    joined = "".join(chars)
    bounds = zip(starts.tolist(), ends.tolist())
    if len(joined) == len(chars):  # one character a glyph: slice the page's text
        return [joined[a:b] for a, b in bounds]
    return ["".join(chars[a:b]) for a, b in bounds]


def _words(
    columns: Iterable[tuple[str, float, float, float, float, bool, bool]], page_no: int
) -> list[Box]:
    """Boxes of the words (text, x0, x1, baseline, size, bold, mono), their text NFC
    with ligatures spelt out and soft hyphens gone."""
    words = []
    for text, left, right, base, em_size, heavy, fixed in columns:
        if not text.isascii():  # ligatures, soft hyphens and composed letters are never ASCII
            text = unicodedata.normalize("NFC", text.translate(_LIGATURES)).replace("\u00ad", "")
            if not text:
                continue
        words.append(
            Box(text, left, right, y=base, size=em_size, bold=heavy, page=page_no, mono=fixed)
        )
    return words


class Packed:
    """Boxes of one page held compactly (text as UTF-8; position and size as float32, the
    precision PDFium reports them in; weight), alone or as rows, so that a document's
    worth of pages waits for the next pass in a fraction of the memory of Box objects."""

    __slots__ = ("texts", "numbers", "flags", "lengths")

    def __init__(self, boxes: list[Box], lengths: list[int] | None = None):
        self.texts = "\x00".join(
            [b.text for b in boxes]
        ).encode()  # no box text holds a NUL (not printable)
        self.numbers = (
            array("f", [b.x0 for b in boxes]),
            array("f", [b.x1 for b in boxes]),
            array("f", [b.y for b in boxes]),
            array("f", [b.size for b in boxes]),
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
            Box(text, x0, x1, y=y, size=size, bold=bool(f & 1), page=page_no, mono=bool(f & 2))
            for text, x0, x1, y, size, f in zip(
                self.texts.decode().split("\x00"), *self.numbers, self.flags
            )
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
    size = _common_size(boxes)
    mono = all(b.mono for b in boxes) or _code_with_marks(boxes)
    text = _spaced(boxes) if mono and len(boxes) > 1 else " ".join(b.text for b in boxes)
    return Box(
        text,
        boxes[0].x0,
        max(b.x1 for b in boxes),
        y=boxes[0].y,
        size=size,
        bold=all(b.bold for b in boxes),
        page=boxes[0].page,
        mono=mono,
    )


def _common_size(boxes: list[Box]) -> float:
    """The font size most of the boxes' characters have."""
    size = boxes[0].size
    if all(b.size == size for b in boxes):
        return size
    chars: Counter[float] = Counter()
    for b in boxes:
        chars[b.size] += len(b.text)
    return chars.most_common(1)[0][0]


def _spaced(boxes: list[Box]) -> str:
    """Code's text: boxes joined by as many spaces as their gaps hold characters."""
    advance = sum(b.x1 - b.x0 for b in boxes) / max(1, sum(len(b.text) for b in boxes))
    text = boxes[0].text
    for a, b in zip(boxes, boxes[1:]):
        text += " " * max(1, round((b.x0 - a.x1) / advance)) + b.text
    return text


def _code_with_marks(boxes: list[Box]) -> bool:
    """A code line with a few characters in a smaller other font (a raised mark)?"""
    code = [b for b in boxes if b.mono]
    marks = [b for b in boxes if not b.mono]
    if not code:
        return False
    smallest = min(b.size for b in code)
    few = 10 * sum(len(m.text) for m in marks) <= sum(len(b.text) for b in code)
    return all(m.size < smallest for m in marks) and few


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
