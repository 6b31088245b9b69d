"""How people type a query (the last step of a made-up one, `simulate`): words in
another order, inflection dropped (`teslimatı` → `teslimat`, `deliveries` → `delivery`),
Turkish typed without its letters, and a question frame around the terms that fits what
the passage states."""

from __future__ import annotations

import random
import re
from typing import Protocol


class TypingKnobs(Protocol):
    """The chances of each way of typing (`simulate.Knobs` holds them)."""

    @property
    def shuffle(self) -> float: ...

    @property
    def inflect(self) -> float: ...

    @property
    def question(self) -> float: ...

    @property
    def ascii(self) -> float: ...


_FOLD = str.maketrans("çğıöşüâîûÇĞİÖŞÜÂÎÛ", "cgiosuaiuCGIOSUAIU")

_TR_SUFFIXES = sorted(
    "lar ler ları leri ların lerin larda lerde lardan lerden larla lerle ında inde unda ünde ından inden undan ünden "
    "ını ini unu ünü ına ine una üne nın nin nun nün dan den tan ten da de ta te".split(),
    key=len,
    reverse=True,
)


def uninflect(word: str, lang: str) -> str:
    """A word without its last suffix, as people often type it (`teslimatı` → `teslimat`,
    `deliveries` → `delivery`); unchanged when nothing safe can be cut."""
    if not word.isalpha():
        return word.split("'")[0].split("’")[0]
    if lang == "tr":
        return _uninflect_tr(word)
    if lang == "en":
        return _singular(word)
    return word


def _uninflect_tr(word: str) -> str:
    for suffix in _TR_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _singular(word: str) -> str:
    """An English plural typed singular (stripping -ed or -ing leaves no word a person types)."""
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 4:
        return word[:-1]
    return word


def ascii_fold(text: str) -> str:
    return text.translate(_FOLD)


def tr_lower(text: str) -> str:
    return text.replace("İ", "i").replace("I", "ı").lower()


_NUMBER = re.compile(r"\d|%|₺|\$|€|£|\bTL\b")
_TIME = {
    "tr": re.compile(r"\b(gün|saat|hafta|ay|yıl|dakika|süre)\w*", re.I),
    "en": re.compile(r"\b(days?|hours?|weeks?|months?|years?|minutes?|deadline|period)\b", re.I),
}
QUESTION_FRAMES = {
    "tr": {
        "number": ["{q} ne kadar?", "{q} kaç?", "{q} ne kadar olur?"],
        "time": ["{q} ne zaman?", "{q} kaç gün sürer?", "{q} ne kadar sürer?"],
        "other": [
            "{q} nedir?",
            "{q} nasıl yapılır?",
            "{q} mümkün mü?",
            "{q} var mı?",
            "{q} hakkında bilgi",
        ],
    },
    "en": {
        "number": ["how much is the {q}?", "how many {q}?", "what is the {q}?"],
        "time": ["how long does {q} take?", "when {q}?", "how long {q}?"],
        "other": ["what is {q}?", "how do I {q}?", "can I {q}?", "which {q}?", "{q}?"],
    },
}
_CODE_FRAMES = {
    "code-en": [
        "how does {q} work?",
        "where is {q} done?",
        "which function {q}?",
        "how is {q} handled?",
    ],
    "code-tr": ["{q} nasıl çalışıyor?", "{q} nerede yapılıyor?", "{q} hangi fonksiyonda?"],
}
QUESTION_FRAMES.update({k: {"number": v, "time": v, "other": v} for k, v in _CODE_FRAMES.items()})


def frame(rng: random.Random, terms: str, passage: str, lang: str) -> str:
    """The terms inside a question frame that fits what the passage states (an amount,
    a duration, anything else)."""
    frames = QUESTION_FRAMES[lang]
    if lang not in _TIME:
        kind = "other"
    elif _NUMBER.search(passage):
        kind = "time" if _TIME[lang].search(passage) and rng.random() < 0.5 else "number"
    else:
        kind = "time" if _TIME[lang].search(passage) and rng.random() < 0.3 else "other"
    text = rng.choice(frames[kind]).format(q=terms)
    first = "İ" if text[0] == "i" and lang == "tr" else text[0].upper()
    return first + text[1:]


def surface(
    rng: random.Random, knobs: TypingKnobs, chosen: list[str], passage: str, lang: str
) -> tuple[str, list[str]]:
    """The query text of the chosen terms (their words, in order) as a person types it,
    and the noise applied."""
    applied = []
    words = list(chosen)  # (acronyms keep their capitals: see TermStats.terms)
    if _shuffled(rng, knobs.shuffle, words):
        applied.append("shuffled")
    if _uninflected(rng, knobs.inflect, words, lang):
        applied.append("inflected")
    text = " ".join(words)
    if lang in QUESTION_FRAMES and rng.random() < knobs.question:
        text = frame(rng, text, passage, lang)
        applied.append("question")
    if lang == "tr" and rng.random() < knobs.ascii:
        lower = tr_lower(text)
        text = ascii_fold(lower)
        if text != lower:
            applied.append("ascii")
    return text, applied


def _shuffled(rng: random.Random, chance: float, words: list[str]) -> bool:
    """Put the words in another order with the given chance (two words or more), in place;
    did the order change?"""
    if rng.random() < chance and len(words) > 1:
        before = list(words)
        rng.shuffle(words)
        return words != before
    return False


def _uninflected(rng: random.Random, chance: float, words: list[str], lang: str) -> bool:
    """Drop the inflection of each word (each part of a phrase) with the given chance, in
    place; did any word change?"""
    inflected = False
    for i, w in enumerate(words):
        if rng.random() < chance:
            new = " ".join(uninflect(part, lang) for part in w.split(" "))
            inflected |= new != w
            words[i] = new
    return inflected
