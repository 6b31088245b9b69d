"""Plain-text tables for people: one helper for every command's output."""

from __future__ import annotations

from collections.abc import Sequence


def _numeric(text: str) -> bool:
    t = text.strip()
    return bool(t) and (t[0].isdigit() or (t[0] in "-+." and len(t) > 1 and (t[1].isdigit() or t[1] == "."))) \
        and not t.endswith(":")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> str:
    """Columns padded to their widest cell; numbers (and `12/65`-style counts) aligned
    right, text left; two spaces between columns."""
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells if i < len(r)]) for i, h in enumerate(headers)]
    right = [bool(cells) and all(_numeric(r[i]) or not r[i] for r in cells if i < len(r)) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        out = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)]
        return "  ".join(out).rstrip()

    lines = [title] if title else []
    lines.append(line(list(headers)))
    lines += [line(r + [""] * (len(headers) - len(r))) for r in cells]
    return "\n".join(lines)
