"""PDF layout: lines (in reading order) to blocks: headings, paragraphs, list items, code
and tables.

Lines in a larger or bold font are headings, their level from the font size; lines in a
fixed-pitch font are code. A title page's lines are body text unless they really head
something: a line with an e-mail address or a web address (authors, affiliations), a
line on the first page that heads no text of its own (an author's name above the
next heading of its size), or a line that ends a title page without running text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeGuard

from .layout import Box

__all__ = ["BULLET", "LineBlock", "line_blocks"]

BULLET = re.compile(r"^([•◦▪‣●○■□►–—*-])\s+(.*)$")
_SENTENCE_END = re.compile(r"[.!?:…\"”»)]$")
_NUMBERED = re.compile(r"^(\d{1,3}[.)]|[a-zA-Z][.)])\s+")
# a table-of-contents line: "Giriş . . . . 3", "Appendix C GNU Free Documentation License . . 174"
_LEADER = re.compile(r"(?:\. ?){4,}\s*\w*$|(?: \.){2,} *\d+$")
# an e-mail address (also written `name at host.org`) or a web address: contact lines
_CONTACT = re.compile(
    r"[\w.+-]+(?:@| ?[(\[]at[)\]] ?| at )[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b"
    r"|\bhttps?://|\bwww\.[\w-]+\.",
    re.I,
)


@dataclass(slots=True)
class LineBlock:
    kind: str  # paragraph | heading | table | item | code
    lines: list[Box]
    level: int = 0


def line_blocks(lines: list[Box], body: float) -> list[LineBlock]:
    """Lines into blocks, headings with their levels (1 the largest font)."""
    blocks = _rejoin_lone_code(_blocks(lines, _Flow(body, *_leading(lines, body))), body)
    _heading_levels(blocks, body)
    if _not_headings(blocks):
        _heading_levels(blocks, body)  # a level may have gone with them
    return blocks


@dataclass(frozen=True, slots=True)
class _Flow:
    """The body font size, the typical baseline distance of body lines, and whether
    paragraphs are marked with extra space (see `_leading`)."""

    body: float
    leading: float
    spaced: bool


def _style_key(line: Box, body: float) -> tuple[str, float] | None:
    if line.table or line.mono:
        return None
    if line.size >= body * 1.15:
        key = ("size", line.size)
    elif line.bold and line.size >= body * 0.95:
        key = ("bold", line.size)
    else:
        return None
    if sum(c.isalpha() for c in line.text) < 2 or _LEADER.search(line.text):
        return None  # a drop cap or a lone number is no heading
    return key


def _leading(lines: list[Box], body: float) -> tuple[float, bool]:
    """Typical baseline distance of body lines that follow each other in one column, and
    whether the document marks paragraphs with extra space (then a short line ending a
    sentence does not end a paragraph by itself)."""
    steps = sorted(b.y - a.y for a, b in zip(lines, lines[1:]) if _next_body_line(a, b, body))
    leading = steps[len(steps) // 2] if steps else 1.2 * body
    spaced = sum(1 for s in steps if s > max(leading * 1.3, leading + 2)) >= 2
    return leading, spaced


def _next_body_line(a: Box, b: Box, body: float) -> bool:
    """Whether `b` is a body-text line right below `a`, in the same column."""
    return (
        a.page == b.page
        and not a.table
        and not b.table
        and a.size == b.size == body
        and 0 < b.y - a.y < 3 * body
        and min(a.x1, b.x1) > max(a.x0, b.x0)
    )


def _blocks(lines: list[Box], flow: _Flow) -> list[LineBlock]:
    """Lines into headings, paragraphs, list items, code and tables."""
    blocks: list[LineBlock] = []
    for line in lines:
        if line.table:
            blocks.append(LineBlock("table", [line]))
        elif line.mono:
            _add_code(blocks, line)
        else:
            _add_text(blocks, line, flow)
    for b in blocks:  # a "heading" too long to be one is text in a large or bold font
        if b.kind == "heading" and _too_long_for_heading(b, flow.body):
            b.kind = "paragraph"
    return blocks


def _open_block(blocks: list[LineBlock]) -> LineBlock | None:
    """The last block, unless it is a table (nothing continues a table)."""
    return blocks[-1] if blocks and blocks[-1].kind != "table" else None


def _add_code(blocks: list[LineBlock], line: Box) -> None:
    """Code: lines in a fixed-pitch font stay lines, a block of them close together."""
    block = _open_block(blocks)
    if block is not None and block.kind == "code":
        prev = block.lines[-1]
        if prev.page == line.page and 0 < line.y - prev.y <= 4 * line.size:
            block.lines.append(line)
            return
    blocks.append(LineBlock("code", [line]))


def _add_text(blocks: list[LineBlock], line: Box, flow: _Flow) -> None:
    """A line of text: it continues the block above (`_continues`) or opens a heading, a
    list item or a paragraph."""
    key = _style_key(line, flow.body)
    bullet = key is None and _bullet(line.text)
    block = _open_block(blocks)
    if _toc_entry_goes_on(block, line, flow.body):
        block.kind = "paragraph"  # a contents entry wrapped: "Appendix B Major Differences From"
        block.lines.append(line)
        return
    if (
        block is not None
        and block.kind != "code"
        and not bullet
        and _continues(block, line, key, flow)
    ):
        block.lines.append(line)
        return
    blocks.append(LineBlock("heading" if key else "item" if bullet else "paragraph", [line]))


def _toc_entry_goes_on(block: LineBlock | None, line: Box, body: float) -> TypeGuard[LineBlock]:
    """Whether `line` ends a contents entry (its dot leaders and page number) whose first
    line, in a heading's font, is the heading just above it."""
    if block is None or block.kind != "heading" or _LEADER.search(line.text) is None:
        return False
    prev = block.lines[-1]
    return _below(prev, line, body) and line.y - prev.y <= 1.6 * max(line.size, prev.size)


