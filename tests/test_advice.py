"""The advice of made-up questions (`eval --generate`, `tune --generate`, serve's view):
rows within noise of the best are called tied and no winner is named; a winner is named
only when every other row is below it beyond noise; the mode comparison carries the
measured bias of made-up questions as a number; `--generate` alone makes the default
number of questions from several seeds, pooled. On the bundled Turkish corpus, built with
the real embedder."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.evaluation.advice import LEXICAL_BIAS, advise
from indexer.evaluation.metrics import paired_difference, paired_differences
from indexer.questions.on_demand import CAVEAT, QUESTIONS, SEEDS


@pytest.fixture(scope="module")
def db(built_db, tmp_path_factory):
    """A copy of the session's built index (made-up sets are kept in it)."""
    copy = tmp_path_factory.mktemp("advice") / "index"
    shutil.copytree(built_db[0], copy)
    return copy


def _run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def _advice(stdout: str) -> dict:
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert [r["row"] for r in rows].count("advice") == 1 and rows[-1]["row"] == "advice"
    return rows[-1]


def test_rows_within_noise_are_called_tied_and_no_winner_is_named(db):
    """headers/bm25 and headers/hybrid rank almost every made-up question alike: the
    paired interval of their difference holds 0, so neither is named the winner."""
    args = ("eval", "--generate", 40, "--seeds", 1, "-s", "headers", "-m", "bm25", "-m", "hybrid", "--db", db)
    advice = _advice(_run(*args, "--json").stdout)
    assert advice["winner"] is None and sorted(advice["tied"]) == ["headers/bm25", "headers/hybrid"]
    second = advice["rows"][1]
    assert second["tied"] and second["ci95"][0] <= second["difference"] <= second["ci95"][1] and second["ci95"][1] >= 0
    text = _run(*args).stdout
    assert "no winner: 2 rows are tied with the best within noise (headers/" in text
    assert "any of them will do" in text and "winner on these" not in text
    assert "tied" in next(line for line in text.splitlines() if line.startswith(second["row"] + " "))


def test_a_separated_winner_is_named(db):
    """bm25 against the embedding on made-up questions: far apart, so the best is named."""
    args = ("eval", "--generate", 40, "--seeds", 1, "-s", "headers", "-m", "bm25", "-m", "embedding", "--db", db)
    advice = _advice(_run(*args, "--json").stdout)
    assert advice["winner"] == "headers/bm25" and advice["tied"] == ["headers/bm25"]
    loser = advice["rows"][1]
    assert loser["row"] == "headers/embedding" and not loser["tied"] and loser["ci95"][1] < 0
    text = _run(*args).stdout
    assert "winner on these made-up questions: headers/bm25" in text and "no winner" not in text


def test_the_mode_comparison_carries_the_measured_bias(db):
    args = ("eval", "--generate", 40, "--seeds", 1, "-s", "headers", "-s", "fixed64", "--db", db)
    rows = [json.loads(line) for line in _run(*args, "--json").stdout.splitlines()]
    advice = rows[-1]
    mean = {m: sum(r["mrr@10"] for r in rows if r.get("mode") == m) / 2 for m in ("bm25", "embedding")}
    assert advice["lexical_bias"] == LEXICAL_BIAS
    assert advice["caveat"] == CAVEAT  # --json says what to trust them for, as the text's note does
    assert advice["bm25_minus_embedding"] == pytest.approx(mean["bm25"] - mean["embedding"], abs=1e-3)
    assert advice["bm25_minus_embedding_corrected"] == pytest.approx(advice["bm25_minus_embedding"] - LEXICAL_BIAS,
                                                                     abs=1e-3)
    text = _run(*args).stdout
    gap = advice["bm25_minus_embedding"]
    assert f"bm25 - embedding here: {gap:+.3f} MRR@10" in text
    assert f"favour bm25 by about {LEXICAL_BIAS:.2f} more than people's questions" in text
    assert f"expect about {gap - LEXICAL_BIAS:+.2f}" in text


