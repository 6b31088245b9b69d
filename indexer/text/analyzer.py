"""Text analysis for BM25: Unicode and Turkish-aware normalisation, tokens, prefix stems.

- NFKC, then lowercasing that knows Turkish (`İ`→`i`, `I`→`ı`), so `KARGO İADE`
  matches `kargo iade`;
- optional diacritic folding (`ç ğ ı ö ş ü` → `c g i o s u`, and accents in general), so a
  question typed on an English keyboard (`yurtdisina`) matches `yurtdışına`;
- numbers stay whole (`5.000`, `89,90`, `1.26.4`); thousands separators are dropped so
  `5.000`, `5,000` and `5000` meet;
- a suffix after an apostrophe is an inflection in Turkish (`Van'ın` → `van`);
- optional prefix stemming: keep the first N characters of each word, a classic stemmer
  for agglutinative Turkish (`teslimatı`, `teslimat`, `teslim` → `tesli`);
- codes and identifiers are never stemmed: a token that holds digits and letters
  (`E4021`, `selamlama499`, `5GB`), an identifier (`QueueWorker`, `max_bytes`,
  `os.path.join`, `router.ts`) or a version (`v2.3.1`) is kept whole, case and `-`/`_`
  dropped so `E-4021`, `E4021` and `e4021` are one term, and its parts are added beside it
  as words (`queueworker queue worker`, `5gb 5 gb`). A hyphen binds only a group that
  holds a digit (`AES-256`, `3-5`); `e-posta` stays two words. Those whole terms (bar
  quantities such as `5gb` and ranges such as `3-5`) are the query's *exact* terms
  (`Analyzer.exact_terms`), which the search ranks above fuzzy matches.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

_SPAN = re.compile(r"\w+(?:[-.,]\w+)*(?:['’]\w+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:[.,]\d{3})+$")
_VERSION = re.compile(r"^v?\d+(?:\.\d+){2,}$|^v\d+(?:\.\d+)*$")
_QUANTITY = re.compile(r"^\d+(?:[.,]\d+)?[^\W\d_]+$|^\d+(?:-\d+)+$")  # 5gb, 12ay, 3-5: not codes
_ABBREVIATION = re.compile(r"^[^\W\d_]{1,2}(?:\.[^\W\d_]{1,2})+$")  # e.g, i.e, u.s: not codes
_FOLD = str.maketrans("çğıöşüâîûÇĞÖŞÜÂÎÛ", "cgiosuaiuCGOSUAIU")
_MAX_SWITCHES = 2  # letter/digit switches past which a token is opaque (a hash, an id): no parts

ANALYZER_VERSION = 2  # 2: codes and identifiers kept whole and unstemmed, with their parts

STOPWORDS = {
    "tr": set(
        "acaba ama ancak aslında az bazı belki biri birkaç birşey biz bu çok çünkü da daha de defa diye eğer en gibi "
        "hem hep hepsi her hiç için ile ise kez ki kim mı mi mu mü nasıl ne neden nerde nerede nereye niçin niye "
        "o sanki siz şey şu tüm ve veya ya yani bir olan olarak ya da".split()
    ),
    "en": set(
        "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
        "they this to was will with i you we my our your me do does did can could would should what which who how "
        "when where why".split()
    ),
}


class LanguageDefaults(TypedDict):
    fold: bool
    stem: int
    stopwords: bool


# Defaults per language, chosen by measurement (bench/defaults.py; docs/results.md,
# "Choosing defaults").
LANGUAGE_DEFAULTS: dict[str, LanguageDefaults] = {
    "tr": {"fold": True, "stem": 4, "stopwords": True},
    "en": {"fold": True, "stem": 5, "stopwords": True},
}


@dataclass(frozen=True)
class Analyzer:
    lang: str = "tr"  # tr | en: only lowercasing, apostrophes and stop words differ
    fold: bool = True
    stem: int = 5  # keep the first `stem` characters of a word; 0 = off
    stopwords: bool = False
    codes: bool = True  # codes and identifiers whole and unstemmed (False: version 1's analysis, for comparison)

    @classmethod
    def for_language(
        cls,
        lang: str,
        *,
        fold: bool | None = None,
        stem: int | None = None,
        stopwords: bool | None = None,
        codes: bool | None = None,
    ) -> Analyzer:
        """The language's defaults (English's for another language), overridden by the
        values given (None: not given)."""
        default = LANGUAGE_DEFAULTS.get(lang, LANGUAGE_DEFAULTS["en"])
        return cls(
            lang=lang,
            fold=default["fold"] if fold is None else fold,
            stem=default["stem"] if stem is None else stem,
            stopwords=default["stopwords"] if stopwords is None else stopwords,
            codes=cls.codes if codes is None else codes,
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "version": ANALYZER_VERSION}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Analyzer:
        return cls(
            **{k: data[k] for k in ("lang", "fold", "stem", "stopwords", "codes") if k in data}
        )

    def describe(self) -> str:
        parts = [self.lang]
        parts.append("fold" if self.fold else "nofold")
        parts.append(f"stem{self.stem}" if self.stem else "nostem")
        if self.stopwords:
            parts.append("stop")
        if not self.codes:
            parts.append("v1")
        return "-".join(parts)

    def normalise(self, text: str) -> str:
        """NFKC, language-aware lowercasing and (optionally) diacritic folding."""
        return self._lower(unicodedata.normalize("NFKC", text))

    def _lower(self, text: str) -> str:
        if self.lang == "tr":
            text = text.replace("İ", "i").replace("I", "ı")
        else:
            text = text.replace("İ", "i")
        text = text.lower()
        if self.fold:
            text = text.translate(_FOLD)
            if not text.isascii():
                text = "".join(
                    ch
                    for ch in unicodedata.normalize("NFKD", text)
                    if not unicodedata.combining(ch)
                )
        return text

    def __call__(self, text: str) -> list[str]:
        if not self.codes:
            return _analyse_v1(self, text)
        out: list[str] = []
        memo = _memo(self)
        for match in _SPAN.finditer(unicodedata.normalize("NFKC", text)):
            span = match.group()
            terms = memo.get(span)
            if terms is None:  # a pure function of the span: analysing is a look-up for most words
                # words repeat (Zipf): a bounded memo, not a copy of the vocabulary
                if len(memo) >= _MEMO_SIZE:
                    memo.clear()
                found: list[str] = []
                for unit in _pieces(self._base(span)):
                    self._unit_terms(unit, found)
                terms = memo[span] = tuple(found)
            out.extend(terms)
        return out

    def exact_terms(self, text: str) -> list[str]:
        """The query's codes, identifiers and versions as whole terms (`E-4021` -> `e4021`,
        `QueueWorker.drain` -> `queueworker.drain`, `v2.3.1`), distinct, in order; not
        quantities (`5GB`), ranges (`3-5`), abbreviations (`e.g.`), plain numbers or words."""
        if not self.codes:
            return []
        out: list[str] = []
        for unit in self._units(text):
            whole = self._whole(unit)
            if whole and whole not in out:
                out.append(whole)
        return out

    # -- the pieces ---------------------------------------------------------------------------
    def _units(self, text: str) -> Iterator[str]:
        """The units of a text: words, numbers, and codes or identifiers with their dots and
        digit-bound hyphens, apostrophe suffixes dealt with."""
        for match in _SPAN.finditer(unicodedata.normalize("NFKC", text)):
            yield from _pieces(self._base(match.group()))

    def _base(self, raw: str) -> str:
        """A span without the suffix after its apostrophe (an inflection in Turkish); in
        English the letters after it stay, bar a possessive s."""
        base, tail = _apostrophe_split(raw)
        # English: doesn't -> doesnt, user's -> user
        if tail and self.lang != "tr" and base.isalpha():
            base += "".join(p for p in re.split(r"['’]", tail) if p and p.lower() != "s")
        return base

    def _kind(self, unit: str) -> str:
        if _VERSION.match(unit) and not _THOUSANDS.match(unit):
            return "version"
        if _NUMBER.fullmatch(unit):
            return "number"
        if unit.isalpha() and (unit.islower() or unit.isupper() or unit.istitle()):
            return "word"
        return "code"

    def _whole(self, unit: str) -> str:
        """The exact term of a unit ("" when it is a word, a plain number, a quantity or a range)."""
        kind = self._kind(unit)
        if kind == "word" or kind == "number":
            return ""
        whole = _canonical(self._lower(unit))
        return "" if not whole or _QUANTITY.match(whole) or _ABBREVIATION.match(whole) else whole

    def _word(self, word: str, out: list[str]) -> None:
        token = self._lower(word)
        if not token or (self.stopwords and token in STOPWORDS.get(self.lang, ())):
            return
        out.append(_stemmed(token, self.stem))

    def _unit_terms(self, unit: str, out: list[str]) -> None:
        kind = self._kind(unit)
        if kind == "word":
            self._word(unit, out)
            return
        if kind == "number":
            out.append(_without_thousands(unit))
            return
        whole = _canonical(self._lower(unit))
        if not whole:
            return
        out.append(whole)
        if kind == "version":
            if unit[0] in "vV":
                out.append(unit[1:])
            return
        self._code_terms(unit, whole, out)

    def _code_terms(self, unit: str, whole: str, out: list[str]) -> None:
        """The terms of a code or identifier beside its `whole` one: its segments (between
        `-`, `.`, `_`) and their parts."""
        segments = [seg for seg in re.split(r"[-._]+", unit) if seg]
        for seg in segments:
            parts = _segment_parts(seg)
            if len(segments) > 1 and (len(parts) > 1 or not seg.isalpha()):
                self._segment_term(seg, whole, out)
            self._part_terms(parts, whole, out)

    def _part_terms(self, parts: list[str], whole: str, out: list[str]) -> None:
        """Numbers and words of a segment's parts (one letter, the `E` of E4021, or an
        opaque segment kept whole gives none)."""
        for part in parts:
            if part.isdigit():
                out.append(part)
            elif part.isalpha() and len(part) > 1 and self._lower(part) != whole:
                self._word(part, out)

    def _segment_term(self, seg: str, whole: str, out: list[str]) -> None:
        """QueueWorker of QueueWorker.drain: a term of its own (not a bare number)."""
        seg_whole = self._lower(seg)
        if seg_whole != whole and not seg_whole.isdigit():
            out.append(seg_whole)


def _apostrophe_split(raw: str) -> tuple[str, str]:
    """`raw` cut before its first apostrophe: (base, tail from the apostrophe on)."""
    cuts = [i for i in (raw.find("'"), raw.find("’")) if i >= 0]
    if not cuts:
        return raw, ""
    return raw[: min(cuts)], raw[min(cuts) :]


def _pieces(base: str) -> Iterator[str]:
    """The units of a span's base: a comma binds digits only, a hyphen only a group that
    holds a digit (`e-posta`, `real-time`: words)."""
    if "," not in base and "-" not in base:
        if base:
            yield base
        return
    for piece in re.split(r"(?<!\d),|,(?!\d)", base):
        if not piece:
            continue
        if "-" in piece and not any(ch.isdigit() for ch in piece):
            yield from (p for p in piece.split("-") if p)
        else:
            yield piece


def _segment_parts(seg: str) -> list[str]:
    """The parts of an identifier's segment; an opaque one (a hash, an id: letters and
    digits switching often) stays whole."""
    switches = sum(1 for a, b in zip(seg, seg[1:]) if a.isdigit() != b.isdigit())
    return identifier_parts(seg) if switches <= _MAX_SWITCHES else [seg]


def _stemmed(token: str, stem: int) -> str:
    """The first `stem` characters of a word (0: all of it); a number stays whole."""
    if stem and len(token) > stem and not token[0].isdigit():
        return token[:stem]
    return token


def _without_thousands(number: str) -> str:
    """`5.000`, `5,000` -> `5000`; other numbers (`89,90`, `1.26.4`) unchanged."""
    return number.replace(".", "").replace(",", "") if _THOUSANDS.match(number) else number


def _canonical(lowered: str) -> str:
    """`e-4021` -> `e4021`, `max_bytes` -> `maxbytes`; a hyphen between digits stays (`3-5`),
    dots stay (`v2.3.1`, `router.ts`)."""
    lowered = lowered.replace("_", "")
    return re.sub(r"-(?!(?<=\d-)\d)", "", lowered).strip(".-")


_TOKEN_V1 = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:['’]\w+)*")


def _analyse_v1(analyzer: Analyzer, text: str) -> list[str]:
    """Version 1's analysis (every word stemmed, codes included): for comparisons only."""
    out: list[str] = []
    stop: set[str] | tuple[()] = STOPWORDS.get(analyzer.lang, set()) if analyzer.stopwords else ()
    lower = analyzer._lower
    for match in _TOKEN_V1.finditer(unicodedata.normalize("NFKC", text)):
        raw = match.group()
        if raw[0].isdigit():
            out.append(lower(_without_thousands(raw)))
            continue
        for piece in _v1_pieces(_v1_base(raw, analyzer.lang)):
            token = lower(piece)
            if token and token not in stop:
                out.append(_stemmed(token, analyzer.stem))
    return out


