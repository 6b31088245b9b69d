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

from .layout import Box, rows_of

__all__ = ["ruled_tables"]


def _cluster(values: list[float], tol: float) -> list[float]:
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= tol:
            out[-1].append(v)
        else:
            out.append([v])
    return [sum(c) / len(c) for c in out]


def _join_segments(segments: list[tuple[float, float, float]], tol: float) -> list[tuple[float, float, float]]:
    """Collinear (start, end, position) segments that touch or overlap, as one (a rule
    drawn cell by cell is one rule)."""
    out: list[list[float]] = []
    for a, b, pos in sorted(segments, key=lambda s: (round(s[2] / tol), s[0])):
        last = out[-1] if out else None
        if last and abs(last[2] - pos) <= tol / 2 and a <= last[1] + tol:
            last[1] = max(last[1], b)
        else:
            out.append([a, b, pos])
    return [tuple(s) for s in out]


def ruled_tables(rules, words: list[Box], page_no: int) -> tuple[list[Box], list[Box]]:
    """Ruled tables of a page as Markdown boxes, and the words outside them."""
    tol = 2.0
    hs = _join_segments(
        [(min(x0, x1), max(x0, x1), (y0 + y1) / 2) for x0, y0, x1, y1 in rules if abs(y1 - y0) < 1 and abs(x1 - x0) > 4], tol
    )
    vs = _join_segments(
        [(min(y0, y1), max(y0, y1), (x0 + x1) / 2) for x0, y0, x1, y1 in rules if abs(x1 - x0) < 1 and abs(y1 - y0) > 4], tol
    )
    if len(hs) < 3 or len(vs) < 3 or len(hs) * len(vs) > 250_000:
        return [], words  # no grid, or a drawing too dense to be one
    # connected groups of crossing horizontal and vertical rules
    n = len(hs) + len(vs)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (hx0, hx1, hy) in enumerate(hs):
        for j, (vy0, vy1, vx) in enumerate(vs):
            if hx0 - tol <= vx <= hx1 + tol and vy0 - tol <= hy <= vy1 + tol:
                parent[find(i)] = find(len(hs) + j)
    groups: dict[int, tuple[list, list]] = {}
    for i in range(n):
        g = groups.setdefault(find(i), ([], []))
        (g[0] if i < len(hs) else g[1]).append(hs[i] if i < len(hs) else vs[i - len(hs)])
    tables, used = [], set()
    for gh, gv in groups.values():
        ys = _cluster([y for _, _, y in gh], tol)
        xs = _cluster([x for _, _, x in gv], tol)
        if len(ys) < 3 or len(xs) < 3:
            continue  # a box or a single rule, not a grid of at least 2 x 2 cells
        inside = [
            w for w in words
            if id(w) not in used and xs[0] < (w.x0 + w.x1) / 2 < xs[-1] and ys[0] < (w.top + w.bottom) / 2 < ys[-1]
        ]
        if not inside:
            continue
        rows, tallest = [], 0
        for r in range(len(ys) - 1):
            ymid = (ys[r] + ys[r + 1]) / 2
            # a cell spans to the next vertical rule that crosses this row (merged cells);
            # its text goes to the first grid column it covers
            bounds = [x for x in xs if any(abs(vx - x) <= tol and vy0 - tol <= ymid <= vy1 + tol for vy0, vy1, vx in gv)]
            if len(bounds) < 2:
                bounds = [xs[0], xs[-1]]
            starts = [bounds[max(0, bisect.bisect_right(bounds, (xs[c] + xs[c + 1]) / 2) - 1)] for c in range(len(xs) - 1)]
            owner = {}
            for c, start in enumerate(starts):
                owner.setdefault(start, c)

            def column(w: Box) -> int:
                c = min(max(bisect.bisect_right(xs, (w.x0 + w.x1) / 2) - 1, 0), len(xs) - 2)
                return owner[starts[c]]

            band = [w for w in inside if ys[r] < (w.top + w.bottom) / 2 < ys[r + 1]]
            lines = rows_of(band)
            used_columns = {column(w) for w in band}
            for c in used_columns:
                tallest = max(tallest, len(rows_of([w for w in band if column(w) == c])))
            # rows without rules between them: one line of text per row in most columns
            if len(lines) > 1 and all(
                len({column(w) for w in line}) >= max(2, math.ceil(len(used_columns) / 2)) for line in lines
            ):
                sub_rows = lines
            else:
                sub_rows = [band]
            for group in sub_rows:
                cells = [[] for _ in range(len(xs) - 1)]
                for w in group:
                    cells[column(w)].append(w)
                cell_lines = [rows_of(cell) for cell in cells]
                rows.append([" ".join(b.text for line in c for b in line).replace("|", "\\|") for c in cell_lines])
        rows = [r for r in rows if any(r)]
        if not rows or tallest > 8:
            continue  # no text, or a frame around running text (columns split by a rule)
        used.update(id(w) for w in inside)
        md = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        md += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        size = Counter(w.size for w in inside).most_common(1)[0][0]
        tables.append(Box("\n".join(md), xs[0], xs[-1], ys[-1], size, False, page_no, "\n".join(md), ys[0], ys[-1]))
    return tables, [w for w in words if id(w) not in used]
