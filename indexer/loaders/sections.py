"""Headings to sections: the heading path of each section of a document, and the
headings of plain text: reStructuredText / setext underlines, or a rendered man page's
section names."""

from __future__ import annotations

import re

from ..text.spans import line_starts, lstrip_start, rstrip_end
from ..types import Section
from .markdown import Heading

_SECTION_NUMBER = re.compile(r"\d{1,3}(?:\.\d+)*\.?\s")  # "1. ", "2.1 ", "3 "
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`*+#:.])\1{2,}\s*$")
# a man page's section name as `man` renders it: capitals at the margin (`NAME`, `SEE ALSO`,
# `EXIT STATUS`), its text indented below; a subsection: three spaces in, then a title
_MAN_SECTION = re.compile(r"[A-Z][A-Z0-9 ,/&'()-]{0,38}[A-Z0-9)]|[A-Z]")
_MAN_SUBSECTION = re.compile(r" {3}[A-Z][^\s].{0,58}")
# a man page's title line, its name and section at both ends: `LS(1)   User Commands   LS(1)`
# (`man` cuts a long name short on the left: `GCLOUD_RUN_JOBS_EXECUTIONS_TGeneraGCLOUD_...(1)`)
_MAN_TITLE = re.compile(r"\S(?:.*\s)?(\S+\(\w+\))")
_MAN_DASH = re.compile(r"\s[-–—]\s")  # between a NAME line's names and what they do
_MAN_HEAD = {"SYNOPSIS"}  # a section after NAME that is part of a man page's head
MAN_NAME_MAX = 100  # a longer NAME line names the page by its names alone
MAN_INDENTED = 0.5  # the share of a man page's text lines that are indented, at least


def build_sections(text: str, title: str, headings: list[Heading]) -> list[Section]:
    """Sections from headings: each runs from its heading to the next heading of any level.

    A heading path is the stack of headings above a section, each heading popping those
    of its level or deeper (`# One` then `# Two` gives `Two`). It starts with the document
    title, except where the title is itself one of the top-level headings (the first
    `# One` of `# One`, `# Two`): then the sections under a later top-level heading are
    not under it. Text before the first heading is a level-0 section of its own.
    """
    if not headings:
        return _untitled(text, title, len(text))
    sections = _untitled(text, title, headings[0].start)
    top = min(h.level for h in headings)
    sibling = _top_heading(headings, title, top)
    stack: list[Heading] = []
    for idx, h in enumerate(headings):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        path = _path(stack, title, sibling and stack[0].level == top)
        nxt = headings[idx + 1].start if idx + 1 < len(headings) else len(text)
        sections.append(
            Section(path, h.level, h.start, rstrip_end(text, h.start, nxt), h.body_start)
        )
    return sections


def _top_heading(headings: list[Heading], title: str, top: int) -> bool:
    """Whether the title is one of the top-level headings."""
    return any(h.level == top and h.text == title for h in headings)


def _path(stack: list[Heading], title: str, title_is_top: bool) -> tuple[str, ...]:
    """A section's heading path: its stack of headings, under the document title unless
    the stack starts with it or with a top-level sibling of it."""
    path = tuple(x.text for x in stack)
    return path if path[0] == title or title_is_top else (title,) + path


def _untitled(text: str, title: str, end: int) -> list[Section]:
    """The level-0 section of the text before `end` (the first heading), if it has any."""
    if not text[:end].strip():
        return []
    start = lstrip_start(text, 0, end)
    stop = rstrip_end(text, start, end)
    return [Section((title,), 0, start, stop, start)]


def first_h1(headings: list[Heading]) -> str:
    for h in headings:
        if h.level == 1 and h.text:
            return h.text
    return ""


def page_title(headings: list[Heading], named: str = "") -> str:
    """A document's title: its first level-1 heading, else the name it carries (an HTML
    page's `<title>`); the name first when that heading is a numbered section, one of
    several (SQLite's pages: `1. Syntax`, `2. Description` under `<title>VACUUM</title>`)
    or of another name: it names a part of the page, not the page (DocBook's only `<h1>`,
    `2. Unified system` under `<title>Unified system</title>`, does name its page)."""
    h1 = first_h1(headings)
    number = _SECTION_NUMBER.match(h1)
    if named and number:
        several = sum(h.level == 1 for h in headings) > 1
        if several or h1[number.end() :].strip().lower() != named.lower():
            return named
    return h1 or named


def plain_headings(text: str) -> list[Heading]:
    """A plain-text document's headings: underlined titles, else a rendered man page's."""
    return rst_headings(text) or man_headings(text)


def man_headings(text: str) -> list[Heading]:
    """Section names of a man page rendered to text (`man ls | col -b`): a line of capitals
    at the margin with indented text after it (level 2), and a line three spaces in with
    text indented deeper after it (level 3); the page's title line heads it (`man_head`).
    Only in a text laid out as a man page: at least two such sections, and most of its
    lines indented."""
    lines = text.split("\n")
    if not _laid_out_as_man_page(lines):
        return []
    offsets = line_starts(text)
    depth = _next_depths(lines)
    found: list[Heading] = []
    for i, line in enumerate(lines):
        level = _man_level(line.rstrip(), depth[i], bool(found))
        if level:
            title = line.rstrip() if level == 2 else line.strip()
            found.append(Heading(level, title, offsets[i], offsets[i] + len(line)))
    if sum(h.level == 2 for h in found) < 2:
        return []
    return man_head(text, found)


def _laid_out_as_man_page(lines: list[str]) -> bool:
    """Four lines of text or more, most of them indented."""
    filled = [ln for ln in lines if ln.strip()]
    indented = sum(ln[:1].isspace() for ln in filled)
    return len(filled) >= 4 and indented >= MAN_INDENTED * len(filled)


def _man_level(title: str, depth: int, after_section: bool) -> int:
    """2 for a section name (capitals at the margin over indented text), 3 for a
    subsection (three spaces in, over text indented deeper, after a section), else 0."""
    if _MAN_SECTION.fullmatch(title) and depth > 0:
        return 2
    if after_section and _MAN_SUBSECTION.fullmatch(title) and depth > 3:
        return 3
    return 0


def man_head(text: str, found: list[Heading]) -> list[Heading]:
    """A man page's title line (`LS(1)  User Commands  LS(1)`) as its level-1 heading,
    named by its NAME line (`ls - list directory contents`), so that every heading path
    starts with the command's name; its NAME and SYNOPSIS sections are the head's text,
    not sections of their own (the title line and `NAME ls - list directory contents`
    were chunks of their own, and no option's chunk said which command it belongs to)."""
    top = lstrip_start(text, 0, len(text))
    line = text[top:].split("\n", 1)[0].rstrip()
    title = _MAN_TITLE.fullmatch(line)
    rest = [h for h in found if h.start > top]
    if not title or len(rest) < 2 or text[top + len(line) : rest[0].start].strip():
        return found  # no title line right above the first section
    k = _next_section(rest, 0)
    if k < len(rest) and rest[k].text in _MAN_HEAD:
        k = _next_section(rest, k)
    name = _man_name(text[rest[0].body_start : rest[1].start]) or title.group(1)
    return [Heading(1, name, top, top + len(line)), *rest[k:]]


def _man_name(name_section: str) -> str:
    """A man page's name from its NAME section's text: the whole line, or its names alone
    when it is long, or "" when they are too (OpenSSL's page names 53 commands)."""
    name = " ".join(name_section.split())
    if len(name) > MAN_NAME_MAX:
        name = _MAN_DASH.split(name, 1)[0]
    return name if len(name) <= MAN_NAME_MAX else ""


def _next_section(headings: list[Heading], k: int) -> int:
    """The index of the first level-2 heading after the k-th (len(headings): none)."""
    return next((i for i in range(k + 1, len(headings)) if headings[i].level <= 2), len(headings))


def _next_depths(lines: list[str]) -> list[int]:
    """For each line, the indent of the next line with text after it (-1: none)."""
    out = [-1] * len(lines)
    following = -1
    for i in range(len(lines) - 1, -1, -1):
        out[i] = following
        if lines[i].strip():
            following = len(lines[i]) - len(lines[i].lstrip())
    return out


def rst_headings(text: str) -> list[Heading]:
    """Section titles of reStructuredText / setext-style plain text (a line underlined
    with `===`, `---`, `~~~`...); levels follow the order the styles first appear."""
    lines = text.split("\n")
    offsets = line_starts(text)
    styles: list[str] = []
    headings: list[Heading] = []
    for i in range(len(lines) - 1):
        style = _underline_style(lines, i)
        if style is None:
            continue
        if style not in styles:
            styles.append(style)
        overlined = i > 0 and _RST_UNDERLINE.match(lines[i - 1]) is not None
        start = offsets[i - 1] if overlined else offsets[i]
        body = offsets[i + 1] + len(lines[i + 1])
        headings.append(Heading(min(styles.index(style) + 1, 6), lines[i].strip(), start, body))
    return headings


def _underline_style(lines: list[str], i: int) -> str | None:
    """The underline character of a title on line `i`, None when it is no title: a line
    with text, underlined at least as long, after a blank line (or its overline)."""
    title, under = lines[i].strip(), lines[i + 1]
    m = _RST_UNDERLINE.match(under)
    if not title or not m or len(under.rstrip()) < len(title) or _RST_UNDERLINE.match(lines[i]):
        return None
    if i > 0 and lines[i - 1].strip() and not _RST_UNDERLINE.match(lines[i - 1]):
        return None  # a title follows a blank line (or its overline)
    return m.group(1)