def _v1_base(raw: str, lang: str) -> str:
    """Version 1: a word without its apostrophe suffix (Turkish), or without the
    apostrophes and a possessive s (English)."""
    if "'" not in raw and "’" not in raw:
        return raw
    parts = re.split(r"['’]", raw)
    if lang == "tr":
        return parts[0]
    return "".join(p for p in parts if p.lower() != "s") if len(parts) > 1 else parts[0]


def _v1_pieces(raw: str) -> list[str]:
    """Version 1: a word, or an identifier joined (`_` dropped) followed by its parts."""
    if "_" in raw or not (raw.islower() or raw.isupper() or raw.istitle()):
        parts = identifier_parts(raw)
        if len(parts) > 1:
            return [raw.replace("_", "")] + parts
    return [raw]


_MEMO_SIZE = 200_000
_memos: dict[Analyzer, dict[str, tuple[str, ...]]] = {}


def _memo(analyzer: Analyzer) -> dict[str, tuple[str, ...]]:
    """The unit memo of an analyzer's settings (shared by equal analyzers)."""
    memo = _memos.get(analyzer)
    if memo is None:
        memo = _memos.setdefault(analyzer, {})
    return memo


def identifier_parts(name: str) -> list[str]:
    """Words of a code identifier: `QueueWorker` -> Queue, Worker; `max_bytes` -> max,
    bytes; `HTTPServer` -> HTTP, Server; `parse2d` -> parse, 2, d."""
    parts: list[str] = []
    current = ""
    for i, ch in enumerate(name):
        if ch == "_":
            if current:
                parts.append(current)
            current = ""
            continue
        nxt = name[i + 1] if i + 1 < len(name) else ""
        if current and _part_boundary(current[-1], ch, nxt):
            parts.append(current)
            current = ""
        current += ch
    if current:
        parts.append(current)
    return parts


