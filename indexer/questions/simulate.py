"""Simulated known-item queries (Azzopardi, de Rijke and Balog, SIGIR 2007; Jordan et al.
2006; Berendsen et al. 2013): a query is a handful of terms a person would type to find a
passage they know is there.

Each term is drawn from one of three sources — the answer passage itself, its context (the
heading path and the neighbouring text) or the rest of its document (words that are not in
the target at all, as a paraphrasing user's are; the corpus at large, the literature's
background model, agreed worse: see docs/results.md) — with a weight `tf × idf^d`: d = 0 picks
popular terms (what a person who does not know the exact wording remembers), larger d the
discriminative ones. Then what people do to a query: word order changed, inflection
dropped, Turkish typed without its letters, a question frame around the terms.

The knobs (`Knobs`) were chosen by how well made-up questions rank strategies × search
modes like questions people wrote, on seven sets (bench/questions_agreement.py).
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass

from ..text.analyzer import STOPWORDS, Analyzer
from ..types import Document
from .passages import Passage
from .typing_noise import surface

# 6'sı: one word
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:['’][^\W\d_]+)?|[^\W\d_][\w]*(?:['’][^\W\d_]+)?")
COMMON_SHARE = (
    0.3  # a term in more than this share of a corpus's passages is treated as a stop word
)
_MIXED = re.compile(r"\d").search
NUMBER_WEIGHT = 0.25  # people ask for a number more than they type it
CONTEXT_CHARS = 600  # neighbouring text on each side of a passage that its context terms come from,
# within its paragraph (a blank line ends what a reader remembers around a sentence)


@dataclass(frozen=True)
class Knobs:
    """What shapes a made-up query. The tuned ones first: their defaults are the setting
    with the best mean Kendall tau-b over all seven sets (bench/agreement_tune.py; each
    set's own number in docs/results.md comes from the setting chosen without it)."""

    passage: float = 0.45  # share of terms drawn from the answer passage ...
    noise: float = 0.35  # ... from the rest of the document; the remainder from the context
    code_noise: float = 0.25  # the same for code: from the rest of the file (its other definitions)
    discrimination: float = 0.0  # passage term weight tf × idf^discrimination
    context_discrimination: float = 1.0  # the same for context and off-target terms
    length: float = 5.5  # mean number of content terms
    phrase: float = 0.0  # chance a term brings the word after it (a remembered phrase)
    question: float = 0.0  # share of queries wrapped in a question frame (Turkish, English)
    section_words: int = (
        150  # target: a section this short as a whole, else the passage's paragraph/table/list
    )
    # how people type (the first two tuned too: each costs the embedding, not BM25, a little)
    shuffle: float = 0.25  # terms (phrases stay whole) in another order than the text's
    inflect: float = 0.15  # a term's inflection dropped
    ascii: float = 0.2  # Turkish typed without ç ğ ı ö ş ü
    symbol: float = 0.35  # code: share of queries that are a symbol name as typed

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True, slots=True)
class Term:
    key: str  # the analyzer's form (what BM25 matches)
    surface: str  # the word as written, lowercased (a phrase: the words)
    weight: float
    follow: tuple[str, str] | None = None  # (key, surface) of the content word after it in its text


class TermStats:
    """Term statistics of a corpus: document frequency over its passages (blocks), per
    language analyzers, and the corpus's own very common words."""

    def __init__(self) -> None:
        self.df: Counter = Counter()
        self.units = 0
        self._analyzers: dict[str, Analyzer] = {}
        self._lower: dict[str, Analyzer] = {}
        self.common: set[str] = set()

    def analyzer(self, lang: str) -> Analyzer:
        if lang not in self._analyzers:
            self._analyzers[lang] = Analyzer.for_language(lang)
            self._lower[lang] = Analyzer(lang=lang, fold=False, stem=0)
        return self._analyzers[lang]

    def terms(self, text: str, lang: str) -> list[tuple[str, str]]:
        """(key, surface) of the content words of a text, in order."""
        analyzer = self.analyzer(lang)
        lower = self._lower[lang].normalise
        stop = STOPWORDS.get(lang, set())
        out = []
        for m in _TOKEN.finditer(text):
            raw = m.group()
            if _not_typed(raw):
                continue
            written = raw if raw.isupper() and len(raw) <= 5 else lower(raw)  # PIN, KKTC, EFT stay
            if written.lower() in stop:
                continue
            keys = analyzer(raw)
            if keys:
                out.append((keys[0], written))
        return out

    def add(self, text: str, lang: str) -> None:
        """Count one passage (block) of the corpus."""
        self.units += 1
        self.df.update({k for k, _ in self.terms(text, lang)})

    def freeze(self) -> None:
        if self.units >= 20:
            self.common = {k for k, n in self.df.items() if n > COMMON_SHARE * self.units}

    def idf(self, key: str) -> float:
        n = self.units or 1
        return math.log((n + 1) / (self.df.get(key, 0) + 0.5))


