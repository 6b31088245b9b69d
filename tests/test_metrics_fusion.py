"""Metric and fusion functions against arithmetic written out by hand (nDCG also against
trec_eval's, through pytrec_eval, when it is installed)."""

import math
import random

import pytest

from indexer.evaluation.metrics import (
    bootstrap_interval,
    contains,
    dcg,
    document_gains,
    first_hit_ndcg,
    first_hit_rank,
    mrr,
    ndcg,
    overlaps,
    paired_difference,
    recall_at,
    span_scores,
    union_length,
)
from indexer.retrieval.fusion import adaptive_alpha, adaptive_defaults, minmax, rrf, weighted


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


def test_dcg_and_ndcg_by_hand():
    log2 = math.log2
    assert dcg([3, 2, 0, 1]) == pytest.approx(3 / 1 + 2 / log2(3) + 0 + 1 / log2(5))
    # ranked gains 0, 2, 0, 1 against three relevant documents graded 2, 1, 1 (linear gain = grade)
    assert ndcg([0, 2, 0, 1], [1, 2, 1]) == pytest.approx((2 / log2(3) + 1 / log2(5)) / (2 + 1 / log2(3) + 1 / log2(4)))
    assert ndcg([2, 1, 1], [1, 2, 1]) == pytest.approx(1.0)  # the ideal order
    assert ndcg([0] * 10 + [2], [2]) == 0.0  # below the cut
    assert ndcg([1] * 10, [1] * 12) == pytest.approx(1.0)  # the ideal DCG is cut at 10 too
    assert ndcg([0, 0], []) == 0.0 and ndcg([0, 1], [0, 1]) == pytest.approx(1 / log2(3))  # grade 0 is not relevant
    assert ndcg([0, 1, 1], [1, 1], depth=2) == pytest.approx((1 / log2(3)) / (1 + 1 / log2(3)))


def test_document_gains_count_a_document_once_at_its_first_chunk():
    assert document_gains(["a", "b", "a", "c", "b", "c"], {"a": 2, "c": 1}) == [2, 0, 0, 1, 0, 0]
    assert document_gains([], {"a": 1}) == []


def test_binary_ndcg_of_a_first_hit():
    assert first_hit_ndcg(1) == 1.0
    assert first_hit_ndcg(3) == pytest.approx(0.5)  # 1 / log2(4)
    assert first_hit_ndcg(10) == pytest.approx(1 / math.log2(11))
    assert first_hit_ndcg(11) == 0.0 and first_hit_ndcg(None) == 0.0
    assert first_hit_ndcg(2) == pytest.approx(ndcg([0, 1], [1]))


