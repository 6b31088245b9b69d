"""Ranking: pure functions from each side's candidates to the order a search returns.

A `Candidate` is one chunk on its way to a hit. A mode's candidates come from one side
(`one_side`) or from both fused (`fuse`, with the embedding's share from `embedding_share`);
a lookup's exact-match tiers put some above the rest (`with_tiers`); ties are broken by
document and position (`break_ties`, handed a function that fetches records: only the
tied ids' are read); scores are made never to rise down the list (`in_rank_order`); and
the candidates with a record become hits (`to_hits`). These functions read nothing but
their arguments and never change them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...types import Chunk, Hit
from ..fusion import adaptive_alpha, rrf, weighted
from ..options import ResolvedOptions

Side = list[tuple[str, float]]  # one side's (chunk id, score), best first
Fetch = Callable[[list[str]], dict[str, Chunk]]  # chunk ids -> the chunks found


@dataclass(slots=True)
class Candidate:
    """One chunk a search found: its score in the mode, its rank and score on each side
    that found it, its exact-match tier and what put it there, and its own score when
    `score` was raised to keep the list in rank order."""

    id: str
    score: float
    dense_rank: int | None = None
    dense_score: float | None = None
    sparse_rank: int | None = None
    sparse_score: float | None = None
    tier: int = 0
    match: str = ""
    search_score: float | None = None


def one_side(side: Side, dense: bool) -> list[Candidate]:
    """One side's candidates, as they rank there: the embedding's (`dense`) or BM25's.

    >>> [(c.id, c.dense_rank, c.sparse_rank) for c in one_side([("a", 0.9)], dense=False)]
    [('a', None, 1)]
    """
    ranked = enumerate(side, start=1)
    if dense:
        return [Candidate(cid, s, rank, s) for rank, (cid, s) in ranked]
    return [Candidate(cid, s, sparse_rank=rank, sparse_score=s) for rank, (cid, s) in ranked]


def embedding_share(options: ResolvedOptions, coverage: Callable[[], float]) -> float | None:
    """The embedding side's share in a weighted or adaptive fusion (None for RRF).
    `coverage()`: the share of the query's IDF mass in BM25's best match, asked for only
    by the adaptive fusion."""
    if options.fusion == "weighted":
        return options.alpha
    if options.fusion == "adaptive":
        return adaptive_alpha(coverage(), options.alpha_range, options.coverage_range)
    return None


def fuse(
    dense: Side, sparse: Side, options: ResolvedOptions, alpha: float | None
) -> list[Candidate]:
    """Both sides fused, best first: RRF, or the weighted sum of min-max scores with the
    embedding's share `alpha` (`fusion`); each candidate keeps its rank and score on
    either side."""
    e_rank = {cid: (i + 1, s) for i, (cid, s) in enumerate(dense)}
    b_rank = {cid: (i + 1, s) for i, (cid, s) in enumerate(sparse)}
    if options.fusion == "rrf":
        lists = [[cid for cid, _ in dense], [cid for cid, _ in sparse]]
        fused = rrf(lists, options.rrf_k, options.weights)
    else:
        fused = weighted(dict(dense), dict(sparse), options.alpha if alpha is None else alpha)
    none = (None, None)
    return [
        Candidate(cid, score, *e_rank.get(cid, none), *b_rank.get(cid, none))
        for cid, score in fused
    ]


def with_tiers(
    candidates: list[Candidate], extra: list[str], tier: dict[str, int], why: dict[str, str]
) -> list[Candidate]:
    """The candidates, then the ids the exact-match signal adds (`extra`, scored 0), each
    with its tier (`exact.rank_exact`) and, when it has one, what put it there (`why`)."""
    joined = [*candidates, *(Candidate(cid, 0.0) for cid in extra)]
    return [
        replace(c, tier=tier[c.id], match=why.get(c.id, "")) if tier.get(c.id) else c
        for c in joined
    ]


def grade(c: Candidate) -> tuple[int, float]:
    """What ranks a candidate: its tier, then its score (to 9 places: equal is equal)."""
    return c.tier, round(c.score, 9)


def break_ties(
    candidates: list[Candidate], fetch: Fetch, keep: int | None = None
) -> list[Candidate]:
    """Higher exact-match tiers first, then the score; equal (tier, score) ordered by
    document, then position (`fetch` asked for the tied ids' records only), then id, so
    that the order never depends on how deep a side was searched. With `keep`, only the
    groups of equals that reach into the first `keep` places are ordered (a corpus with
    repeated passages ties dozens of candidates below them, whose records would be read
    for nothing)."""
    ranked = candidates
    if any(c.tier for c in ranked):
        ranked = sorted(ranked, key=lambda c: (-c.tier, -round(c.score, 9)))  # stable
    tied = _tied(ranked, keep)
    if not tied:
        return ranked
    chunks = fetch(tied)

    def key(c: Candidate) -> tuple[int, float, str, int, str]:
        chunk = chunks.get(c.id)
        where = (chunk.doc_id, chunk.start) if chunk else ("", 0)
        return (-c.tier, -round(c.score, 9), *where, c.id)

    return sorted(ranked, key=key)


def _tied(ranked: list[Candidate], keep: int | None) -> list[str]:
    """The ids of the candidates that tie with another (the same `grade`); with `keep`,
    only those of the groups that reach into the first `keep` places."""
    counts = Counter(grade(c) for c in ranked)
    floor = min(grade(c) for c in ranked[:keep]) if keep and len(ranked) > keep else None
    return [c.id for c in ranked if counts[grade(c)] > 1 and (floor is None or grade(c) >= floor)]


def in_rank_order(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates whose scores never rise down the list: one an exact-match tier put
    above candidates the search scored higher takes the best score below it, and keeps
    its own as `search_score`. Without tiers the list is as it came.

    >>> [(c.id, c.score, c.search_score) for c in in_rank_order(
    ...     [Candidate("d", 0.0, tier=2), Candidate("a", 0.9), Candidate("b", 0.5)])]
    [('d', 0.9, 0.0), ('a', 0.9, None), ('b', 0.5, None)]
    """
    out: list[Candidate] = []
    floor = float("-inf")
    for c in reversed(candidates):
        if c.tier and round(c.score, 9) < round(floor, 9):
            out.append(replace(c, score=floor, search_score=c.score))
        else:
            floor = max(floor, c.score)
            out.append(c)
    out.reverse()
    return out


def to_hits(candidates: list[Candidate], records: dict[str, Chunk]) -> list[Hit]:
    """The candidates that have a record (`records`: by id), as hits ranked from 1."""
    present = [c for c in candidates if c.id in records]
    return [
        Hit(
            rank=rank,
            score=c.score,
            chunk=records[c.id],
            embedding_rank=c.dense_rank,
            embedding_score=c.dense_score,
            bm25_rank=c.sparse_rank,
            bm25_score=c.sparse_score,
            exact=c.tier,
            match=c.match,
            search_score=c.search_score,
        )
        for rank, c in enumerate(present, start=1)
    ]
