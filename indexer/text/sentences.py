"""A Turkish-aware sentence splitter with exact spans.

A sentence ends at `.`, `!`, `?` or `…` (optionally followed by closing quotes or
brackets) when whitespace or the end of the text follows. So `5.000 TL`, `89,90 TL`,
`1.5` and `example.com/a.b` never split. A period does not end a sentence after a known
abbreviation (`vb.`, `vs.`, `Dr.`, `örn.`, `e.g.`), after a single capital initial
(`A. Yılmaz`), after a list number at the start of a line (`1.`), or when the next word
starts with a lowercase letter (Turkish ordinals: `3. gün`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

ABBREVIATIONS = {
    # Turkish
    "vb",
    "vs",
    "vd",
    "dr",
    "prof",
    "doç",
    "doc",
    "yrd",
    "av",
    "sn",
    "no",
    "örn",
    "orn",
    "bkz",
    "bk",
    "md",
    "mad",
    "s",
    "sf",
    "syf",
    "tel",
    "cad",
    "sok",
    "mah",
    "apt",
    "blv",
    "yy",
    "ca",
    "st",
    "ltd",
    "şti",
    "sti",
    "a.ş",
    "a.s",
    "t.c",
    "krş",
    "age",
    "agm",
    "hz",
    "alm",
    "ing",
    "fr",
    # English
    "mr",
    "mrs",
    "ms",
    "jr",
    "sr",
    "e.g",
    "i.e",
    "etc",
    "vs",
    "cf",
    "fig",
    "approx",
    "inc",
    "co",
    "corp",
    "dept",
    "est",
    "min",
    "max",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "mt",
    "ft",
    "u.s",
    "p",
    "pp",
    "vol",
    "ed",
    "eds",
    "al",
}

_END = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s|$)")
_WORD_PUNCT = frozenset("_.'’-")


def _word_before(text: str, pos: int) -> str:
    """The run of word characters, `.`, `'`, `’` and `-` that ends at `pos` (or, as a
    regex `$` would, just before a newline at `pos - 1`). A backward scan: the cost is
    the word's length, not the distance from the start of the text."""
    if pos and text[pos - 1] == "\n":
        pos -= 1
    i = pos
    while i and (text[i - 1].isalnum() or text[i - 1] in _WORD_PUNCT):
        i -= 1
    return text[i:pos]


def _blank_before(text: str, pos: int, upto: int) -> bool:
    """Is the line holding `pos` blank from its start up to `upto`? Scans back only to
    the first character that is not whitespace (a single-line file stays linear)."""
    i = pos - 1
    while i >= 0:
        c = text[i]
        if c == "\n":
            return True
        if i < upto and not c.isspace():
            return False
        i -= 1
    return True


def _is_boundary(text: str, dot_start: int, end: int) -> bool:
    """Is the punctuation run text[dot_start:end] the end of a sentence?"""
    punct = text[dot_start:end].rstrip("\"'”’»)]")
    nxt = end
    n = len(text)
    while nxt < n and text[nxt] in " \t":
        nxt += 1
    if nxt >= n or text[nxt] == "\n":
        # the end of the text, or a line break after a full stop, ends the sentence
        return True
    following = text[nxt]
    if punct.endswith(("!", "?", "…")) and not punct.endswith("."):
        return not following.islower()
    if following.islower():
        return False
    if punct != ".":
        return True  # "..." or ".)" followed by a capital
    return _full_stop(text, dot_start)


def _full_stop(text: str, dot_start: int) -> bool:
    """Does a single period at `dot_start`, before a capital, end the sentence? Not
    after an abbreviation, an initial or a list number at the start of a line."""
    word = _word_before(text, dot_start)
    bare = word.strip("'’-").lower()
    if not bare:
        return True
    if bare in ABBREVIATIONS or bare.rstrip(".") in ABBREVIATIONS:
        return False
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False  # an initial: "A. Yılmaz"
    if word.isdigit() and _blank_before(text, dot_start, dot_start - len(word)):
        return False  # a numbered list marker at the start of a line
    return True


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans (absolute offsets) in text[start:end], whitespace trimmed.

    A blank line always ends a sentence. Text without end punctuation is one sentence.
    """
    return list(iter_sentences(text, start, end))


def iter_sentences(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """`split_sentences`, made as they are taken (a long single-line text has hundreds of
    thousands of sentences: a caller that packs them needs a few at a time)."""
    end = len(text) if end is None else end
    pos = start
    while pos < end:
        # paragraphs: never let a sentence run across a blank line
        para_end = text.find("\n\n", pos, end)
        para_end = end if para_end == -1 else para_end
        cur = pos
        for m in _END.finditer(text, pos, para_end):
            if _is_boundary(text, m.start(), m.end()):
                if span := _trimmed(text, cur, m.end()):
                    yield span
                cur = m.end()
        if span := _trimmed(text, cur, para_end):
            yield span
        pos = para_end + 2 if para_end < end else end


def _trimmed(text: str, s: int, e: int) -> tuple[int, int] | None:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return (s, e) if s < e else None
