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

from .layout import Box

__all__ = ["BULLET", "Block", "line_blocks"]

BULLET = re.compile(r"^([•◦▪‣●○■□►–—*-])\s+(.*)$")
_SENTENCE_END = re.compile(r"[.!?:…\"”»)]$")
_NUMBERED = re.compile(r"^(\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_LEADER = re.compile(r"(?:\. ?){4,}\s*\w*$")  # a table-of-contents line: "Giriş . . . . 3"
# an e-mail address (also written `name at host.org`) or a web address: contact lines
_CONTACT = re.compile(
    r"[\w.+-]+(?:@| ?[(\[]at[)\]] ?| at )[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b"
    r"|\bhttps?://|\bwww\.[\w-]+\.",
    re.I,
)


@dataclass(slots=True)
class Block:
    kind: str  # paragraph | heading | table | item | code
    lines: list[Box]
    level: int = 0


def line_blocks(lines: list[Box], body: float) -> list[Block]:
    """Lines into blocks, headings with their levels (1 the largest font)."""
    blocks = _rejoin_lone_code(_blocks(lines, body, *_leading(lines, body)), body)
    _heading_levels(blocks, body)
    if _not_headings(blocks):
        _heading_levels(blocks, body)  # a level may have gone with them
    return blocks


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
    steps = [
        b.y - a.y for a, b in zip(lines, lines[1:])
        if a.page == b.page and not a.table and not b.table and a.size == b.size == body
        and 0 < b.y - a.y < 3 * body and min(a.x1, b.x1) > max(a.x0, b.x0)
    ]
    steps.sort()
    leading = steps[len(steps) // 2] if steps else 1.2 * body
    spaced = sum(1 for s in steps if s > max(leading * 1.3, leading + 2)) >= 2
    return leading, spaced


def _blocks(lines: list[Box], body: float, leading: float, spaced: bool) -> list[Block]:
    """Lines into headings, paragraphs, list items and tables.

    A line continues the block above when it has the same style and either follows it
    closely in the same column (not after a short line that ends a sentence, nor as an
    indented first line), or opens the next column or page in the middle of a sentence."""
    blocks: list[Block] = []
    for line in lines:
        if line.table:
            blocks.append(Block("table", [line]))
            continue
        key = _style_key(line, body)
        block = blocks[-1] if blocks and blocks[-1].kind != "table" else None
        if line.mono:  # code: lines in a fixed-pitch font stay lines
            prev = block.lines[-1] if block and block.kind == "code" else None
            if prev and prev.page == line.page and 0 < line.y - prev.y <= 4 * line.size:
                block.lines.append(line)
            else:
                blocks.append(Block("code", [line]))
            continue
        if block is not None and block.kind == "code":
            block = None
        bullet = key is None and (BULLET.match(line.text) or _NUMBERED.match(line.text))
        if block is None or bullet:
            blocks.append(Block("heading" if key else "item" if bullet else "paragraph", [line]))
            continue
        prev = block.lines[-1]
        below = prev.page == line.page and 0 < line.y - prev.y and min(prev.x1, line.x1) > max(prev.x0, line.x0) - body
        step = line.y - prev.y
        ends = _SENTENCE_END.search(prev.text) is not None
        if key != _style_key(prev, body) or abs(line.size - prev.size) > 0.6:
            same = False
        elif key is not None:  # a heading wraps onto at most three close lines
            same = below and step <= 1.6 * line.size and len(block.lines) < 3
        elif below:
            right = max(b.x1 for b in block.lines + [line])
            left = min(b.x0 for b in block.lines[1:] or block.lines)
            same = (
                step <= max(leading * 1.3, leading + 2)
                and not (ends and not spaced and prev.x1 < right - 2 * body)
                and not (ends and block.kind == "paragraph" and line.x0 > left + 0.8 * body)
                and not (block.kind == "item" and line.x0 < block.lines[0].x0 + 0.3 * body)
            )
        else:  # the next column or page, in the middle of a sentence
            same = not ends and (line.text[:1].islower() or prev.text.endswith("-"))
        if same:
            block.lines.append(line)
        else:
            blocks.append(Block("heading" if key else "paragraph", [line]))
    for b in blocks:  # a "heading" too long to be one is text in a large or bold font
        if b.kind == "heading":
            last = b.lines[-1].text
            by_weight = _style_key(b.lines[0], body)[0] == "bold"
            if sum(len(x.text) for x in b.lines) > 200 or by_weight and last.endswith((".", ";", ",")):
                b.kind = "paragraph"
    return blocks


def _rejoin_lone_code(blocks: list[Block], body: float) -> list[Block]:
    """A single line of code that carries on the sentence of the paragraph just above it
    (the end of a wrapped function signature, `char * name)`) goes back into it, and so
    does the paragraph it cut off (a lower-case line right below it)."""
    out: list[Block] = []
    joined: Block | None = None
    for block in blocks:
        prev = out[-1] if out else None
        lone = block.kind == "code" and len(block.lines) == 1
        if lone and prev is not None and prev.kind in ("paragraph", "item"):
            if _goes_on(prev.lines[-1], block.lines[0], body):
                prev.lines.append(block.lines[0])
                joined = prev
                continue
        if joined is prev and prev is not None and block.kind == "paragraph":
            if _goes_on(prev.lines[-1], block.lines[0], body) and block.lines[0].text[:1].islower():
                prev.lines += block.lines
                continue
        joined = None
        out.append(block)
    return out


def _goes_on(above: Box, line: Box, body: float) -> bool:
    """Is `line` the next line of a sentence that `above` leaves open?"""
    return (
        above.page == line.page and 0 < line.y - above.y <= 1.6 * max(above.size, line.size)
        and _SENTENCE_END.search(above.text) is None and line.x0 >= above.x0 - body
    )


def _heading_levels(blocks: list[Block], body: float) -> None:
    """Largest heading font = level 1; bold headings in the body size come last."""
    sizes = sorted({b.lines[0].size for b in blocks if b.kind == "heading" and b.lines[0].size >= body * 1.15}, reverse=True)
    levels: list[float] = []
    for s in sizes:  # sizes within half a point are one level
        if not levels or levels[-1] - s > 0.5:
            levels.append(s)
    for b in blocks:
        if b.kind == "heading":
            s = b.lines[0].size
            rank = next((k for k, v in enumerate(levels) if abs(v - s) <= 0.5), len(levels)) if s >= body * 1.15 else len(levels)
            b.level = min(rank + 1, 6)


def _text(block: Block) -> str:
    return " ".join(line.text for line in block.lines)


def _running_text(block: Block) -> bool:
    """Content under a heading: a table, code, a list item, or a paragraph of a sentence
    or more (not a name, an affiliation or a date line of a title page)."""
    if block.kind in ("table", "code", "item"):
        return True
    if block.kind != "paragraph" or _CONTACT.search(_text(block)):
        return False
    words = len(_text(block).split())
    return words >= 20 or words >= 6 and block.lines[-1].text.rstrip().endswith((".", "!", "?"))


def _not_headings(blocks: list[Block]) -> bool:
    """Turn title-page lines set as headings into paragraphs (the module's docstring says
    which); True when any was."""
    changed = False
    for b in blocks:
        if b.kind == "heading" and _CONTACT.search(_text(b)):
            b.kind, changed = "paragraph", True
    first = blocks[0].lines[0].page if blocks else 0
    front = [b for b in blocks if b.lines[0].page == first]  # the first page's blocks
    heads = [b for b in front if b.kind == "heading"]
    ends = bool(heads) and front[-1] is heads[-1] is not heads[0]
    if ends and not any(_running_text(b) for b in front):
        heads.pop().kind, changed = "paragraph", True  # it ends a title page: nothing under it
    text = next((b for b in front if _running_text(b)), None)  # where the front matter ends
    heads = [b for b in heads if text is None or front.index(b) < front.index(text)]
    for b, nxt in zip(heads, heads[1:]):
        if nxt.level <= b.level:  # the next heading is not under it: it heads no text
            b.kind, changed = "paragraph", True
    return changed
