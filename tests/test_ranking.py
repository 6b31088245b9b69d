"""Ranking as pure functions (`indexer.retrieval.searching.ranking`, `hits`, `options.resolve`),
checked on hand-written candidates against orders and arithmetic written out by hand. The
end-to-end searches that use them are in test_build_query, test_exact, test_duplicates
and test_semantic_parent_contextual."""

from __future__ import annotations

import pytest

from indexer.errors import UsageError
from indexer.retrieval.fusion import adaptive_defaults
from indexer.retrieval.options import DEFAULTS, SearchOptions, resolve
from indexer.retrieval.searching.hits import distinct, to_parents
from indexer.retrieval.searching.ranking import (
    Candidate,
    break_ties,
    embedding_share,
    fuse,
    in_rank_order,
    one_side,
    to_hits,
    with_tiers,
)
from indexer.types import Chunk, Hit

DENSE = [("a", 0.9), ("b", 0.6), ("c", 0.3)]
SPARSE = [("c", 12.0), ("d", 8.0), ("a", 4.0)]


def chunk(cid: str, doc: str = "doc.md", start: int = 0, text: str = "", parent: str = "") -> Chunk:
    text = text or f"text of {cid}"
    return Chunk(id=cid, doc_id=doc, text=text, start=start, end=start + len(text), start_line=1, end_line=1, kind="text", parent_id=parent)


def never() -> float:
    raise AssertionError("coverage asked for")


def test_one_side_keeps_each_candidate_s_rank_and_score_on_its_side():
    dense = one_side(DENSE, dense=True)
    assert [(c.id, c.score, c.dense_rank, c.dense_score, c.sparse_rank) for c in dense] == [
        ("a", 0.9, 1, 0.9, None), ("b", 0.6, 2, 0.6, None), ("c", 0.3, 3, 0.3, None)]
    sparse = one_side(SPARSE, dense=False)
    assert [(c.id, c.score, c.sparse_rank, c.sparse_score, c.dense_rank) for c in sparse] == [
        ("c", 12.0, 1, 12.0, None), ("d", 8.0, 2, 8.0, None), ("a", 4.0, 3, 4.0, None)]
    assert all(c.tier == 0 and c.match == "" and c.search_score is None for c in dense + sparse)


def test_rrf_fusion_sums_the_reciprocal_ranks_and_keeps_both_sides():
    options = SearchOptions(fusion="rrf", rrf_k=60, weights=(1.0, 1.0))
    fused = fuse(DENSE, SPARSE, options, None)
    scores = {c.id: c.score for c in fused}
    assert scores["a"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 3))
    assert scores["c"] == pytest.approx(1 / (60 + 3) + 1 / (60 + 1))
    assert scores["b"] == pytest.approx(1 / (60 + 2))
    assert scores["d"] == pytest.approx(1 / (60 + 2))
    assert [c.id for c in fused] == ["a", "c", "b", "d"]  # equal scores: first seen first
    a, d = fused[0], fused[3]
    assert (a.dense_rank, a.dense_score, a.sparse_rank, a.sparse_score) == (1, 0.9, 3, 4.0)
    assert (d.dense_rank, d.dense_score, d.sparse_rank, d.sparse_score) == (None, None, 2, 8.0)
    weighted = fuse(DENSE, SPARSE, SearchOptions(fusion="rrf", rrf_k=10, weights=(2.0, 0.5)), None)
    assert {c.id: c.score for c in weighted}["a"] == pytest.approx(2.0 / 11 + 0.5 / 13)


def test_weighted_fusion_mixes_min_max_scores_by_the_embedding_share():
    fused = fuse(DENSE, SPARSE, SearchOptions(fusion="weighted"), 0.25)
    # min-max: dense a 1, b 0.5, c 0; sparse c 1, d 0.5, a 0
    expected = {"a": 0.25 * 1, "b": 0.25 * 0.5, "c": 0.75 * 1, "d": 0.75 * 0.5}
    assert {c.id: c.score for c in fused} == pytest.approx(expected)
    assert [c.id for c in fused] == ["c", "d", "a", "b"]


