"""How likely each candidate unit is to hold the answer: a linear score over a few
features, its softmax the probability the packer stops on.

Features (each over the units of one question's candidates):
- `bm25`: BM25 of the unit (its label, a row's header row, its text) with the
  collection's own analyzer and IDF statistics, divided by the best unit's;
- `cosine` and `cosine_raw`: the collection's embedder on the unit (label, header row,
  text) against the query, min-max scaled over the units, and as it is;
- `chunk`: the search score of the best candidate chunk holding the unit, divided by the
  top chunk's (where the search looked);
- `section`: BM25 of the unit's section as the candidates hold it, divided by the best;
- `neighbour`: the best of its adjacent units' plain sum of bm25, cosine and rank prior
  (an answer often runs over two sentences, or a row under a matching one);
- `log_tokens`: log(1 + tokens), and `top_chunk`: 1 for units of the first candidate.

The weights were fitted by `python -m bench.labs.context_fit` (a listwise softmax fit on
public sets, each checked with the others' weights); without unit vectors the lexical
weights apply.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .units import Unit, section_groups

if TYPE_CHECKING:
    from ..bm25.index import BM25Index

FEATURES = (
    "bm25",
    "cosine",
    "cosine_raw",
    "chunk",
    "section",
    "neighbour",
    "log_tokens",
    "top_chunk",
    "window",
)
# fitted by `python -m bench.labs.context_fit fit` on tr, en, xquad-tr, xquad-en (auto, use-m3);
# each set scored with the others' weights puts an answer unit in its top 10 for 75-98% of questions
WEIGHTS = (3.69, 2.58, 2.63, 1.76, 1.31, 0.44, 1.10, 0.83, 2.01)
LEXICAL = (5.55, 0.0, 0.0, 2.18, 1.34, 0.79, 0.79, 0.93, 0.0)
# units off the shortlist (`context.vectors`): their cosine is the FILL percentile of the
# shortlist's, and the scaling starts GAP under its lowest cosine, where the lowest of all
# units lies on average (use-m3, tr and en sets: 0.065 and 0.064); measured with
# bench/context.py against every unit embedded
FILL = 30
GAP = 0.065
K1, B = 1.2, 0.75


def query_idf(bm25: BM25Index, query: str) -> dict[str, float]:
    """IDF of each distinct analysed query term in the collection (unknown terms count
    as the rarest)."""
    terms = list(dict.fromkeys(bm25.analyzer(query)))
    n = max(bm25.n, 1)
    rare = math.log(1 + (n + 0.5) / 0.5)
    ids = [bm25.vocab.find(t) for t in terms]
    known = np.array([i for i in ids if i >= 0], dtype=np.int64)
    idf = iter(bm25.postings.idf(known).tolist() if len(known) else [])
    return {t: (next(idf) if i >= 0 else rare) for t, i in zip(terms, ids)}


class TermMemo:
    """The collection's analyzer with a bounded memory of the texts it analysed: the
    units of the chunks a collection's queries keep finding are analysed once."""

    SIZE = 50_000

    def __init__(self, analyze: Callable[[str], list[str]]) -> None:
        self.analyze = analyze
        self.seen: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> tuple[str, ...]:
        terms = self.seen.get(text)
        if terms is None:
            if len(self.seen) >= self.SIZE:
                self.seen.clear()
            terms = self.seen[text] = tuple(self.analyze(text)) if text else ()
        return terms


def bm25_scores(docs: Sequence[Sequence[str]], idf: dict[str, float]) -> np.ndarray:
    """BM25 of each analysed text against the query terms (`idf`), length-normalised
    over `docs`."""
    if not docs:
        return np.zeros(0)
    avg = max(sum(map(len, docs)) / len(docs), 1.0)
    out = np.zeros(len(docs))
    for i, terms in enumerate(docs):
        norm = K1 * (1 - B + B * len(terms) / avg)
        counts: dict[str, int] = {}
        for t in terms:
            if t in idf:
                counts[t] = counts.get(t, 0) + 1
        out[i] = sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in counts.items())
    return out


def _over_max(x: np.ndarray) -> np.ndarray:
    top = float(x.max()) if len(x) else 0.0
    return x / top if top > 0 else np.zeros_like(x)


def _min_max(x: np.ndarray) -> np.ndarray:
    lo, hi = (float(x.min()), float(x.max())) if len(x) else (0.0, 0.0)
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def features(
    units: list[Unit],
    idf: dict[str, float],
    terms: Callable[[str], Sequence[str]],
    cosines: np.ndarray | None,
    vectors: np.ndarray | None = None,
    query: np.ndarray | None = None,
    known: np.ndarray | None = None,
) -> np.ndarray:
    """The (units × FEATURES) matrix; `cosines` None leaves the embedding columns 0.
    `terms` analyses a text (a `TermMemo`): a unit's text is analysed apart from its
    label and header row, as the analyzer's terms never span a line break. `known`: the
    units whose cosine and vector were measured (None: all; `with_cosines`)."""
    matrix = lexical_features(units, idf, terms)
    if cosines is None:
        return matrix
    measured = Cosines(values=cosines, vectors=vectors, query=query, known=known)
    return with_cosines(matrix, units, measured)