def _bullet(text: str) -> bool:
    return bool(BULLET.match(text) or _NUMBERED.match(text))


def _continues(block: LineBlock, line: Box, key: tuple[str, float] | None, flow: _Flow) -> bool:
    """A line continues the block above when it has the same style and either follows it
    closely in the same column (not after a short line that ends a sentence, nor as an
    indented first line), or opens the next column or page in the middle of a sentence."""
    prev = block.lines[-1]
    if key != _style_key(prev, flow.body) or abs(line.size - prev.size) > 0.6:
        return False
    below = _below(prev, line, flow.body)
    if key is not None:  # a heading wraps onto at most three close lines
        return below and line.y - prev.y <= 1.6 * line.size and len(block.lines) < 3
    if below:
        return _text_goes_on(block, line, flow)
    # the next column or page, in the middle of a sentence
    ends = _SENTENCE_END.search(prev.text) is not None
    return not ends and (line.text[:1].islower() or prev.text.endswith("-"))


def _below(prev: Box, line: Box, body: float) -> bool:
    """Whether `line` is below `prev` on its page, in the same column."""
    return (
        prev.page == line.page
        and 0 < line.y - prev.y
        and min(prev.x1, line.x1) > max(prev.x0, line.x0) - body
    )


def _text_goes_on(block: LineBlock, line: Box, flow: _Flow) -> bool:
    """Whether a body line right below a paragraph or list item continues it."""
    prev, body, leading = block.lines[-1], flow.body, flow.leading
    if line.y - prev.y > max(leading * 1.3, leading + 2):
        return False
    if _SENTENCE_END.search(prev.text) is not None and _after_sentence_end(block, line, flow):
        return False
    return not (block.kind == "item" and line.x0 < block.lines[0].x0 + 0.3 * body)


def _after_sentence_end(block: LineBlock, line: Box, flow: _Flow) -> bool:
    """After a line that ends a sentence: whether the paragraph ends there (a short
    line, unless paragraphs are marked with space) or `line` opens one (indented)."""
    prev, body = block.lines[-1], flow.body
    right = max(b.x1 for b in block.lines + [line])
    if not flow.spaced and prev.x1 < right - 2 * body:
        return True
    left = min(b.x0 for b in block.lines[1:] or block.lines)
    return block.kind == "paragraph" and line.x0 > left + 0.8 * body


def _too_long_for_heading(block: LineBlock, body: float) -> bool:
    """Too much text for a heading, or a bold line that ends like a sentence."""
    key = _style_key(block.lines[0], body)
    assert key is not None  # a heading opens with a line in a heading style
    last = block.lines[-1].text
    by_weight = key[0] == "bold"
    return (
        sum(len(x.text) for x in block.lines) > 200 or by_weight and last.endswith((".", ";", ","))
    )


def _rejoin_lone_code(blocks: list[LineBlock], body: float) -> list[LineBlock]:
    """A single line of code that carries on the sentence of the paragraph just above it
    (the end of a wrapped function signature, `char * name)`) goes back into it, and so
    does the paragraph it cut off (a lower-case line right below it)."""
    out: list[LineBlock] = []
    joined: LineBlock | None = None
    for block in blocks:
        prev = out[-1] if out else None
        if prev is not None and _carries_on(prev, block, body):
            prev.lines.append(block.lines[0])
            joined = prev
            continue
        if prev is not None and joined is prev and _cut_off(prev, block, body):
            prev.lines += block.lines
            continue
        joined = None
        out.append(block)
    return out