def _part_boundary(prev: str, ch: str, nxt: str) -> bool:
    """Does a new part of an identifier start at `ch` (between `prev` and `nxt`)? At a
    capital after a lowercase letter, at the last capital of a run followed by a
    lowercase letter (`HTTPServer`), and where letters and digits meet."""
    return (
        (prev.islower() and ch.isupper())
        or (prev.isupper() and ch.isupper() and nxt.islower())
        or (prev.isdigit() != ch.isdigit())
    )


_TR_MARKERS = set("ğşıİĞŞ")
_TR_WORDS = {"ve", "bir", "bu", "için", "ile", "olarak", "veya", "değil", "daha", "gibi"}
_EN_WORDS = {"the", "and", "of", "to", "is", "for", "with", "that", "are", "this"}


def detect_language(texts: list[str]) -> str:
    """`tr` or `en` from a sample of texts: Turkish letters and common function words."""
    tr = en = 0
    for text in texts:
        sample = text[:20000]
        tr += sum(1 for ch in sample if ch in _TR_MARKERS)
        words = re.findall(r"\w+", sample.lower())
        tr += 3 * sum(1 for w in words if w in _TR_WORDS)
        en += 3 * sum(1 for w in words if w in _EN_WORDS)
    return "tr" if tr > en else "en"
