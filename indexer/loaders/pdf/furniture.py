"""PDF layout: running headers, footers and page numbers (page furniture) to leave out.

Furniture is what repeats *as furniture*; a line is dropped only when all of this holds:

- **at the page's edge**: among the first (or last) three rows of the page, in its outer
  15%, with nothing but furniture between it and the edge, and set apart from the body by
  a gap (`GAP` x the body font: more than a line's leading leaves). A line glued to the
  text above or below it is body, even when every page repeats it (an invoice's payment
  note right under its amounts);
- **short and plain**: 80 characters or fewer, no larger than the body font, and not set
  as a heading (larger, or bold at the body size): a bold title at the top of every
  page is a heading, not a running header;
- **the same text on every page but for a page number**: at most one number changes from
  page to page and it changes with the page (number - page index is the same on all
  pages, and no larger than the document is long). `Sayfa 3 / 12` qualifies; invoice
  numbers, amounts and dates that differ between pages do not;
- **on most pages of a document long enough to tell**: on 40% of the pages or more, and
  on at least two, with body text at its place on few of the other pages.

A bare page number (`3`, `- 3 -`, `Page 3 of 10`, `iv`) at the edge qualifies by itself.
A header naming the current chapter (different text in each chapter) is furniture when it
is the first (or last) row, set apart by a blank line's space, at the same height on half
of the pages or more, and its text recurs (but for a page number) on two pages or more.
When in doubt, a line is kept: a kept running header is noise, a dropped line is lost.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .layout import Box

__all__ = ["GAP", "furniture", "page_number_like"]

BAND = 0.15  # the outer share of the page height headers and footers live in
EDGE_ROWS = 3  # rows at each edge that may be furniture
SHORT = 80  # characters: a longer line is body text
GAP = 0.8  # x body size: the space that sets furniture apart from the body
SHARE = 0.4  # of the pages a running line must be on
CONSTANT = 0.75  # share of its pages on which a number must hold to count as fixed

_PAGE_NUMBER = re.compile(
    r"^[-–—~(\[|]*\s*(?:(?:page|sayfa|seite|pág\.?|p\.|s\.)\s*)?\d{1,5}"
    r"(?:\s*(?:of|/|de|von|\|)\s*\d{1,5})?\s*[-–—~)\]|]*$",
    re.I,
)
_ROMAN = re.compile(r"^[ivxlcdm]{1,7}$", re.I)
_DIGITS = re.compile(r"\d+")


def page_number_like(text: str) -> bool:
    """A bare page number: `3`, `- 3 -`, `Page 3 of 10`, `Sayfa 3`, `3 / 10`, `iv`."""
    t = " ".join(text.split())
    return bool(_PAGE_NUMBER.match(t) or _ROMAN.match(t))


@dataclass(slots=True)
class EdgeText:
    """A text at a page's edge: the page, the numbers in it, and its fragments."""

    page: int
    numbers: tuple[int, ...]
    frags: list[Box]


def _key(text: str) -> tuple[str, tuple[int, ...]]:
    """Text with its numbers masked, and the numbers."""
    text = " ".join(text.lower().split())
    return _DIGITS.sub("#", text), tuple(int(d) for d in _DIGITS.findall(text))


def same_but_page_number(seen: list[EdgeText], n_pages: int) -> list[EdgeText]:
    """The occurrences of one masked text that are the same text but for a page number:
    every number fixed but at most one, which is the page index plus a constant (each on
    75% of the occurrences or more)."""
    if not seen:
        return []
    fixed = _fixed_numbers(seen)
    moving = [k for k, v in enumerate(fixed) if v is None]
    if len(moving) > 1:
        return []  # several numbers change: amounts, dates, ids - body text
    kept = [s for s in seen if _holds(s, fixed)]
    if moving and kept:
        return _with_the_page(kept, moving[0], len(seen), n_pages)
    return kept


def _holds(s: EdgeText, fixed: list[int | None]) -> bool:
    """Whether an occurrence has the fixed numbers."""
    return all(v is None or s.numbers[k] == v for k, v in enumerate(fixed))


def _fixed_numbers(seen: list[EdgeText]) -> list[int | None]:
    """Per number of the text, its value when it holds on 75% of the occurrences, else None."""
    fixed: list[int | None] = []
    for k in range(len(seen[0].numbers)):
        value, count = Counter(s.numbers[k] for s in seen).most_common(1)[0]
        fixed.append(value if count >= CONSTANT * len(seen) else None)
    return fixed


def _with_the_page(kept: list[EdgeText], k: int, n_seen: int, n_pages: int) -> list[EdgeText]:
    """The occurrences whose number `k` is the page index plus the most common constant;
    none when that holds on too few of the `n_seen` occurrences, or the constant is large."""
    offset, count = Counter(s.numbers[k] - s.page for s in kept).most_common(1)[0]
    if count < CONSTANT * n_seen:
        return []  # a number that does not follow the pages
    if abs(offset) > max(n_pages, 10):
        return []  # invoice 1001 on page 1: a number that grows with the page is no page number
    return [s for s in kept if s.numbers[k] - s.page == offset]


