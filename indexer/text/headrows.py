"""How long a table's header row may be and still be repeated beside each part of it.

A table cut into chunks repeats its header row with every part (in a chunk's `header`,
and beside every row in the chunk's unit map), so each part still says what its columns
are. That costs the header's length once per chunk: fine for a header of a few dozen
columns, quadratic for a 150,000-column one (a 1.5 MB CSV made a 9 GB index). A header
row over HEADER_REPEAT_MAX characters (about 500 tokens: a default `blocks` chunk, so a
header never outweighs the chunk it labels) is not repeated whole: a chunk's `header`
carries its first HEADER_REPEAT_MAX characters and a mark, a row's unit none. The text
of the table itself is never cut: only the copies are."""

from __future__ import annotations

HEADER_REPEAT_MAX = 2048  # characters of a header row repeated with each part of its table


def first_line(text: str, start: int, end: int) -> str:
    """The first line of text[start:end]: a table head's header row, without the
    delimiter row under it."""
    nl = text.find("\n", start, end)
    return text[start : end if nl == -1 else nl]


def header_repeats(row: str) -> bool:
    """Is a header row short enough to be repeated whole with every part of its table?"""
    return len(row) <= HEADER_REPEAT_MAX


def repeated_header(row: str) -> str:
    """A header row as a chunk's `header` repeats it: whole, or its first
    HEADER_REPEAT_MAX characters and a mark saying how long it was."""
    if header_repeats(row):
        return row
    return f"{row[:HEADER_REPEAT_MAX]} … (header row cut: {len(row):,} characters)"


def too_long_warning(length: int) -> str | None:
    """The build's one line about a file whose table header row (of `length`
    characters) is too long to repeat; None when it is not."""
    if length <= HEADER_REPEAT_MAX:
        return None
    return (
        f"a table's header row is {length:,} characters, too long to repeat with each "
        f"chunk (over {HEADER_REPEAT_MAX:,}): chunks repeat its start only"
    )
