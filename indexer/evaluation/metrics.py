"""Retrieval metrics as small pure functions over spans, ranks and lists of numbers."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

Span = tuple[int, int]


def overlaps(a: Span, b: Span) -> bool:
    """Half-open spans share at least one character."""
    return a[0] < b[1] and b[0] < a[1]


def contains(outer: Span, inner: Span) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def first_hit_rank(flags: Sequence[bool]) -> int | None:
    """1-based rank of the first true flag, or None."""
    for i, flag in enumerate(flags, start=1):
        if flag:
            return i
    return None


MRR_DEPTH = 10  # MRR counts a first hit down to this rank (MRR@10), whatever -k or --budget fetch


def reciprocal_rank(rank: int | None, depth: int = MRR_DEPTH) -> float:
    return 1.0 / rank if rank and rank <= depth else 0.0


def mrr(ranks: Sequence[int | None], depth: int = MRR_DEPTH) -> float:
    """Mean reciprocal rank at `depth`: ranks 1, 3 and none give (1 + 1/3 + 0) / 3; a
    first hit below `depth` counts as none."""
    return sum(reciprocal_rank(r, depth) for r in ranks) / len(ranks) if ranks else 0.0


def recall_at(ranks: Sequence[int | None], k: int) -> int:
    """How many questions have their first hit within the top k."""
    return sum(1 for r in ranks if r is not None and r <= k)


NDCG_DEPTH = 10  # nDCG is cut at this rank (nDCG@10), like MRR


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains listed by rank (1-based): sum of gain / log2(rank + 1)."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1) if g)


def ndcg(gains: Sequence[float], relevant: Sequence[float], depth: int = NDCG_DEPTH) -> float:
    """nDCG@depth: the DCG of the ranked `gains` (0 where nothing relevant stands) over the DCG
    of the ideal ranking, the `relevant` gains sorted from the largest, both cut at `depth`
    (trec_eval's ndcg_cut, which BEIR reports). No relevant item gives 0."""
    ideal = dcg(sorted((g for g in relevant if g > 0), reverse=True)[:depth])
    return dcg(gains[:depth]) / ideal if ideal else 0.0


def first_hit_ndcg(rank: int | None, depth: int = NDCG_DEPTH) -> float:
    """Binary nDCG of a passage target: the first hit is the one relevant item, so the ideal
    DCG is 1 and the score is 1 / log2(rank + 1) within `depth`, else 0."""
    return 1.0 / math.log2(rank + 1) if rank and rank <= depth else 0.0


def document_gains(ranked_docs: Sequence[str], grades: Mapping[str, float]) -> list[float]:
    """Per rank of a chunk list, the gain it brings to a question whose targets are whole
    documents: a relevant document's grade at its first chunk, 0 for other documents and
    for later chunks of a document already counted."""
    seen: set[str] = set()
    gains = []
    for doc in ranked_docs:
        gains.append(grades.get(doc, 0) if doc not in seen else 0)
        seen.add(doc)
    return gains


def bootstrap_interval(
    values: Sequence[float],
    statistic: Callable[[Sequence[float]], float] | None = None,
    samples: int = 2000,
    level: float = 0.95,
    seed: int = 13,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic (default: the mean) over questions."""
    if not values:
        return (0.0, 0.0)
    statistic = statistic or (lambda xs: sum(xs) / len(xs))
    rng = random.Random(seed)
    n = len(values)
    stats = sorted(statistic([values[rng.randrange(n)] for _ in range(n)]) for _ in range(samples))
    lo = stats[int((1 - level) / 2 * samples)]
    hi = stats[min(samples - 1, int((1 + level) / 2 * samples))]
    return (lo, hi)


def paired_difference(
    a: Sequence[float], b: Sequence[float], samples: int = 2000, seed: int = 13
) -> tuple[float, tuple[float, float]]:
    """Mean of a - b over the same questions and its bootstrap 95% interval."""
    if len(a) != len(b):
        raise ValueError("paired values need the same questions")
    diffs = [x - y for x, y in zip(a, b)]
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    return mean, bootstrap_interval(diffs, samples=samples, seed=seed)


def paired_differences(
    rows: Mapping[str, Sequence[float]],
    reference: Sequence[float],
    samples: int = 2000,
    level: float = 0.95,
    seed: int = 13,
    clusters: Sequence[Hashable] | None = None,
) -> dict[str, tuple[float, tuple[float, float]]]:
    """`paired_difference(row, reference)` for many rows at once: each row's mean of
    row - reference over the same questions and its percentile bootstrap interval, every row
    resampled with the same draws of questions (so the rows stay paired with each other
    too). With `clusters` (a key per question: made-up questions about the same passage,
    one from each pooled seed), whole clusters are drawn: questions about one passage do not
    count as independent evidence. Vectorised: 20 rows of 600 questions take milliseconds."""
    import numpy as np

    ref = np.asarray(reference, dtype=float)
    n = len(ref)
    _check_paired(rows, n, clusters)
    if not n:
        return {k: (0.0, (0.0, 0.0)) for k in rows}
    ids = _cluster_ids(clusters, n)
    units = int(ids.max()) + 1
    sizes = np.bincount(ids, minlength=units).astype(float)
    draws = np.random.default_rng(seed).integers(0, units, size=(samples, units))
    drawn_sizes = sizes[draws].sum(axis=1)
    out = {}
    for key, values in rows.items():
        diffs = np.asarray(values, dtype=float) - ref
        sums = np.bincount(ids, weights=diffs, minlength=units)
        stats = np.sort(sums[draws].sum(axis=1) / drawn_sizes)
        lo = stats[int((1 - level) / 2 * samples)]
        hi = stats[min(samples - 1, int((1 + level) / 2 * samples))]
        out[key] = (float(diffs.mean()), (float(lo), float(hi)))
    return out


def _check_paired(
    rows: Mapping[str, Sequence[float]], n: int, clusters: Sequence[Hashable] | None
) -> None:
    if any(len(v) != n for v in rows.values()):
        raise ValueError("paired values need the same questions")
    if n and clusters is not None and len(clusters) != n:
        raise ValueError("a cluster key per question is needed")


def _cluster_ids(clusters: Sequence[Hashable] | None, n: int) -> Any:
    """Each question's cluster as a number from 0 (each question its own without keys)."""
    import numpy as np

    if not clusters:
        return np.arange(n)
    index: dict[Hashable, int] = {}
    return np.asarray([index.setdefault(c, len(index)) for c in clusters])


def union_length(spans: Sequence[Span]) -> int:
    total, end = 0, None
    for s, e in sorted(spans):
        if end is None or s >= end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def intersection_length(spans: Sequence[Span], target: Span) -> int:
    clipped = [(max(s, target[0]), min(e, target[1])) for s, e in spans if overlaps((s, e), target)]
    return union_length(clipped)


def span_scores(
    retrieved_in_doc: Sequence[Span], retrieved_total: int, answer: Span
) -> tuple[float, float, float]:
    """(recall, precision, IoU) of retrieved text against the answer span, all in the same
    unit (tokens or characters). `retrieved_total` counts everything retrieved, in any
    document, overlaps counted once."""
    relevant = answer[1] - answer[0]
    hit = intersection_length(retrieved_in_doc, answer)
    recall = hit / relevant if relevant else 0.0
    precision = hit / retrieved_total if retrieved_total else 0.0
    union = retrieved_total + relevant - hit
    return recall, precision, (hit / union if union else 0.0)