def _plain(frag: Box, body: float) -> bool:
    """Short, no larger than the body font, and not set as a heading."""
    heading = sum(c.isalpha() for c in frag.text) >= 2 and (
        frag.size >= body * 1.15 or frag.bold and frag.size >= body * 0.95
    )
    return len(frag.text) <= SHORT and frag.size <= body * 1.1 and not heading


def _top(row: list[Box]) -> float:
    return min(f.top for f in row)


def _bottom(row: list[Box]) -> float:
    return max(f.bottom for f in row)


def _edge_rows(rows: list[list[Box]], edge: int, height: float) -> list[int]:
    """Indices of the rows at an edge (0 top, -1 bottom) inside the outer band, outermost first."""
    order = range(len(rows)) if edge == 0 else range(len(rows) - 1, -1, -1)
    out: list[int] = []
    for k in list(order)[:EDGE_ROWS]:
        inside = (
            _bottom(rows[k]) < BAND * height if edge == 0 else _top(rows[k]) > (1 - BAND) * height
        )
        if not inside:
            break
        out.append(k)
    return out


def _gap(rows: list[list[Box]], k: int, edge: int) -> float | None:
    """Space between row k and the next row inward (None: no row there)."""
    nxt = k + 1 if edge == 0 else k - 1
    if not 0 <= nxt < len(rows):
        return None
    return _top(rows[nxt]) - _bottom(rows[k]) if edge == 0 else _top(rows[k]) - _bottom(rows[nxt])


def _chain(
    rows: list[list[Box]],
    edge: int,
    height: float,
    body: float,
    is_furniture: Callable[[Box], bool],
) -> tuple[list[int], bool]:
    """The rows at an edge that are furniture (all their fragments are), outermost first,
    cut back until a gap sets them apart from the next row; and whether body text follows."""
    chain: list[int] = []
    for k in _edge_rows(rows, edge, height):
        if not all(is_furniture(f) for f in rows[k]):
            break
        chain.append(k)
    while chain:
        gap = _gap(rows, chain[-1], edge)
        if gap is None:
            return chain, False  # nothing but furniture on the page
        if gap >= GAP * body:
            return chain, True
        chain.pop()
    return [], False


def furniture(pages_rows: list[list[list[Box]]], heights: list[float], body: float) -> set[int]:
    """ids of the fragments that are running headers/footers or page numbers (the rules
    are in the module's docstring). A page's rows may be only its first and last five:
    nothing further from the edge is looked at."""
    n = len(pages_rows)
    need = max(2, math.ceil(SHARE * n))
    seen = _edge_texts(pages_rows, heights, body)
    running = _running(seen, n, need)
    while True:  # keep the texts that are furniture where they stand, until nothing changes
        chains = _chains(pages_rows, heights, body, _furniture_test(running))
        on_pages = _pages_standing(running, chains, pages_rows)
        dropped = {id(f) for p, _, chain, _ in chains for k in chain for f in pages_rows[p][k]}
        still = {
            key: group
            for key, group in running.items()
            if len(on_pages[key]) >= need
            and not _body_at_its_place(key, seen[key], on_pages[key], pages_rows, dropped)
        }
        if still.keys() == running.keys():
            break
        running = still
    return dropped | _chapter_headers(pages_rows, heights, body, chains)


_Key = tuple[int, str]  # an edge (0 top, -1 bottom) and a text with its numbers masked
_Chain = tuple[int, int, list[int], bool]  # page, edge, its furniture rows, body text follows


def _running(seen: dict[_Key, list[EdgeText]], n: int, need: int) -> dict[_Key, set[int]]:
    """The texts that are the same but for a page number on `need` pages or more, with
    the ids of their fragments."""
    running: dict[_Key, set[int]] = {}
    for key, occurrences in seen.items():
        kept = same_but_page_number(occurrences, n)
        if len({s.page for s in kept}) >= need:
            running[key] = {id(s.frags[0]) for s in kept}
    return running


def _furniture_test(running: dict[_Key, set[int]]) -> Callable[[Box], bool]:
    """Whether a fragment is furniture: one of the running texts, or a bare page number."""
    ids = {i for group in running.values() for i in group}

    def is_furniture(frag: Box) -> bool:
        return id(frag) in ids or page_number_like(frag.text)

    return is_furniture


def _edge_texts(
    pages_rows: list[list[list[Box]]], heights: list[float], body: float
) -> dict[_Key, list[EdgeText]]:
    """The plain fragments in the rows at each page's edges, by edge and masked text."""
    seen: dict[_Key, list[EdgeText]] = {}
    for p, rows in enumerate(pages_rows):
        for edge in (0, -1):
            for k in _edge_rows(rows, edge, heights[p]):
                for frag in rows[k]:
                    if _plain(frag, body):
                        masked, numbers = _key(frag.text)
                        seen.setdefault((edge, masked), []).append(EdgeText(p, numbers, [frag]))
    return seen


