"""Rank fusion: small pure functions over ranked id lists and score maps."""

from __future__ import annotations

from collections.abc import Sequence


def rrf(rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), ranks from 1.

    A document at ranks 1 and 3 of two lists scores 1/61 + 1/63. Ties keep the order in
    which documents were first seen (list by list, best first).
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    order = {doc: i for i, doc in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def minmax(scores: dict[str, float]) -> dict[str, float]:
    """Scale scores to [0, 1]; a list whose scores are all equal maps to 1."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {doc: 1.0 for doc in scores}
    return {doc: (s - lo) / (hi - lo) for doc, s in scores.items()}


def weighted(embedding: dict[str, float], bm25: dict[str, float], alpha: float = 0.5) -> list[tuple[str, float]]:
    """Weighted sum of min-max normalised scores: alpha * embedding + (1 - alpha) * bm25.
    A document missing from one side gets 0 for that side."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha ({alpha}) must be between 0 and 1")
    e, b = minmax(embedding), minmax(bm25)
    docs = list(dict.fromkeys([*embedding, *bm25]))
    fused = {doc: alpha * e.get(doc, 0.0) + (1 - alpha) * b.get(doc, 0.0) for doc in docs}
    order = {doc: i for i, doc in enumerate(docs)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


# The default fusion, chosen on six question sets (three nobody here wrote; bench/public.py,
# README "Choosing defaults"): the embedding side's share of a min-max weighted sum moves
# with how well BM25's best match covers the query — per embedder, since a weak one
# (USE) must give way to BM25 sooner than a retrieval-trained one (e5, Ollama models).
# embedder -> (embedding share when BM25 covers the query well, ... poorly), (coverage
# counted as poor at or below, good at or above)
ADAPTIVE_DEFAULTS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "use-m3": ((0.1, 0.8), (0.3, 0.6)),
    "*": ((0.3, 0.8), (0.25, 0.6)),  # e5-small, and any retrieval-trained model (Ollama)
}
ADAPTIVE_ALPHA, ADAPTIVE_COVERAGE = ADAPTIVE_DEFAULTS["*"]


def adaptive_defaults(embedder: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (alpha range, coverage range) the adaptive fusion uses with this embedder."""
    return ADAPTIVE_DEFAULTS.get(embedder, ADAPTIVE_DEFAULTS["*"])


def adaptive_alpha(
    coverage: float, alpha: tuple[float, float] = ADAPTIVE_ALPHA, bounds: tuple[float, float] = ADAPTIVE_COVERAGE,
) -> float:
    """The embedding side's share for a query whose best BM25 match contains `coverage`
    of the query's IDF mass: alpha[1] at or below bounds[0], alpha[0] at or above
    bounds[1], linear between. A question that shares its rare words with a passage is
    answered by BM25; a paraphrase (or a query BM25 barely matches) by the embedding.

    >>> adaptive_alpha(0.2, (0.1, 0.9), (0.3, 0.6)), adaptive_alpha(0.45, (0.1, 0.9), (0.3, 0.6))
    (0.9, 0.5)
    """
    (lo_alpha, hi_alpha), (lo, hi) = alpha, bounds
    if coverage <= lo:
        return hi_alpha
    if coverage >= hi:
        return lo_alpha
    t = (coverage - lo) / (hi - lo)
    return round(hi_alpha + (lo_alpha - hi_alpha) * t, 12)
