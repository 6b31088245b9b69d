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
from typing import TYPE_CHECKING

import numpy as np

from .context_units import Unit, section_groups

if TYPE_CHECKING:
    from .bm25 import BM25Index

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
) -> np.ndarray:
    """The (units × FEATURES) matrix; `cosines` None leaves the embedding columns 0.
    `terms` analyses a text (a `TermMemo`): a unit's text is analysed apart from its
    label and header row, as the analyzer's terms never span a line break."""
    n = len(units)
    own = [terms(u.text) for u in units]
    bm = _over_max(
        bm25_scores([(*terms(u.label), *terms(u.head_text), *t) for u, t in zip(units, own)], idf)
    )
    raw, cos = _cosine_columns(cosines, n)
    chunk = _over_max(np.array([max(u.score, 0.0) for u in units]))
    section = _section_scores(units, own, terms, idf)
    prior = np.array([3.0 / (2.0 + u.rank) for u in units])
    neighbour = _neighbour_scores(units, bm + cos + prior)
    tokens = np.log1p([u.n_tokens for u in units])
    top = np.array([1.0 if u.rank == 1 else 0.0 for u in units])
    window = _window_scores(units, vectors, query)
    return np.column_stack([bm, cos, raw, chunk, section, neighbour, tokens, top, window])


def _cosine_columns(cosines: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """`cosine_raw` and `cosine` (min-max scaled) of the `n` units; zeros without cosines."""
    if cosines is None:
        return np.zeros(n), np.zeros(n)
    return cosines, _min_max(cosines)


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


def _window_scores(
    units: list[Unit], vectors: np.ndarray | None, query: np.ndarray | None
) -> np.ndarray:
    """`window`: the cosine of each unit's vector plus its neighbours' with the query,
    min-max scaled over the units (zeros without the vectors)."""
    if vectors is None or query is None:
        return np.zeros(len(units))
    sums = np.array(vectors, dtype=np.float32, copy=True)  # each unit's vector plus its neighbours'
    for i, u in enumerate(units):
        for j in u.neighbours:
            sums[i] += vectors[j]
    norms = np.linalg.norm(sums, axis=1)
    return _min_max((sums @ query) / np.where(norms > 0, norms, 1.0))


def probabilities(matrix: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Softmax of the linear scores: how likely each unit is the one that answers."""
    if not len(matrix):
        return np.zeros(0)
    s = matrix @ np.asarray(weights, dtype=np.float64)
    p = np.exp(s - s.max())
    probs: np.ndarray = p / p.sum()
    return probs
