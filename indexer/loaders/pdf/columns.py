"""PDF layout: the reading order of a page's fragments. Columns are read left then right,
by recursive cuts along white gutters (`reading_order` says when a channel is one)."""

from __future__ import annotations

import math
from collections import Counter

from .layout import Box

__all__ = ["GUTTER_LINES", "reading_order"]


def _free(strip: list[Box], lo: float, hi: float, gutter: float) -> list[tuple[float, float]]:
    gaps: list[tuple[float, float]] = []
    x = lo
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
    sides = [_sides(strip, g0, g1) for strip in strips]
    edges = Counter(round(s[0]) for s in sides if s)
    return [_meets(side, edges) for side in sides]


def _sides(strip: list[Box], g0: float, g1: float) -> tuple[float, bool] | None:
    """Where a strip's text right of the channel g0..g1 starts, and whether the gap
    across it is wider than the strip's other gaps; None when its text is on one side."""
    xs = sorted(strip, key=lambda b: b.x0)
    left = [b.x1 for b in xs if b.x1 <= g0 + 0.01]
    right = [b.x0 for b in xs if b.x0 >= g1 - 0.01]
    if not left or not right:
        return None
    gap = min(right) - max(left)
    spaces = [
        b.x0 - a.x1 for a, b in zip(xs, xs[1:]) if not (a.x1 <= g0 + 0.01 and b.x0 >= g1 - 0.01)
    ]
    return min(right), all(space < 0.8 * gap for space in spaces)


def _meets(side: tuple[float, bool] | None, edges: Counter[int]) -> str:
    """ "beside", "through" or "" (see `_across`), from a strip's `_sides` and how many
    strips have their right side start at each x."""
    if side is None:
        return ""
    edge = sum(edges[round(side[0]) + d] for d in (-1, 0, 1)) >= 2
    return "beside" if edge or side[1] else "through"


def _inner(gaps: list[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    """The gaps with text on both sides somewhere (not along the left or right margin)."""
    return [(g0, g1) for g0, g1 in gaps if g0 > lo + 0.01 and g1 < hi - 0.01]


def _intersect(
    a: list[tuple[float, float]], b: list[tuple[float, float]], gutter: float
) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi - lo >= gutter:
                out.append((lo, hi))
    return out


GUTTER_LINES = 3  # strips a white channel must run down to be a gutter between columns


def _gutter(
    strips: list[list[Box]], common: list[tuple[float, float]], lo: float, hi: float, gutter: float
) -> tuple[float, int] | None:
    """Where to cut strips that share the white channels `common` into a left and a
    right part, and how many of the strips the columns take (they end at a line of
    text running through the channel); None when no channel is a gutter."""
    narrow = max(7.5 * gutter, 0.12 * (hi - lo))
    for g0, g1 in sorted(common if len(strips) >= GUTTER_LINES else (), key=lambda g: g[0] - g[1]):
        n = _column_strips(_across(strips, g0, g1))
        if n is None:
            continue  # a space of a line or two, above short lines: no gutter
        region = [b for strip in strips[:n] for b in strip]
        if _both_wide(region, g0, g1, narrow):
            return (g0 + g1) / 2, n
    return None


def _column_strips(kinds: list[str]) -> int | None:
    """How many strips columns at a channel take (up to a line running through it);
    None when too few, or too few of them hold text on both sides."""
    n = kinds.index("through") if "through" in kinds else len(kinds)
    if n < GUTTER_LINES or kinds[:n].count("beside") < 2:
        return None
    return n


def _both_wide(region: list[Box], g0: float, g1: float, narrow: float) -> bool:
    """Whether the text left and right of the channel g0..g1 is wider than `narrow` on both sides."""
    left = [b for b in region if b.x1 <= g0 + 0.01]
    right = [b for b in region if b.x0 >= g1 - 0.01]
    return min(_width(left), _width(right)) >= narrow


def _width(boxes: list[Box]) -> float:
    return max(b.x1 for b in boxes) - min(b.x0 for b in boxes)


def reading_order(
    items: list[Box], lo: float, hi: float, gutter: float, depth: int = 0
) -> list[list[Box]]:
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
    strips = _strips(items)
    lines: list[list[Box]] = []
    free = [_free(strip, lo, hi, gutter) for strip in strips]
    i = 0
    while i < len(strips):
        common, j = _channel(free, i, lo, hi, gutter)
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


def _strips(items: list[Box]) -> list[list[Box]]:
    """Items top down in strips: runs of items that overlap vertically."""
    strips: list[list[Box]] = []
    bottom = -math.inf
    for b in sorted(items, key=lambda b: (b.top, b.x0)):
        if strips and b.top < bottom - 0.5:
            strips[-1].append(b)
            bottom = max(bottom, b.bottom)
        else:
            strips.append([b])
            bottom = b.bottom
    return strips


def _channel(
    free: list[list[tuple[float, float]]], i: int, lo: float, hi: float, gutter: float
) -> tuple[list[tuple[float, float]], int]:
    """The white channels strip `i` shares with the strips below it, and the end of the
    run of strips that share one (white along a margin is no channel)."""
    common = free[i]
    j = i + 1
    while j < len(free) and common:
        nxt = _inner(_intersect(common, free[j], gutter), lo, hi)
        if not nxt:  # the channel ends
            break
        common, j = nxt, j + 1
    return common, j
