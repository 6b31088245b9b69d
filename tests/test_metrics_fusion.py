"""Metric and fusion functions against arithmetic written out by hand."""

import pytest

from indexer.retrieval.fusion import adaptive_alpha, adaptive_defaults, minmax, rrf, weighted
from indexer.evaluation.metrics import (
    bootstrap_interval, contains, first_hit_rank, mrr, overlaps, paired_difference, recall_at, span_scores,
    union_length,
)


def test_mrr_of_ranks_1_3_and_none():
    assert mrr([1, 3, None]) == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert mrr([]) == 0.0


def test_recall_and_first_hit():
    ranks = [1, 3, None, 5, 2]
    assert recall_at(ranks, 1) == 1
    assert recall_at(ranks, 3) == 3
    assert recall_at(ranks, 5) == 4
    assert first_hit_rank([False, False, True, True]) == 3
    assert first_hit_rank([False]) is None


def test_span_rules():
    assert overlaps((0, 10), (9, 20)) and not overlaps((0, 10), (10, 20))
    assert contains((0, 10), (2, 10)) and not contains((0, 10), (5, 11))
    assert union_length([(0, 5), (3, 8), (10, 12)]) == 10


def test_span_scores_by_hand():
    # answer is tokens 10..20 (10 long); retrieved 5..15 in its doc (5 overlap) and 30 tokens elsewhere
    recall, precision, iou = span_scores([(5, 15)], retrieved_total=10 + 30, answer=(10, 20))
    assert recall == pytest.approx(5 / 10)
    assert precision == pytest.approx(5 / 40)
    assert iou == pytest.approx(5 / (40 + 10 - 5))


def test_bootstrap_interval_brackets_the_mean_and_is_deterministic():
    values = [1.0] * 18 + [0.0] * 12
    lo, hi = bootstrap_interval(values)
    assert lo < 0.6 < hi
    assert (lo, hi) == bootstrap_interval(values)
    assert bootstrap_interval([1.0] * 10) == (1.0, 1.0)


def test_paired_difference_of_identical_runs_is_zero():
    mean, (lo, hi) = paired_difference([1, 0, 1], [1, 0, 1])
    assert mean == 0 and lo == 0 and hi == 0


def test_rrf_by_hand():
    fused = dict(rrf([["a", "b", "c"], ["c", "x", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["x"] == pytest.approx(1 / 62)
    order = [d for d, _ in rrf([["a", "b", "c"], ["c", "x", "a"]], k=60)]
    assert order == ["a", "c", "b", "x"]  # ties keep first-seen order


def test_weighted_rrf_by_hand():
    fused = dict(rrf([["a"], ["b"]], k=60, weights=[2.0, 1.0]))
    assert fused == {"a": pytest.approx(2 / 61), "b": pytest.approx(1 / 61)}


def test_weighted_score_fusion_by_hand():
    assert minmax({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    fused = dict(weighted({"a": 0.9, "b": 0.5}, {"b": 10.0, "c": 2.0, "d": 6.0}, alpha=0.5))
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0)
    assert fused["b"] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert fused["d"] == pytest.approx(0.5 * 0.5)
    assert fused["c"] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        weighted({}, {}, alpha=1.5)


def test_adaptive_alpha_moves_from_the_embedding_side_to_bm25_with_coverage():
    use = adaptive_defaults("use-m3")
    assert use == ((0.1, 0.8), (0.3, 0.6)) and adaptive_defaults("ollama:nomic-embed-text") == adaptive_defaults("e5-small")
    assert adaptive_alpha(0.0, *use) == adaptive_alpha(0.3, *use) == 0.8  # BM25 barely matches: mostly embedding
    assert adaptive_alpha(0.6, *use) == adaptive_alpha(1.0, *use) == 0.1  # BM25 covers the query: mostly BM25
    assert adaptive_alpha(0.45, *use) == 0.45 and adaptive_alpha(0.375, *use) == 0.625
    assert adaptive_alpha(0.5, alpha=(0.2, 0.8), bounds=(0.4, 0.6)) == 0.5
