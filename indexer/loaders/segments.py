"""Where a long Markdown text may be cut so that markdown-it parses it a segment at a
time with the blocks it would find in the whole text (see `segments`)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

__all__ = ["segments"]

# where a new segment may start: after a blank line, at a line starting with a letter or '#'
_SPLIT = re.compile(r"\n[ \t]*\n(?=[^\W\d_]|#)")
# constructs that run across blank lines: fenced code, and HTML blocks of kinds 1-5
_OPEN = re.compile(
    r"^ {0,3}(?:(`{3,}|~{3,})|<(script|pre|style|textarea)(?=[\s>]|$)|(<!--)|(<\?)|(<!\[CDATA\[)|(<![A-Za-z]))",
    re.M | re.I,
)
_HTML_END = {3: "-->", 4: "?>", 5: "]]>", 6: ">"}


def _spanning(text: str) -> tuple[list[int], list[int]]:
    """Starts and ends of the fenced code blocks and multi-line HTML blocks (comments,
    <script>, <pre>...) of a text: a blank line inside them ends nothing."""
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    while m := _OPEN.search(text, pos):
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end == -1 else line_end
        stop = _fence_stop(text, m, line_end) if m.group(1) else _html_stop(text, m)
        if stop is None:
            pos = line_end  # not a fence: backticks in the info string
            continue
        starts.append(m.start())
        ends.append(stop)
        pos = max(stop, m.end())
    return starts, ends


def _fence_stop(text: str, m: re.Match[str], line_end: int) -> int | None:
    """Where a fence closes: a line of at least as many of the same character (the end
    of the text when none does); None when backticks in its info string make it no fence."""
    fence = m.group(1)
    if fence[0] == "`" and "`" in text[m.end() : line_end]:
        return None
    close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
    c = close.search(text, line_end)
    return c.end() if c else len(text)


def _html_stop(text: str, m: re.Match[str]) -> int:
    """Where a multi-line HTML block closes (the end of the text when it does not)."""
    kind = next(i for i in range(2, 7) if m.group(i))
    marker = f"</{m.group(2)}>" if kind == 2 else _HTML_END[kind]
    found = re.compile(re.escape(marker), re.I).search(text, m.end())
    return found.end() if found else len(text)


def segments(text: str, starts: Sequence[int], size: int) -> list[tuple[int, int]]:
    """Line ranges [first, last) that markdown-it can parse one at a time with the same
    blocks as the whole text: each begins after a blank line, at a line that starts with
    a letter or '#' (no list, quote or code continues there) outside fenced code and
    multi-line HTML. A long text parsed whole keeps a Python token per block, row and cell
    alive at once (70 MB for 3 MB of Markdown); by segments of about `size` characters,
    one segment's."""
    if len(text) <= size:
        return [(0, len(starts))]
    open_at, close_at = _spanning(text)
    cuts = [0]
    target = size
    while target < len(text):
        m = _SPLIT.search(text, target)
        if m is None:
            break
        at = m.end()
        inside = bisect.bisect_right(open_at, at) - 1
        if inside >= 0 and at < close_at[inside]:
            target = close_at[inside]
            continue
        cuts.append(bisect.bisect_left(starts, at))
        target = at + size
    cuts.append(len(starts))
    return list(zip(cuts, cuts[1:]))
