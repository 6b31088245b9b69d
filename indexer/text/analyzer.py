"""Text analysis for BM25: Unicode and Turkish-aware normalisation, tokens, prefix stems.

- NFKC, then lowercasing that knows Turkish (`İ`→`i`, `I`→`ı`), so `KARGO İADE`
  matches `kargo iade`;
- optional diacritic folding (`ç ğ ı ö ş ü` → `c g i o s u`, and accents in general), so a
  question typed on an English keyboard (`yurtdisina`) matches `yurtdışına`;
- numbers stay whole (`5.000`, `89,90`); thousands separators are dropped so `5.000`,
  `5,000` and `5000` meet;
- a suffix after an apostrophe is an inflection in Turkish (`Van'ın` → `van`);
- optional prefix stemming: keep the first N characters of each word, a classic stemmer
  for agglutinative Turkish (`teslimatı`, `teslimat`, `teslim` → `tesli`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:['’]\w+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:[.,]\d{3})+$")
_FOLD = str.maketrans("çğıöşüâîûÇĞÖŞÜÂÎÛ", "cgiosuaiuCGOSUAIU")

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

# Defaults per language, chosen by measurement (bench/defaults.py; README "Choosing defaults").
LANGUAGE_DEFAULTS = {
    "tr": {"fold": True, "stem": 4, "stopwords": True},
    "en": {"fold": True, "stem": 5, "stopwords": True},
}


@dataclass(frozen=True)
class Analyzer:
    lang: str = "tr"  # tr | en: only lowercasing, apostrophes and stop words differ
    fold: bool = True
    stem: int = 5  # keep the first `stem` characters of a word; 0 = off
    stopwords: bool = False

    @classmethod
    def for_language(cls, lang: str, **overrides) -> Analyzer:
        values = dict(LANGUAGE_DEFAULTS.get(lang, LANGUAGE_DEFAULTS["en"]))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(lang=lang, **values)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Analyzer:
        return cls(**{k: data[k] for k in ("lang", "fold", "stem", "stopwords") if k in data})

    def describe(self) -> str:
        parts = [self.lang]
        parts.append("fold" if self.fold else "nofold")
        parts.append(f"stem{self.stem}" if self.stem else "nostem")
        if self.stopwords:
            parts.append("stop")
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
                text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
        return text

    def __call__(self, text: str) -> list[str]:
        out: list[str] = []
        memo = _memo(self)
        for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text)):
            raw = match.group()
            terms = memo.get(raw)
            if terms is None:
                if len(memo) >= _MEMO_SIZE:  # words repeat (Zipf): a bounded memo, not a copy of the vocabulary
                    memo.clear()
                terms = memo[raw] = self._terms(raw)
            out.extend(terms)
        return out

    def _terms(self, raw: str) -> tuple[str, ...]:
        """The terms of one token as the tokenizer matched it (a pure function of it, so
        `__call__` remembers it: analysing is a dictionary look-up for most words)."""
        if raw[0].isdigit():
            if _THOUSANDS.match(raw):
                raw = raw.replace(".", "").replace(",", "")
            return (self._lower(raw),)
        if "'" in raw or "’" in raw:
            parts = re.split(r"['’]", raw)
            if self.lang == "tr":
                raw = parts[0]
            else:
                raw = "".join(p for p in parts if p.lower() != "s") if len(parts) > 1 else parts[0]
        pieces = [raw]
        if "_" in raw or not (raw.islower() or raw.isupper() or raw.istitle()):
            parts = identifier_parts(raw)
            if len(parts) > 1:  # QueueWorker, max_bytes: the whole name and its words
                pieces = [raw.replace("_", "")] + parts
        stop = STOPWORDS.get(self.lang, set()) if self.stopwords else ()
        out = []
        for piece in pieces:
            token = self._lower(piece)
            if not token or token in stop:
                continue
            if self.stem and len(token) > self.stem and not token[0].isdigit():
                token = token[: self.stem]
            out.append(token)
        return tuple(out)


_MEMO_SIZE = 200_000
_memos: dict[Analyzer, dict[str, tuple[str, ...]]] = {}


def _memo(analyzer: Analyzer) -> dict[str, tuple[str, ...]]:
    """The token memo of an analyzer's settings (shared by equal analyzers)."""
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
        if current:
            prev = current[-1]
            nxt = name[i + 1] if i + 1 < len(name) else ""
            boundary = (
                (prev.islower() and ch.isupper())
                or (prev.isupper() and ch.isupper() and nxt.islower())
                or (prev.isdigit() != ch.isdigit())
            )
            if boundary:
                parts.append(current)
                current = ""
        current += ch
    if current:
        parts.append(current)
    return parts


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