def test_generate_alone_pools_the_default_sets_and_reuses_them(db):
    first = _run("eval", "--generate", "-s", "headers", "-m", "bm25", "--db", db, "--json")
    made = first.stderr.splitlines()[0]
    assert made.startswith("made ") and f"({SEEDS} sets of seeds 0-{SEEDS - 1}, pooled)" in made
    advice = _advice(first.stdout)
    assert advice["questions"] == QUESTIONS * SEEDS  # the bundled corpus holds 209 passages worth a question
    pooled = list((db / "questions").glob(f"questions-*-x{SEEDS}.jsonl"))
    assert len(pooled) == 1
    ids = [json.loads(line)["id"] for line in pooled[0].read_text(encoding="utf-8").splitlines()]
    assert len(ids) == advice["questions"] == len(set(ids))
    assert {i.split("-")[0] for i in ids} == {f"s{s}" for s in range(SEEDS)}
    again = _run("eval", "--generate", "-s", "headers", "-m", "bm25", "--db", db)
    assert again.stderr.startswith(f"reused {advice['questions']} made-up questions")
    refused = CliRunner().invoke(cli, ["eval", "--generate", "--seeds", "0", "-s", "headers", "--db", str(db)])
    assert refused.exit_code == 2 and "at least 1" in refused.output


def test_tune_generate_gives_the_advice_too(db):
    args = ("tune", "--generate", 40, "--seeds", 1, "-s", "headers", "--folds", 3, "--db", db)
    advice = _advice(_run(*args, "--json").stdout)
    assert advice["lexical_bias"] == LEXICAL_BIAS and advice["bm25_minus_embedding"] is not None
    assert advice["best"] in advice["tied"] and len(advice["rows"]) > 30  # every deduplicated setting
    text = _run(*args).stdout
    assert advice["verdict"] in text and f"about {LEXICAL_BIAS:.2f} more" in text


def test_the_shared_draws_give_paired_difference_s_numbers():
    a = [1.0, 0.5, 0.0, 1.0, 0.33, 0.0, 1.0, 0.25] * 10
    b = [0.5, 0.5, 1.0, 1.0, 0.0, 0.0, 0.2, 0.25] * 10
    one = paired_difference(a, b)
    many = paired_differences({"a": a}, b)["a"]
    assert many[0] == pytest.approx(one[0])
    assert many[1] == pytest.approx(one[1], abs=0.02)  # other draws, the same bootstrap
    tied = advise({"x/bm25": a, "y/bm25": a, "z/embedding": [0.0] * len(a)})
    assert tied.winner is None and tied.tied == ["x/bm25", "y/bm25"] and tied.mode_gap == pytest.approx(
        sum(a) / len(a))


def test_questions_about_the_same_passage_are_resampled_together():
    """Pooled made-up sets ask about one passage once per seed: three questions with the
    same target are one piece of evidence, and the interval widens to say so."""
    row = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.5]
    ref = [0.5, 0.0, 1.0, 0.5, 0.0, 0.5, 0.5, 0.0, 0.5, 0.0]
    a, b = row * 3, ref * 3  # ten passages, one question each from three seeds
    passages = [("doc.md", i) for i in range(10)] * 3
    plain = paired_differences({"a": a}, b)["a"]
    clustered = paired_differences({"a": a}, b, clusters=passages)["a"]
    assert clustered[0] == pytest.approx(plain[0])
    assert clustered[1][1] - clustered[1][0] > 1.3 * (plain[1][1] - plain[1][0])
    # a question per passage: the same draws as without clusters
    alone = paired_differences({"a": a}, b, clusters=[("doc.md", i) for i in range(30)])["a"]
    assert alone[1] == pytest.approx(plain[1])
    advice = advise({"a/bm25": a, "b/bm25": b}, clusters=passages)
    assert (advice.questions, advice.targets) == (30, 10)
    assert "paired over the same 30 questions about 10 passages, resampled by passage" in advice.text()
    assert advice.to_dict()["passages"] == 10