def test_ndcg_matches_trec_eval():
    """Random chunk rankings (documents repeated, several graded targets) scored by our
    functions and by trec_eval's ndcg_cut.10 through pytrec_eval, exactly as BEIR calls it
    (`pip install ir-measures` brings it; skipped without). A repeated chunk of a counted
    document stands in the run as a non-relevant item of its own."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(7)
    qrels, run, ours = {}, {}, {}
    for q in range(300):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(rng.randint(3, 25))]
        grades = {d: rng.randint(1, 3) for d in rng.sample(docs, rng.randint(1, min(len(docs), 14)))}
        ranked = [rng.choice(docs) for _ in range(rng.randint(0, 15))]
        ours[qid] = ndcg(document_gains(ranked, grades), list(grades.values()))
        qrels[qid] = grades
        run[qid], seen = {}, set()
        for rank, d in enumerate(ranked, start=1):
            run[qid][d if d not in seen else f"{d}#again{rank}"] = 100.0 - rank
            seen.add(d)
    theirs = {q: m["ndcg_cut_10"] for q, m in pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run).items()}
    # trec_eval leaves out queries with nothing retrieved: their nDCG is 0 for us
    assert {q: v for q, v in ours.items() if q in theirs} == pytest.approx(theirs, abs=1e-9)
    assert all(ours[q] == 0.0 for q in ours.keys() - theirs.keys())
    assert len(theirs) > 250 and sum(1 for v in theirs.values() if 0 < v < 1) > 150
    # a passage target: one relevant item, the first hit (ideal DCG 1)
    one = {f"r{r}": {f"c{i}": 100.0 - i for i in range(1, 13)} for r in range(1, 13)}
    marked = {f"r{r}": {f"c{r}": 1} for r in range(1, 13)}
    binary = pytrec_eval.RelevanceEvaluator(marked, {"ndcg_cut.10"}).evaluate(one)
    assert {q: m["ndcg_cut_10"] for q, m in binary.items()} == pytest.approx(
        {f"r{r}": first_hit_ndcg(r) for r in range(1, 13)}, abs=1e-9)


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


def entries(files):
    """Manifest entries (`store.FileEntry`) with these chunk and token counts."""
    from indexer.store import FileEntry

    return {d: FileEntry(hash="", **counts) for d, counts in files.items()}


def test_a_collection_is_calibrated_by_its_kind_and_embedder():
    from indexer.retrieval.fusion import FUSION_BY_KIND, calibrated

    code = entries({"src/a.py": {"chunks": 8, "tokens": 900}, "src/b.ts": {"chunks": 4, "tokens": 500},
                    "README.md": {"chunks": 1, "tokens": 100}})
    prose = entries({"docs/a.md": {"chunks": 3, "tokens": 900}, "tools/x.py": {"chunks": 1, "tokens": 100}})
    use_code = calibrated("use-m3", code)
    assert (use_code["kind"], use_code["code_share"], use_code["avg_tokens"]) == ("code", 0.933, 115.4)
    assert tuple(use_code["alpha_range"]) == FUSION_BY_KIND[("use-m3", "code")][0]
    assert use_code["alpha_range"][1] < adaptive_defaults("use-m3")[0][1]  # USE weighs less on code
    assert calibrated("use-m3", prose)["kind"] == "prose" and calibrated("use-m3", {})["kind"] == "prose"
    assert tuple(calibrated("use-m3", prose, "en")["alpha_range"]) == adaptive_defaults("use-m3")[0]
    turkish = calibrated("use-m3", prose, "tr")
    assert tuple(turkish["alpha_range"]) == FUSION_BY_KIND[("use-m3", "prose", "tr")][0] and turkish["lang"] == "tr"
    assert calibrated("use-m3", code, "tr")["alpha_range"] == use_code["alpha_range"]  # code is code in any language
    for files in (code, prose):  # an embedder the table does not know keeps its defaults
        got = calibrated("ollama:nomic-embed-text", files)
        assert (tuple(got["alpha_range"]), tuple(got["coverage_range"])) == \
            FUSION_BY_KIND.get(("ollama:nomic-embed-text", got["kind"]), adaptive_defaults("ollama:nomic-embed-text"))


def test_e5_on_code_weighs_the_embedding_less_over_long_chunks():
    from indexer.retrieval.fusion import FUSION_BY_KIND, LONG_CHUNKS, calibrated, current

    functions = entries({"src/a.py": {"chunks": 10, "tokens": 1300}})  # 130 tokens a chunk, as `code` cuts
    sections = entries({"src/a.py": {"chunks": 2, "tokens": 1000}})  # 500, as `headers` and `blocks` cut
    short, long = calibrated("e5-small", functions), calibrated("e5-small", sections)
    assert tuple(short["alpha_range"]) == FUSION_BY_KIND[("e5-small", "code")][0]
    assert tuple(long["alpha_range"]) == FUSION_BY_KIND[("e5-small", "code", "long")][0]
    assert long["alpha_range"][0] < short["alpha_range"][0] and long["avg_tokens"] >= LONG_CHUNKS
    assert calibrated("use-m3", sections)["alpha_range"] == calibrated("use-m3", functions)["alpha_range"]
    stale = {**long, "alpha_range": [0.1, 0.7]}  # stored before the size class: looked up again
    assert current("e5-small", stale)["alpha_range"] == long["alpha_range"]


def test_e5_on_prose_keeps_half_the_say_where_bm25_covers_the_query():
    from indexer.retrieval.fusion import FUSION_BY_KIND, calibrated, current

    prose = entries({"man/read.2.html": {"chunks": 4, "tokens": 1200}})
    for lang in ("en", "tr"):
        got = calibrated("e5-small", prose, lang)
        assert tuple(got["alpha_range"]) == FUSION_BY_KIND[("e5-small", "prose")][0] == (0.5, 0.7)
    # an Ollama model keeps the retrieval-trained defaults: nobody measured one here
    assert tuple(calibrated("ollama:nomic-embed-text", prose)["alpha_range"]) == adaptive_defaults("e5-small")[0]
    # a collection built with the old range moves to the new one without a rebuild
    old = {"alpha_range": [0.3, 0.8], "coverage_range": [0.25, 0.6], "kind": "prose", "lang": "en"}
    assert current("e5-small", old)["alpha_range"] == [0.5, 0.7]
    # and e5 measured weak on a collection (probe ratio under its reference) is narrowed
    weak = current("e5-small", {**old, "measured": {"ratio": 0.3}})
    assert weak["embedding_factor"] == 0.6 and weak["alpha_range"] == [0.3, 0.42]


def test_saved_settings_come_before_the_calibrated_fusion_and_it_before_the_defaults():
    from indexer.retrieval.options import SearchOptions, resolve

    fusion = {"alpha_range": [0.1, 0.4], "coverage_range": [0.3, 0.6], "kind": "code"}
    assert resolve(SearchOptions(), None, "use-m3", fusion).alpha_range == (0.1, 0.4)
    assert resolve(SearchOptions(), {"alpha_range": [0.2, 0.5]}, "use-m3", fusion).alpha_range == (0.2, 0.5)
    assert resolve(SearchOptions(alpha_range=(0.0, 1.0)), None, "use-m3", fusion).alpha_range == (0.0, 1.0)
    assert resolve(SearchOptions(), None, "use-m3", None).alpha_range == adaptive_defaults("use-m3")[0]


def test_a_stored_calibration_by_kind_follows_the_table_and_others_stay():
    from indexer.retrieval.fusion import FUSION_BY_KIND, current

    old = {"alpha_range": [0.3, 0.8], "coverage_range": [0.25, 0.6], "kind": "code", "lang": "en"}
    assert tuple(current("use-m3", old)["alpha_range"]) == FUSION_BY_KIND[("use-m3", "code")][0]
    assert current("use-m3", old)["kind"] == "code" and current("use-m3", None) is None
    measured = {**old, "source": "questions"}  # a calibration measured on the collection itself is kept
    assert current("use-m3", measured) == measured