def lexical_features(
    units: list[Unit], idf: dict[str, float], terms: Callable[[str], Sequence[str]]
) -> np.ndarray:
    """The features without the embedder (its columns 0): what the LEXICAL weights read."""
    own = [terms(u.text) for u in units]
    bm = _over_max(
        bm25_scores([(*terms(u.label), *terms(u.head_text), *t) for u, t in zip(units, own)], idf)
    )
    zeros = np.zeros(len(units))
    chunk = _over_max(np.array([max(u.score, 0.0) for u in units]))
    section = _section_scores(units, own, terms, idf)
    neighbour = _neighbour_scores(units, bm + _prior(units))
    tokens = np.log1p([u.n_tokens for u in units])
    top = np.array([1.0 if u.rank == 1 else 0.0 for u in units])
    return np.column_stack([bm, zeros, zeros, chunk, section, neighbour, tokens, top, zeros])


@dataclass(kw_only=True)
class Cosines:
    """The embedder on a question's units: each unit's cosine with the query (`values`),
    their vectors and the query's (for the window column), and which units were measured
    (`known`; None: all). A unit not measured (off the shortlist, `context.vectors`) has
    no vector: its cosine is taken as the FILL percentile of the measured ones."""

    values: np.ndarray
    vectors: np.ndarray | None = None
    query: np.ndarray | None = None
    known: np.ndarray | None = None


def with_cosines(lexical: np.ndarray, units: list[Unit], cos: Cosines) -> np.ndarray:
    """`lexical_features`' matrix with the embedder's columns filled in (and the neighbour
    column, which reads them)."""
    matrix = lexical.copy()
    raw, scaled = _estimated(cos.values, cos.known)
    matrix[:, 1], matrix[:, 2] = scaled, raw
    matrix[:, 5] = _neighbour_scores(units, matrix[:, 0] + scaled + _prior(units))
    matrix[:, 8] = _window_scores(units, cos)
    return matrix


def _prior(units: list[Unit]) -> np.ndarray:
    """Where the search ranked a unit's best chunk, as a prior: 3 / (2 + rank)."""
    return np.array([3.0 / (2.0 + u.rank) for u in units])


def _estimated(values: np.ndarray, known: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A column measured on the `known` units only, as it is and min-max scaled: the
    others at the FILL percentile of the measured values; the scale starts GAP under the
    lowest measured value (where the lowest of all units lies, on average). All known:
    the plain column and its min-max scaling."""
    if known is None or known.all() or not known.any():
        return values, _min_max(values)
    measured = values[known]
    full = np.where(known, values, np.percentile(measured, FILL))
    floor, top = float(measured.min()) - GAP, float(full.max())
    scaled = (full - floor) / (top - floor) if top > floor else np.zeros_like(full)
    return full, scaled


def _section_scores(
    units: list[Unit],
    own: list[Sequence[str]],
    terms: Callable[[str], Sequence[str]],
    idf: dict[str, float],
) -> np.ndarray:
    """`section`: BM25 of each unit's section (its first unit's label and every unit's
    terms, `own`), divided by the best section's."""
    section = np.zeros(len(units))
    groups = section_groups(units)
    docs = [[*terms(units[g[0]].label), *(t for i in g for t in own[i])] for g in groups]
    for g, score in zip(groups, _over_max(bm25_scores(docs, idf))):
        section[g] = score
    return section


def _neighbour_scores(units: list[Unit], base: np.ndarray) -> np.ndarray:
    """`neighbour`: the best `base` score of each unit's adjacent units (0 for none)."""
    return np.array([max((base[j] for j in u.neighbours), default=0.0) for u in units])


def _window_scores(units: list[Unit], cos: Cosines) -> np.ndarray:
    """`window`: the cosine of each unit's vector plus its neighbours' with the query,
    min-max scaled over the units (zeros without the vectors). Only measured vectors are
    summed; a unit with none in its window is estimated (`_estimated`)."""
    vectors, query = cos.vectors, cos.query
    if vectors is None or query is None:
        return np.zeros(len(units))
    known = cos.known if cos.known is not None else np.ones(len(units), dtype=bool)
    sums = np.where(known[:, None], vectors, 0.0).astype(np.float32)
    has = known.copy()
    for i, u in enumerate(units):
        for j in u.neighbours:
            if known[j]:
                sums[i] += vectors[j]
                has[i] = True
    norms = np.linalg.norm(sums, axis=1)
    window = (sums @ query) / np.where(norms > 0, norms, 1.0)
    return _estimated(window, has)[1]


def probabilities(matrix: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Softmax of the linear scores: how likely each unit is the one that answers."""
    if not len(matrix):
        return np.zeros(0)
    s = matrix @ np.asarray(weights, dtype=np.float64)
    p = np.exp(s - s.max())
    probs: np.ndarray = p / p.sum()
    return probs