def test_the_embedding_share_comes_from_the_fusion_and_coverage_only_when_adaptive():
    assert embedding_share(SearchOptions(fusion="weighted", alpha=0.3), never) == 0.3
    assert embedding_share(SearchOptions(fusion="rrf"), never) is None
    adaptive = SearchOptions(fusion="adaptive", alpha_range=(0.1, 0.9), coverage_range=(0.3, 0.6))
    assert embedding_share(adaptive, lambda: 0.2) == 0.9  # BM25 covers the query poorly
    assert embedding_share(adaptive, lambda: 0.45) == pytest.approx(0.5)  # halfway
    assert embedding_share(adaptive, lambda: 0.7) == 0.1  # well


def test_tiers_add_the_exact_matches_and_say_why_without_changing_the_input():
    found = one_side(SPARSE, dense=False)
    why = {"d": "exact term", "e": "exact symbol", "c": "x"}
    tiered = with_tiers(found, ["e"], {"d": 1, "e": 3}, why)
    assert [(c.id, c.score, c.tier, c.match) for c in tiered] == [
        ("c", 12.0, 0, ""), ("d", 8.0, 1, "exact term"), ("a", 4.0, 0, ""),
        ("e", 0.0, 3, "exact symbol")]
    assert tiered[1].sparse_rank == 2 and tiered[3].sparse_rank is None
    assert all(c.tier == 0 and c.match == "" for c in found)


def test_ties_are_broken_by_document_then_position_reading_only_the_tied_records():
    records = {"a": chunk("a", "z.md", 0), "b": chunk("b", "m.md", 50), "c": chunk("c", "m.md", 10),
               "d": chunk("d", "a.md", 0)}
    asked: list[list[str]] = []

    def fetch(ids: list[str]) -> dict[str, Chunk]:
        asked.append(ids)
        return {i: records[i] for i in ids if i in records}

    found = [Candidate("a", 0.5), Candidate("b", 0.5), Candidate("c", 0.5), Candidate("d", 0.2)]
    ordered = break_ties(found, fetch)
    assert [c.id for c in ordered] == ["c", "b", "a", "d"]  # m.md@10, m.md@50, z.md; then d
    assert asked == [["a", "b", "c"]]  # d ties with nothing: its record was not read
    asked.clear()
    assert break_ties([Candidate("a", 0.9), Candidate("b", 0.5)], fetch) == [
        Candidate("a", 0.9), Candidate("b", 0.5)]
    assert asked == []  # no ties: nothing read, the order as it came
    # equal to 9 places is equal; a candidate without a record sorts first
    close = [Candidate("x", 0.3000000001), Candidate("b", 0.3), Candidate("a", 0.3)]
    assert [c.id for c in break_ties(close, fetch)] == ["x", "b", "a"]


def test_higher_tiers_come_first_and_keep_limits_the_groups_ordered():
    docs = {"a": "z.md", "b": "y.md", "c": "x.md", "d": "d.md", "e": "e.md", "f": "f.md"}
    records = {cid: chunk(cid, doc) for cid, doc in docs.items()}
    asked: list[list[str]] = []

    def fetch(ids: list[str]) -> dict[str, Chunk]:
        asked.append(ids)
        return {i: records[i] for i in ids}

    found = [Candidate("f", 0.9), Candidate("e", 0.9), Candidate("d", 0.1, tier=1),
             Candidate("a", 0.2), Candidate("b", 0.2), Candidate("c", 0.2)]
    assert [c.id for c in break_ties(found, fetch)] == ["d", "e", "f", "c", "b", "a"]
    assert asked == [["f", "e", "a", "b", "c"]]
    asked.clear()
    # only the ties that reach into the first 3 places are read: those below go by id
    assert [c.id for c in break_ties(found, fetch, keep=3)] == ["d", "e", "f", "a", "b", "c"]
    assert asked == [["f", "e"]]


def test_scores_never_rise_down_the_list_and_a_raised_one_keeps_its_own():
    ranked = [Candidate("d", 0.0, tier=2, match="exact symbol"), Candidate("e", 0.4, tier=1),
              Candidate("a", 0.9), Candidate("b", 0.5)]
    out = in_rank_order(ranked)
    assert [(c.id, c.score, c.search_score) for c in out] == [
        ("d", 0.9, 0.0), ("e", 0.9, 0.4), ("a", 0.9, None), ("b", 0.5, None)]
    assert out[0].match == "exact symbol" and ranked[0].score == 0.0  # the input is unchanged
    plain = [Candidate("b", 0.5), Candidate("a", 0.9)]  # no tiers: as it came, even out of order
    assert in_rank_order(plain) == plain