def _carries_on(prev: LineBlock, block: LineBlock, body: float) -> bool:
    """Whether `block` is a lone line of code carrying on the sentence of `prev`."""
    lone = block.kind == "code" and len(block.lines) == 1
    return (
        lone
        and prev.kind in ("paragraph", "item")
        and _goes_on(prev.lines[-1], block.lines[0], body)
    )


def _cut_off(prev: LineBlock, block: LineBlock, body: float) -> bool:
    """Whether `block` is the rest of the paragraph `prev`, cut off by a line of code."""
    first = block.lines[0]
    return (
        block.kind == "paragraph"
        and _goes_on(prev.lines[-1], first, body)
        and first.text[:1].islower()
    )


def _goes_on(above: Box, line: Box, body: float) -> bool:
    """Is `line` the next line of a sentence that `above` leaves open?"""
    return (
        above.page == line.page
        and 0 < line.y - above.y <= 1.6 * max(above.size, line.size)
        and _SENTENCE_END.search(above.text) is None
        and line.x0 >= above.x0 - body
    )


def _heading_levels(blocks: list[LineBlock], body: float) -> None:
    """Largest heading font = level 1; bold headings in the body size come last."""
    levels = _level_sizes(blocks, body)
    for b in blocks:
        if b.kind == "heading":
            b.level = min(_rank(b.lines[0].size, levels, body) + 1, 6)


def _level_sizes(blocks: list[LineBlock], body: float) -> list[float]:
    """The font sizes of heading levels, largest first (sizes within half a point are one level)."""
    sizes = {
        b.lines[0].size for b in blocks if b.kind == "heading" and b.lines[0].size >= body * 1.15
    }
    levels: list[float] = []
    for s in sorted(sizes, reverse=True):
        if not levels or levels[-1] - s > 0.5:
            levels.append(s)
    return levels


def _rank(size: float, levels: list[float], body: float) -> int:
    """The level (from 0) of a heading in a font of `size`; after all sizes for bold body text."""
    if size < body * 1.15:
        return len(levels)
    return next((k for k, v in enumerate(levels) if abs(v - size) <= 0.5), len(levels))


def _text(block: LineBlock) -> str:
    return " ".join(line.text for line in block.lines)


def _running_text(block: LineBlock) -> bool:
    """Content under a heading: a table, code, a list item, or a paragraph of a sentence
    or more (not a name, an affiliation or a date line of a title page)."""
    if block.kind in ("table", "code", "item"):
        return True
    if block.kind != "paragraph" or _CONTACT.search(_text(block)):
        return False
    words = len(_text(block).split())
    return words >= 20 or words >= 6 and block.lines[-1].text.rstrip().endswith((".", "!", "?"))


def _not_headings(blocks: list[LineBlock]) -> bool:
    """Turn title-page lines set as headings into paragraphs (the module's docstring says
    which); True when any was."""
    changed = _contacts(blocks)
    first = blocks[0].lines[0].page if blocks else 0
    front = [b for b in blocks if b.lines[0].page == first]  # the first page's blocks
    heads = [b for b in front if b.kind == "heading"]
    if _ends_title_page(front, heads, len(blocks)):
        heads.pop().kind, changed = "paragraph", True  # it ends a title page: nothing under it
    return _heads_no_text(front, heads) or changed


def _contacts(blocks: list[LineBlock]) -> bool:
    """Turn headings with an e-mail or web address into paragraphs; True when any was."""
    changed = False
    for b in blocks:
        if b.kind == "heading" and _CONTACT.search(_text(b)):
            b.kind, changed = "paragraph", True
    return changed


def _ends_title_page(front: list[LineBlock], heads: list[LineBlock], total: int) -> bool:
    """Whether the last of several headings ends a first page, which has no running text
    or pages after it: a heading at a page's foot heads nothing there, and typesetting
    keeps a heading with its text (bash's manual: `Chet Ramey, Case Western Reserve
    University Brian Fox, Free Software Foundation` under its title and date)."""
    ends = bool(heads) and front[-1] is heads[-1] is not heads[0]
    return ends and (total > len(front) or not any(_running_text(b) for b in front))


def _heads_no_text(front: list[LineBlock], heads: list[LineBlock]) -> bool:
    """Turn the headings of the front matter that head no text (the next heading is not
    under them) into paragraphs; True when any was."""
    text = next((b for b in front if _running_text(b)), None)  # where the front matter ends
    heads = [b for b in heads if text is None or front.index(b) < front.index(text)]
    changed = False
    for b, nxt in zip(heads, heads[1:]):
        if nxt.level <= b.level:
            b.kind, changed = "paragraph", True
    return changed
