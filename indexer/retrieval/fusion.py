"""Rank fusion: small pure functions over ranked id lists and score maps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..store import FileEntry
from .worth import factor


def rrf(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
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


def weighted(
    embedding: dict[str, float], bm25: dict[str, float], alpha: float = 0.5
) -> list[tuple[str, float]]:
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
# docs/results.md, "Choosing defaults"): the embedding side's share of a min-max weighted sum moves
# with how well BM25's best match covers the query — per embedder, since a weak one
# (USE) must give way to BM25 sooner than a retrieval-trained one (e5, Ollama models).
# embedder -> (embedding share when BM25 covers the query well, ... poorly), (coverage
# counted as poor at or below, good at or above)
ADAPTIVE_DEFAULTS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "use-m3": ((0.1, 0.8), (0.3, 0.6)),
    # bge reads English prose well enough to lead where BM25 covers the query poorly and to
    # keep 0.4 of the say where it covers it well (bench/labs/english_lab.py fit, prose)
    "bge-small-en": ((0.4, 0.9), (0.4, 0.8)),
    "*": ((0.3, 0.8), (0.25, 0.6)),  # e5-small, and any retrieval-trained model (Ollama)
}
ADAPTIVE_ALPHA, ADAPTIVE_COVERAGE = ADAPTIVE_DEFAULTS["*"]


def adaptive_defaults(embedder: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (alpha range, coverage range) the adaptive fusion uses with this embedder."""
    return ADAPTIVE_DEFAULTS.get(embedder, ADAPTIVE_DEFAULTS["*"])


def adaptive_alpha(
    coverage: float,
    alpha: tuple[float, float] = ADAPTIVE_ALPHA,
    bounds: tuple[float, float] = ADAPTIVE_COVERAGE,
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


# The fusion a collection is built with: the embedding side's share follows what the
# embedder is worth on that kind of collection — fitted per embedder, kind (code, prose)
# and, for prose, language, or for code the size of its chunks, on the public sets
# (bench/calibrate_lab.py, docs/results.md "Choosing defaults"), checked on a held-out library.
# (embedder, kind[, language or size]) -> (alpha range, coverage range); the most specific
# key wins, then the embedder's defaults.
# USE reads code poorly: BM25 leads even on paraphrases
# Turkish BM25 (folded, stemmed) is the stronger side
FUSION_BY_KIND: dict[tuple[str, ...], tuple[tuple[float, float], tuple[float, float]]] = {
    ("use-m3", "code"): (
        (0.05, 0.3),
        (0.3, 0.6),
    ),
    ("use-m3", "prose", "tr"): (
        (0.05, 0.5),
        (0.3, 0.6),
    ),
    # e5 reads a function well and keeps a say even where BM25 covers the query; over long
    # windows its one vector is spread thin and BM25 gets more of the say
    ("e5-small", "code"): ((0.4, 0.7), (0.25, 0.6)),
    ("e5-small", "code", "long"): ((0.3, 0.7), (0.25, 0.6)),
    # on prose e5 keeps half the say where BM25 covers the query: at 0.3 it lost to its own
    # embedding on the man-pages, whose one-line questions share common words with many pages
    ("e5-small", "prose"): ((0.5, 0.7), (0.25, 0.6)),
    # bge on code: BM25 leads (on the bundled sample's short questions BM25 alone is 0.16-0.29
    # MRR@10 above it), yet on documentation-style questions bge alone beats BM25; 0.3-0.4
    # holds 23 of 24 code cells (bench/labs/english_lab.py fit --kind code)
    ("bge-small-en", "code"): ((0.3, 0.4), (0.4, 0.7)),
    ("bge-small-en", "prose"): ((0.4, 0.9), (0.4, 0.8)),
}
CODE_SHARE = 0.5  # a collection whose text is at least this share source code is code
LONG_CHUNKS = 192  # a collection whose chunks average at least this many tokens has long chunks


def size_of(avg_tokens: float) -> str:
    """A collection's chunk size class: `long` (sections, 256-token windows) or `short`."""
    return "long" if avg_tokens >= LONG_CHUNKS else "short"


def by_kind(
    embedder: str, kind: str, lang: str = "", size: str = ""
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (alpha range, coverage range) for an embedder on a kind of collection."""
    return (
        FUSION_BY_KIND.get((embedder, kind, lang))
        or FUSION_BY_KIND.get((embedder, kind, size))
        or FUSION_BY_KIND.get((embedder, kind))
        or adaptive_defaults(embedder)
    )


def calibrated(embedder: str, files: Mapping[str, FileEntry], lang: str = "") -> dict[str, Any]:
    """A collection's fusion, chosen at build time from what it holds: its kind (the share
    of its tokens in source files; `files`: the manifest's entries by document id), its language (the analyzer's), its chunks' average size
    and the embedder. Stored
    beside the collection (`Entry.extra["fusion"]`) and used by the default search unless
    settings were saved (`indexer tune --save`)."""
    from ..loaders.formats import format_of

    total = sum(f.tokens for f in files.values()) or 1
    code = sum(f.tokens for d, f in files.items() if format_of(d.rsplit("/", 1)[-1])[0] == "code")
    chunks = sum(f.chunks for f in files.values()) or 1
    kind = "code" if code / total >= CODE_SHARE else "prose"
    alpha, coverage = by_kind(embedder, kind, lang, size_of(total / chunks))
    return {
        "alpha_range": list(alpha),
        "coverage_range": list(coverage),
        "kind": kind,
        "lang": lang,
        "code_share": round(code / total, 3),
        "avg_tokens": round(total / chunks, 1),
        "source": "kind",
    }


def current(embedder: str, stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a stored calibration stands for today: one chosen by kind is looked up again
    in the table (refitted since the build, it reaches collections without a rebuild),
    then its embedding share narrowed by what the build measured of the embedder on the
    collection (`worth.factor`; `embedding_factor` says by how much, 1 for not at all)."""
    if not stored or stored.get("source", "kind") != "kind" or "kind" not in stored:
        return stored
    size = (
        size_of(stored["avg_tokens"]) if isinstance(stored.get("avg_tokens"), (int, float)) else ""
    )
    alpha, coverage = by_kind(embedder, stored["kind"], stored.get("lang", ""), size)
    f = factor(embedder, stored["kind"], stored.get("measured"))
    return {
        **stored,
        "alpha_range": [round(a * f, 3) for a in alpha],
        "coverage_range": list(coverage),
        "embedding_factor": f,
    }
