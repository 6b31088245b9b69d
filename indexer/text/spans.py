"""Span arithmetic on a document's text, written once: trimming whitespace off a span,
line starts and line numbers, and which section an offset falls in."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence


def lstrip_start(text: str, start: int, end: int) -> int:
    while start < end and text[start].isspace():
        start += 1
    return start


def rstrip_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end] without leading and trailing whitespace, as offsets."""
    start = lstrip_start(text, start, end)
    return start, rstrip_end(text, start, end)


def line_starts(text: str) -> Sequence[int]:
    """Offset of the first character of every line, as a compact array (8 bytes a line,
    where a list of ints takes ~36: a million-line file keeps 28 MB less)."""
    starts = array("q", [0])
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def line_of(starts: Sequence[int], offset: int) -> int:
    """1-based line number of a character offset, given the line starts."""
    return bisect.bisect_right(starts, offset)


def index_at(starts: Sequence[int], offset: int) -> int:
    """Which of the spans starting at `starts` (sorted) holds `offset`: the last one that
    starts at or before it (the first one for an offset before them all)."""
    return max(bisect.bisect_right(starts, offset) - 1, 0)