def _not_typed(raw: str) -> bool:
    """A letter, a hash or a key, an identifier with digits: nothing a person types."""
    if len(raw) < 2 and not raw.isdigit():
        return True
    return len(raw) > 24 or (not raw[0].isdigit() and bool(_MIXED(raw)))


def pool(
    vocab: TermStats,
    text: str,
    lang: str,
    d: float,
    boost: float = 1.0,
    weights: list[float] | None = None,
) -> dict[str, Term]:
    """Candidate terms of a text with their weights (tf × idf^d × boost); `weights` gives a
    weight per word position (a table row's key cell counts more than its values)."""
    surfaces: dict[str, str] = {}
    tfs: dict[str, float] = {}
    follows: dict[str, tuple[str, str] | None] = {}
    terms = [(key, word) for key, word in vocab.terms(text, lang) if key not in vocab.common]
    for i, (key, word) in enumerate(terms):
        w = _position_weight(weights, i) * (NUMBER_WEIGHT if word[0].isdigit() else 1.0)
        if key in tfs:
            tfs[key] += w
        else:
            surfaces[key], tfs[key] = word, w
            follows[key] = terms[i + 1] if i + 1 < len(terms) else None
    return {
        k: Term(k, surfaces[k], tf * boost * max(vocab.idf(k), 0.05) ** d, follows[k])
        for k, tf in tfs.items()
    }


def _position_weight(weights: list[float] | None, i: int) -> float:
    return weights[i] if weights and i < len(weights) else 1.0


def draw(
    rng: random.Random,
    pools: dict[str, dict[str, Term]],
    shares: dict[str, float],
    k: int,
    phrase: float = 0.0,
) -> list[tuple[str, Term]]:
    """k distinct words, each from a source chosen by its share (among the sources that
    still have terms), then a term of that source by weight; with probability `phrase` a
    term brings the word that follows it in its text (people remember phrases)."""
    taken: set[str] = set()
    out = []
    words = 0
    while words < k:
        live = _live(pools, shares, taken)
        if not live:
            break
        source = rng.choices(live, [shares[s] for s in live])[0]
        terms = [t for key, t in pools[source].items() if key not in taken]
        term = rng.choices(terms, [t.weight for t in terms])[0]
        taken.add(term.key)
        words += 1
        follow = _followed(rng, term, taken, phrase) if words < k else None
        if follow is not None:
            taken.add(follow[0])
            words += 1
            term = Term(term.key, f"{term.surface} {follow[1]}", term.weight)
        out.append((source, term))
    return out


def _live(
    pools: dict[str, dict[str, Term]], shares: dict[str, float], taken: set[str]
) -> list[str]:
    """The sources with a share that still have terms not taken."""
    return [s for s in pools if shares.get(s, 0) > 0 and any(t not in taken for t in pools[s])]


def _followed(
    rng: random.Random, term: Term, taken: set[str], phrase: float
) -> tuple[str, str] | None:
    """The word after a term, when it is not taken yet and the term brings it (chance
    `phrase`: the random draw happens only when it could)."""
    if term.follow and term.follow[0] not in taken and rng.random() < phrase:
        return term.follow
    return None


def query_length(rng: random.Random, mean: float) -> int:
    return max(2, min(9, round(rng.gauss(mean, 1.0))))


# -- a query for a prose passage ----------------------------------------------------------------


class DocumentTerms:
    """A document's term counts, made once: the pool off-target words are drawn from."""

    def __init__(self, vocab: TermStats, text: str, lang: str) -> None:
        self.counts: Counter = Counter()
        self.surface: dict[str, str] = {}
        for key, word in vocab.terms(text, lang):
            if key not in vocab.common:
                self.counts[key] += 1
                self.surface.setdefault(key, word)

    def pool(self, vocab: TermStats, d: float, exclude: set[str]) -> dict[str, Term]:
        return {
            k: Term(k, self.surface[k], n * max(vocab.idf(k), 0.05) ** d)
            for k, n in self.counts.items()
            if k not in exclude
        }