def _pages_standing(
    running: dict[_Key, set[int]], chains: list[_Chain], pages_rows: list[list[list[Box]]]
) -> dict[_Key, set[int]]:
    """Per running text, the pages where it is in a chain of furniture set apart from body text."""
    on_pages: dict[_Key, set[int]] = {key: set() for key in running}
    for p, edge, chain, has_body in chains:
        if not has_body:
            continue
        for k in chain:
            for frag in pages_rows[p][k]:
                for key, group in running.items():
                    if key[0] == edge and id(frag) in group:
                        on_pages[key].add(p)
    return on_pages


def _chains(
    pages_rows: list[list[list[Box]]],
    heights: list[float],
    body: float,
    is_furniture: Callable[[Box], bool],
) -> list[_Chain]:
    return [
        (p, edge, *_chain(rows, edge, heights[p], body, is_furniture))
        for p, rows in enumerate(pages_rows)
        for edge in (0, -1)
    ]


def _body_at_its_place(
    key: _Key,
    seen: list[EdgeText],
    pages: set[int],
    pages_rows: list[list[list[Box]]],
    dropped: set[int],
) -> bool:
    """Do other pages put body text where this text stands, on more than half as many
    pages as it is on? (A line in the body area, repeated, is still body.)"""
    place = _place([s.frags[0] for s in seen if s.page in pages])
    conflicts = sum(
        1
        for p, rows in enumerate(pages_rows)
        if p not in pages and _body_there(rows, key[0], place, dropped)
    )
    return conflicts * 2 > len(pages)


_Place = tuple[float, float, float, float]  # top, bottom, x0, x1


def _place(frags: list[Box]) -> _Place:
    """Where a text stands on its pages: its median top and bottom, and its widest extent."""
    top = sorted(f.top for f in frags)[len(frags) // 2]
    bottom = sorted(f.bottom for f in frags)[len(frags) // 2]
    return top, bottom, min(f.x0 for f in frags), max(f.x1 for f in frags)


def _body_there(rows: list[list[Box]], edge: int, place: _Place, dropped: set[int]) -> bool:
    """Whether a fragment not dropped in the rows at a page's edge overlaps a place."""
    top, bottom, x0, x1 = place
    return any(
        f.top < bottom and f.bottom > top and f.x0 < x1 and f.x1 > x0 and id(f) not in dropped
        for row in (rows[:EDGE_ROWS] if edge == 0 else rows[-EDGE_ROWS:])
        for f in row
    )


def _chapter_headers(
    pages_rows: list[list[list[Box]]], heights: list[float], body: float, chains: list[_Chain]
) -> set[int]:
    """ids of the fragments of headers naming the current chapter: the first (or last) row
    left, set apart by a blank line's space, plain, at the same height on half of the pages
    or more, and the same text (but for a page number) on two pages or more."""
    n = len(pages_rows)
    drop: set[int] = set()
    for edge in (0, -1):
        at: dict[int, list[EdgeText]] = {}
        for p, e, chain, _ in chains:
            row = (
                _header_row(pages_rows[p], len(chain), edge, heights[p], body)
                if e == edge
                else None
            )
            if row is not None:
                _, numbers = _key(" ".join(f.text for f in row if not page_number_like(f.text)))
                at.setdefault(round(row[0].y / 2), []).append(EdgeText(p, numbers, row))
        for found in at.values():
            if len(found) >= max(3, n / 2):
                drop |= _recurring(found, n)
    return drop


def _header_row(
    rows: list[list[Box]], n_chain: int, edge: int, height: float, body: float
) -> list[Box] | None:
    """The row inward of the `n_chain` furniture rows at an edge, when it is inside the
    edge's band, set apart by a blank line's space and plain (but for page numbers)."""
    if n_chain >= len(rows):
        return None
    k = n_chain if edge == 0 else len(rows) - 1 - n_chain
    gap = _gap(rows, k, edge)
    if k not in _edge_rows(rows, edge, height) or gap is None or gap < body:
        return None
    return rows[k] if _plain_text(rows[k], body) else None


def _plain_text(row: list[Box], body: float) -> bool:
    """Whether a row has text but page numbers, all of it plain."""
    text = [f for f in row if not page_number_like(f.text)]
    return bool(text) and all(_plain(f, body) for f in text)


def _recurring(found: list[EdgeText], n: int) -> set[int]:
    """ids of the fragments of the rows whose text (but for a page number) is on two
    pages or more."""
    by_text: dict[str, list[EdgeText]] = {}
    for s in found:
        text = " ".join(f.text for f in s.frags if not page_number_like(f.text))
        by_text.setdefault(_key(text)[0], []).append(s)
    drop: set[int] = set()
    for same in by_text.values():
        kept = same_but_page_number(same, n)
        if len({s.page for s in kept}) >= 2:
            drop.update(id(f) for s in kept for f in s.frags)
    return drop