def test_candidates_become_hits_when_they_have_a_record():
    found = [Candidate("a", 0.9, 1, 0.9, 3, 4.0, tier=1, match="exact term", search_score=0.7),
             Candidate("gone", 0.8), Candidate("b", 0.5, sparse_rank=1, sparse_score=2.0)]
    hits = to_hits(found, {"a": chunk("a"), "b": chunk("b")})
    assert [(h.rank, h.chunk.id, h.score) for h in hits] == [(1, "a", 0.9), (2, "b", 0.5)]
    a, b = hits
    assert (a.embedding_rank, a.embedding_score, a.bm25_rank, a.bm25_score) == (1, 0.9, 3, 4.0)
    assert (a.exact, a.match, a.search_score) == (1, "exact term", 0.7)
    assert (b.embedding_rank, b.bm25_rank, b.exact, b.match) == (None, 1, 0, "")
    assert b.search_score is None


def test_a_repeated_text_comes_back_once_naming_its_other_documents():
    hits = [Hit(rank=1, score=0.9, chunk=chunk("a", "one.md", text="same")),
            Hit(rank=2, score=0.8, chunk=chunk("b", "two.md", text="same")),
            Hit(rank=3, score=0.7, chunk=chunk("c", "one.md", text="other")),
            Hit(rank=4, score=0.6, chunk=chunk("d", "one.md", text="same"))]
    out = distinct(hits)
    assert [(h.rank, h.chunk.id, h.same_text) for h in out] == [(1, "a", ["two.md"]), (2, "c", [])]


def test_children_map_to_their_parents_at_the_best_child_s_rank():
    parents = {"P": chunk("P", "p.md", text="parent P"), "Q": chunk("Q", "q.md", text="parent Q")}
    hits = [Hit(rank=1, score=0.9, chunk=chunk("q1", parent="Q"), embedding_rank=2, embedding_score=0.9, exact=1, match="exact term"),
            Hit(rank=2, score=0.8, chunk=chunk("p1", parent="P")), Hit(rank=3, score=0.7, chunk=chunk("q2", parent="Q")),
            Hit(rank=4, score=0.6, chunk=chunk("orphan")), Hit(rank=5, score=0.5, chunk=chunk("r1", parent="R"))]
    asked: list[list[str]] = []

    def fetch_parents(ids: list[str]) -> dict[str, Chunk]:
        asked.append(ids)
        return {i: parents[i] for i in ids if i in parents}

    out = to_parents(hits, fetch_parents)
    assert asked == [["Q", "P", "R"]]
    assert [(h.rank, h.chunk.id, h.score, h.child_ids) for h in out] == [
        (1, "Q", 0.9, ["q1", "q2"]), (2, "P", 0.8, ["p1"])]  # R has no record: left out
    assert (out[0].embedding_rank, out[0].exact, out[0].match) == (2, 1, "exact term")


def test_options_resolve_explicit_then_saved_then_calibrated_then_defaults():
    fusion = {"alpha_range": [0.1, 0.4], "coverage_range": [0.2, 0.5]}
    saved = {"mode": "bm25", "rrf_k": 30, "alpha_range": [0.2, 0.6]}
    got = resolve(SearchOptions(rrf_k=5), saved, "use-m3", fusion)
    assert got.rrf_k == 5  # explicit
    assert got.mode == "bm25" and got.alpha_range == (0.2, 0.6)  # saved (lists made tuples)
    assert got.coverage_range == (0.2, 0.5)  # calibrated
    assert got.fusion == DEFAULTS.fusion and got.candidates == DEFAULTS.candidates
    assert got.weights == DEFAULTS.weights
    bare = resolve(None, None, "use-m3", {})
    assert (bare.alpha_range, bare.coverage_range) == adaptive_defaults("use-m3")
    assert bare.mode == DEFAULTS.mode and bare.k == 5


def test_resolved_options_are_checked():
    with pytest.raises(UsageError, match="--rrf-k must be at least 1"):
        resolve(None, {"rrf_k": 0})
    with pytest.raises(UsageError, match="the coverage range"):
        resolve(None, None, "use-m3", {"alpha_range": [0.1, 0.4], "coverage_range": [0.6, 0.2]})
    with pytest.raises(UsageError, match="--mode must be one of"):
        resolve(SearchOptions(mode="dense"))
