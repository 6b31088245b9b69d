"""Plain-text tables for people: one helper for every command's output."""

from __future__ import annotations

import re
from collections.abc import Sequence

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 and C1 controls (ESC and BEL among them), line and paragraph separators, bidi
# embeddings, overrides and isolates: what can rewrite a terminal or reorder a line
_HIDDEN = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f{_HIDDEN}]")
_UNSAFE_IN_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_HIDDEN}]")  # newline and tab kept


def _escaped(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    return _SHORT.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, lines: bool = False) -> str:
    """Text from a document (a file name, a doc_id, a heading path, a chunk's text) safe to
    show on a terminal: control characters (ESC, BEL), line and paragraph separators and
    bidi overrides become escapes (`\\n`, `\\t`, `\\x1b`, `\\u202e`), so a name cannot break a
    table's or a listing's layout and a document cannot clear the screen, set the window
    title or write the clipboard. `lines=True` keeps newlines and tabs (text shown on
    several lines). JSON output stays exact; this is for text meant to be read."""
    return (_UNSAFE_IN_LINES if lines else _UNSAFE).sub(_escaped, text)


def _numeric(text: str) -> bool:
    t = text.strip()
    return (
        bool(t)
        and (t[0].isdigit() or (t[0] in "-+." and len(t) > 1 and (t[1].isdigit() or t[1] == ".")))
        and not t.endswith(":")
    )


def _row(values: Sequence[object], n: int) -> list[str]:
    """A row's cells (None empty, control characters escaped), padded to `n` columns."""
    cells = ["" if v is None else printable(str(v)) for v in values]
    return cells + [""] * (n - len(cells))


def _width(header: str, column: list[str]) -> int:
    return max([len(header)] + [len(c) for c in column])


def _numeric_column(column: list[str]) -> bool:
    """Is every non-empty cell of a column a number (then it is aligned right)?"""
    return all(_numeric(c) or not c for c in column)


def _line(values: Sequence[str], widths: list[int], right: list[bool]) -> str:
    out = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)]
    return "  ".join(out).rstrip()


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> str:
    """Columns padded to their widest cell; numbers (and `12/65`-style counts) aligned
    right, text left; two spaces between columns; control characters in a cell escaped."""
    n = len(headers)
    cells = [_row(row, n) for row in rows]
    columns = [[row[i] for row in cells] for i in range(n)]
    widths = [_width(h, column) for h, column in zip(headers, columns)]
    right = [bool(cells) and _numeric_column(column) for column in columns]
    lines = [title] if title else []
    lines += [_line(values, widths, right) for values in [list(headers), *cells]]
    return "\n".join(lines)