def prose_query(
    rng: random.Random,
    vocab: TermStats,
    knobs: Knobs,
    doc: Document,
    passage: Passage,
    lang: str,
    doc_terms: DocumentTerms,
) -> tuple[str, list[str]] | None:
    """A known-item query for a passage (see the module docstring), and the tags saying
    how it was made; None when the passage gives too few terms."""
    text = doc.text
    answer = text[passage.start : passage.end]
    own, context = _passage_pools(vocab, knobs, doc, passage, lang)
    t0, t1 = passage.target
    near = {k for k, _ in vocab.terms(text[t0:t1], lang)} | set(own) | set(context)
    noise = doc_terms.pool(vocab, knobs.context_discrimination, near)
    pools = {"passage": own, "context": context, "noise": noise}
    shares = {
        "passage": knobs.passage,
        "context": max(0.0, 1 - knobs.passage - knobs.noise),
        "noise": knobs.noise,
    }
    chosen = draw(rng, pools, shares, query_length(rng, knobs.length), knobs.phrase)
    if _too_thin(chosen):
        return None
    # as the words come (heading first)
    order = {k: i for i, k in enumerate(list(context) + list(own))}
    chosen.sort(key=lambda st: order.get(st[1].key, len(order)))
    question, applied = surface(rng, knobs, [t.surface for _, t in chosen], answer, lang)
    return question, [*source_tags(chosen), *applied]


def source_tags(chosen: list[tuple[str, Term]]) -> list[str]:
    """`context-terms`, `noise-terms`: the sources besides the passage the terms came from."""
    sources = sorted({s for s, _ in chosen} - {"passage"})
    return [f"{s}-terms" for s in sources]


def _too_thin(chosen: list[tuple[str, Term]]) -> bool:
    """Fewer than two words, or none from the passage or its context."""
    if sum(len(t.surface.split()) for _, t in chosen) < 2:
        return True
    return all(source == "noise" for source, _ in chosen)


def _passage_pools(
    vocab: TermStats, knobs: Knobs, doc: Document, passage: Passage, lang: str
) -> tuple[dict[str, Term], dict[str, Term]]:
    """The terms of the passage itself (a table row: its key cell counts more than its
    values), and those of its context: the heading path (a row's: with the header row)
    and the text around it within its paragraph, minus the passage's own."""
    text = doc.text
    d = knobs.discrimination
    answer = text[passage.start : passage.end]
    section = doc.sections[passage.section] if doc.sections else None
    heading = " ".join(section.heading_path) if section else doc.title
    if passage.kind == "row":
        assert passage.header is not None  # a table row always has its header row
        cells = [c.strip() for c in answer.strip().strip("|").split("|")]
        own = merge(
            pool(vocab, cells[0], lang, d), pool(vocab, " ".join(cells[1:]), lang, d, boost=0.5)
        )
        heading += " " + text[passage.header[0] : passage.header[1]].replace("|", " ")
    else:
        own = pool(vocab, answer, lang, d)
    lo, hi = _paragraph(
        text, passage, section.body_start if section else 0, section.end if section else len(text)
    )
    dc = knobs.context_discrimination
    around = text[lo : passage.start] + " \n " + text[passage.end : hi]
    context = merge(pool(vocab, heading, lang, dc, boost=2.0), pool(vocab, around, lang, dc))
    for key in own:
        context.pop(key, None)
    return own, context


def _paragraph(text: str, passage: Passage, start: int, end: int) -> tuple[int, int]:
    """Where a passage's context is read: up to CONTEXT_CHARS either side, within its
    paragraph (blank lines bound it) and its section."""
    before = text.rfind("\n\n", start, passage.start)
    after = text.find("\n\n", passage.end, end)
    lo = max(start if before < 0 else before + 2, passage.start - CONTEXT_CHARS)
    hi = min(end if after < 0 else after, passage.end + CONTEXT_CHARS)
    return lo, hi


def merge(a: dict[str, Term], b: dict[str, Term]) -> dict[str, Term]:
    out = dict(a)
    for k, t in b.items():
        out[k] = Term(k, out[k].surface, out[k].weight + t.weight) if k in out else t
    return out
