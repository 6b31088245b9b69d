"""The tables of bench/scale.py (and of its BM25 side, bench/scale_bm25.py): each figure
per size, and its growth exponent between sizes, log(t2/t1) / log(n2/n1)."""

from __future__ import annotations

import math

from bench.common import table


def label(n: int) -> str:
    if n < 1000:
        return str(n)
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"


def exponent(a, b, n1: int, n2: int) -> str:
    first = a[0] if isinstance(a, tuple) else a
    second = b[0] if isinstance(b, tuple) else b
    if not first or not second or first <= 0 or second <= 0:
        return "-"
    return f"{math.log(second / first) / math.log(n2 / n1):.2f}"


def render(measured: dict[int, dict], rows) -> str:
    sizes = sorted(measured)
    headers = ["", *[label(n) for n in sizes],
               *[f"exp {label(a)}→{label(b)}" for a, b in zip(sizes, sizes[1:])]]
    body = []
    for name, fn, fmt in rows:
        values = []
        for n in sizes:
            try:
                values.append(fn(measured[n]))
            except (KeyError, TypeError, ZeroDivisionError):
                values.append(None)
        cells = [(fmt.format(*v) if isinstance(v, tuple) else fmt.format(v)) if v is not None else "-" for v in values]
        exps = [exponent(values[i], values[i + 1], sizes[i], sizes[i + 1])
                if values[i] is not None and values[i + 1] is not None and not name.startswith("load average")
                else "-" for i in range(len(sizes) - 1)]
        body.append([name, *cells, *exps])
    return table(headers, body)
