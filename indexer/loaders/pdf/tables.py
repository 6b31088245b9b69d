"""PDF layout: ruled tables to Markdown tables.

Horizontal and vertical rule segments that cross form a grid; the words inside it go to
its cells (a cell spanning several grid columns gives its text to the first), rows
without rules between them are told apart by their lines, and a grid that frames running
text (a cell many lines tall) is no table.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .layout import Box, rows_of

__all__ = ["ruled_tables"]


Segment = tuple[float, float, float]  # (start, end, position) of a rule


def _cluster(values: list[float], tol: float) -> list[float]:
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= tol:
            out[-1].append(v)
        else:
            out.append([v])
    return [sum(c) / len(c) for c in out]


def _join_segments(segments: list[Segment], tol: float) -> list[Segment]:
    """Collinear (start, end, position) segments that touch or overlap, as one (a rule
    drawn cell by cell is one rule)."""
    out: list[list[float]] = []
    for a, b, pos in sorted(segments, key=lambda s: (round(s[2] / tol), s[0])):
        last = out[-1] if out else None
        if last and abs(last[2] - pos) <= tol / 2 and a <= last[1] + tol:
            last[1] = max(last[1], b)
        else:
            out.append([a, b, pos])
    return [(a, b, pos) for a, b, pos in out]


def _rules(rules: Iterable[Sequence[float]], tol: float) -> tuple[list[Segment], list[Segment]]:
    """The horizontal and the vertical rules of a page, each joined into whole rules."""
    hs, vs = [], []
    for x0, y0, x1, y1 in rules:
        if abs(y1 - y0) < 1 and abs(x1 - x0) > 4:
            hs.append((min(x0, x1), max(x0, x1), (y0 + y1) / 2))
        if abs(x1 - x0) < 1 and abs(y1 - y0) > 4:
            vs.append((min(y0, y1), max(y0, y1), (x0 + x1) / 2))
    return _join_segments(hs, tol), _join_segments(vs, tol)


def _grids(
    hs: list[Segment], vs: list[Segment], tol: float
) -> list[tuple[list[Segment], list[Segment]]]:
    """Connected groups of crossing horizontal and vertical rules (union-find)."""
    n = len(hs) + len(vs)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (hx0, hx1, hy) in enumerate(hs):
        for j, (vy0, vy1, vx) in enumerate(vs):
            if hx0 - tol <= vx <= hx1 + tol and vy0 - tol <= hy <= vy1 + tol:
                parent[find(i)] = find(len(hs) + j)
    groups: dict[int, tuple[list[Segment], list[Segment]]] = {}
    for i in range(n):
        g = groups.setdefault(find(i), ([], []))
        if i < len(hs):
            g[0].append(hs[i])
        else:
            g[1].append(vs[i - len(hs)])
    return list(groups.values())


def ruled_tables(
    rules: Iterable[Sequence[float]], words: list[Box], page_no: int
) -> tuple[list[Box], list[Box]]:
    """Ruled tables of a page as Markdown boxes, and the words outside them."""
    tol = 2.0
    hs, vs = _rules(rules, tol)
    if not _may_be_grid(hs, vs):
        return [], words
    tables: list[Box] = []
    rest = words
    for gh, gv in _grids(hs, vs, tol):
        xs = _cluster([x for _, _, x in gv], tol)
        found = _Grid(xs, _cluster([y for _, _, y in gh], tol), gv, tol).table(rest, page_no)
        if found is not None:
            tables.append(found[0])
            taken = {id(w) for w in found[1]}
            rest = [w for w in rest if id(w) not in taken]
    return tables, rest


def _may_be_grid(hs: list[Segment], vs: list[Segment]) -> bool:
    """Whether there are rules enough for a grid, and not a drawing too dense to be one."""
    return len(hs) >= 3 and len(vs) >= 3 and len(hs) * len(vs) <= 250_000


@dataclass
class _Grid:
    """The column (`xs`) and row (`ys`) lines of one group of rules, and its vertical rules."""

    xs: list[float]
    ys: list[float]
    verticals: list[Segment]
    tol: float

    def table(self, words: list[Box], page_no: int) -> tuple[Box, list[Box]] | None:
        """The grid's Markdown table and the words in it; None when it is no table."""
        xs, ys = self.xs, self.ys
        if len(ys) < 3 or len(xs) < 3:
            return None  # a box or a single rule, not a grid of at least 2 x 2 cells
        inside = [w for w in words if self.holds(w)]
        if not inside:
            return None
        rows, tallest = self.rows(inside)
        if not rows or tallest > 8:
            return None  # no text, or a frame around running text (columns split by a rule)
        text = _markdown(rows)
        size = Counter(w.size for w in inside).most_common(1)[0][0]
        return Box(
            text,
            xs[0],
            xs[-1],
            y=ys[-1],
            size=size,
            bold=False,
            page=page_no,
            table=text,
            top_=ys[0],
            bottom_=ys[-1],
        ), inside

    def holds(self, w: Box) -> bool:
        """Whether a word's middle is inside the grid."""
        xs, ys = self.xs, self.ys
        return xs[0] < (w.x0 + w.x1) / 2 < xs[-1] and ys[0] < (w.top + w.bottom) / 2 < ys[-1]

    def rows(self, inside: list[Box]) -> tuple[list[list[str]], int]:
        """The cell texts of the rows that have text, and the most lines a cell has."""
        ys = self.ys
        rows: list[list[str]] = []
        tallest = 0
        for r in range(len(ys) - 1):
            band = _Band(
                [w for w in inside if ys[r] < (w.top + w.bottom) / 2 < ys[r + 1]],
                self.xs,
                self.owners((ys[r] + ys[r + 1]) / 2),
            )
            tallest = max(tallest, band.tallest())
            rows += [band.cells(group) for group in band.sub_rows()]
        return [r for r in rows if any(r)], tallest

    def owners(self, ymid: float) -> list[int]:
        """Per grid column, the column holding its text on the row at `ymid`: a cell
        spans to the next vertical rule that crosses this row (merged cells); its text
        goes to the first grid column it covers."""
        xs = self.xs
        bounds = [x for x in xs if self.crossed(x, ymid)]
        if len(bounds) < 2:
            bounds = [xs[0], xs[-1]]
        starts = [
            bounds[max(0, bisect.bisect_right(bounds, (xs[c] + xs[c + 1]) / 2) - 1)]
            for c in range(len(xs) - 1)
        ]
        owner: dict[float, int] = {}
        for c, start in enumerate(starts):
            owner.setdefault(start, c)
        return [owner[start] for start in starts]

    def crossed(self, x: float, ymid: float) -> bool:
        """Whether a vertical rule at column line `x` crosses the row at `ymid`."""
        tol = self.tol
        return any(
            abs(vx - x) <= tol and vy0 - tol <= ymid <= vy1 + tol for vy0, vy1, vx in self.verticals
        )


