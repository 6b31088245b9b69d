"""The one rule for "inside a word": a cut between two word characters (letters, digits,
`_`, or a combining mark) splits a word. BPE token boundaries often do (`Yen|ilenmiş`),
so token windows move their edges to the boundaries this rule allows, and boundary
quality (evaluation.chunk_boundaries) counts the cuts that break it."""

from __future__ import annotations

import unicodedata


def is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")


def inside_word(text: str, pos: int) -> bool:
    """Does a cut at offset `pos` (between text[pos-1] and text[pos]) split a word?"""
    return 0 < pos < len(text) and is_word_char(text[pos - 1]) and is_word_char(text[pos])