@dataclass
class _Band:
    """The words between two row lines of a grid, and the column each grid column's text goes to."""

    words: list[Box]
    xs: list[float]
    owners: list[int]

    def column(self, w: Box) -> int:
        xs = self.xs
        c = min(max(bisect.bisect_right(xs, (w.x0 + w.x1) / 2) - 1, 0), len(xs) - 2)
        return self.owners[c]

    def tallest(self) -> int:
        """The most lines any of the band's cells has."""
        used = {self.column(w) for w in self.words}
        return max(
            (len(rows_of([w for w in self.words if self.column(w) == c])) for c in used), default=0
        )

    def sub_rows(self) -> list[list[Box]]:
        """Rows without rules between them: one line of text per row in most columns."""
        lines = rows_of(self.words)
        least = max(2, math.ceil(len({self.column(w) for w in self.words}) / 2))
        if len(lines) > 1 and all(len({self.column(w) for w in line}) >= least for line in lines):
            return lines
        return [self.words]

    def cells(self, group: list[Box]) -> list[str]:
        """A row's cell texts, `|` escaped."""
        cells: list[list[Box]] = [[] for _ in range(len(self.xs) - 1)]
        for w in group:
            cells[self.column(w)].append(w)
        return [
            " ".join(b.text for line in rows_of(c) for b in line).replace("|", "\\|") for c in cells
        ]


def _markdown(rows: list[list[str]]) -> str:
    """A Markdown table of rows of cell texts, the first row its header."""
    md = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
    md += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(md)
