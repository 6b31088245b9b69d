"""Made-up questions wired through: `eval --generate N`, `tune --generate N`, and serve's
POST /api/evaluation/generate, on a folder with no question file of its own (three of
the bundled English documents, built once for the module with the real embedder)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.evaluation.advice import LEXICAL_BIAS
from indexer.evaluation.sets import load_questions, resolve
from indexer.loaders import load_documents
from indexer.questions.on_demand import CAVEAT
from indexer.settings import Settings
from tests.conftest import CORPUS

DOCS = ("billing-and-plans.md", "api-rate-limits-and-errors.md", "sso-and-user-management.md")


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """(documents folder, index folder): no questions*.jsonl anywhere."""
    from indexer.indexing.building import build

    root = tmp_path_factory.mktemp("own")
    docs = root / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(CORPUS / "en" / name, docs / name)
    db = root / "index"
    build([docs], ["headers", "fixed64"], settings=Settings.load(db=db))
    assert not list(root.rglob("questions*.jsonl"))
    return docs, db


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_eval_generate_makes_keeps_and_reuses_a_set(own):
    docs, db = own
    first = _run("eval", "--generate", 24, "--seeds", 1, "-s", "headers", "-s", "fixed64", "-m", "bm25", "--db", db,
                 "--json")
    assert first.exit_code == 0, first.output
    kept = list((db / "questions").glob("questions-*.jsonl"))
    assert len(kept) == 1 and f"made 24 questions from 3 document(s) in {docs}" in first.stderr
    rows = [json.loads(line) for line in first.stdout.splitlines()]
    assert rows[-1]["row"] == "advice" and rows[-1]["questions"] == 24  # what the made-up set can tell
    rows = [r for r in rows if r["row"] == "result"]
    assert {r["strategy"] for r in rows} == {"headers", "fixed64"} and all(r["questions"] == 24 for r in rows)
    questions = load_questions(kept[0])  # a set in the ordinary format, every target resolvable
    _, loaded = load_documents([docs])
    resolve(questions, {d.doc_id: d for d in loaded})
    assert len(questions) == 24 and all(q.tags[0] == "generated" for q in questions)
    # the same numbers as eval on the kept file
    direct = _run("eval", kept[0], "-s", "headers", "-s", "fixed64", "-m", "bm25", "--db", db, "--corpus", docs,
                  "--json", "-q")
    assert [json.loads(line)["mrr@10"] for line in direct.stdout.splitlines()] == [r["mrr@10"] for r in rows]
    again = _run("eval", "--generate", 24, "--seeds", 1, "-s", "headers", "-m", "bm25", "--db", db)
    assert again.exit_code == 0, again.output
    assert "reused 24 made-up questions" in again.stderr and "24 questions from" in again.stdout
    assert "not among the embedding rows" in again.stderr  # the caveat comes with the numbers
    assert "nor to judge bm25 against the embedding" in again.stderr
    assert list((db / "questions").glob("questions-*.jsonl")) == kept


def test_tune_generate_and_the_refusals(own):
    docs, db = own
    tuned = _run("tune", "--generate", 24, "--seeds", 1, "-s", "headers", "--db", db, "--folds", 3)
    assert tuned.exit_code == 0, tuned.output
    assert "24 questions; every setting scored" in tuned.stdout and "cross-validated over 3 folds" in tuned.stdout
    from indexer.evaluation.advice import LEXICAL_BIAS

    rows = [json.loads(line) for line in _run("tune", "--generate", 24, "--seeds", 1, "-s", "headers", "--db", db,
                                              "--folds", 3, "--json", "-q").stdout.splitlines()]
    summary = next(r for r in rows if r["row"] == "summary")
    assert [d["margin"] for d in summary["decisions"]] == [LEXICAL_BIAS]  # saved only above the lean to BM25
    neither = _run("eval", "-s", "headers", "--db", db)
    assert neither.exit_code != 0 and "--generate [N]" in neither.output
    both = _run("eval", CORPUS / "questions.jsonl", "--generate", 5, "-s", "headers", "--db", db)
    assert both.exit_code != 0 and "not both" in both.output
    zero = _run("eval", "--generate", 0, "-s", "headers", "--db", db)
    assert zero.exit_code != 0 and "at least 1" in zero.output


def test_eval_generate_runs_where_the_index_folder_cannot_be_written(own, tmp_path, monkeypatch):
    """A read-only index folder (eval and tune do not need to write one): the sets, and the
    file pooling them, are made in a temporary folder and the run says so, instead of
    failing on the folder."""
    import indexer.questions.on_demand as generated

    docs, db = own
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(generated, "questions_folder", lambda _db: blocked / "questions")  # mkdir fails
    done = _run("eval", "--generate", 12, "-s", "headers", "-m", "bm25", "--db", db)
    assert done.exit_code == 0, done.output
    assert "36 questions from" in done.stdout and "could not keep them in" in done.stderr  # 3 sets of 12


def test_a_small_folder_says_how_many_it_could_make(write_files, tmp_path):
    from indexer.indexing.building import build

    folder = write_files({"returns.md": "# Returns\n\nYou can return an unopened item within 30 days of delivery "
                                        "for a full refund.\n\nRefunds reach the original payment card within five "
                                        "business days.\n"})
    db = tmp_path / "index"
    build([folder], ["headers"], settings=Settings.load(db=db))
    got = _run("eval", "--generate", 50, "--seeds", 1, "-s", "headers", "-m", "bm25", "--db", db)
    assert got.exit_code == 0, got.output
    assert "made 2 of the 50 questions asked for: the documents hold 2 passages worth a question" in got.stderr
    assert "2 questions from" in got.stdout
    pooled = _run("eval", "--generate", 50, "--seed", 7, "-s", "headers", "-m", "bm25", "--db", db)  # three new sets
    assert pooled.exit_code == 0, pooled.output
    assert ("made 6 of the 150 questions asked for (50 from each of 3 made-up sets): the documents hold 2 "
            "passages worth a question, and each set asks about them all") in pooled.stderr


def test_serve_makes_questions_for_a_collection_without_any_then_evaluates(own):
    from starlette.testclient import TestClient

    from indexer.serve.app import create_app

    docs, db = own
    client = TestClient(create_app(Settings.load(db=db)), base_url="http://127.0.0.1")
    assert client.get("/api/questions").json()["sets"] == []
    body = {"n": 20, "strategies": ["headers"], "modes": ["bm25", "embedding"]}
    got = client.post("/api/evaluation/generate", json=body)
    assert got.status_code == 200, got.text
    data = got.json()
    assert data["questions"] == 60 and data["generated"]["questions"] == 60 and not data["generated"]["reused"]
    advice = data["advice"]  # three sets of 20, pooled, and what they can tell
    assert advice["questions"] == 60 and advice["lexical_bias"] == LEXICAL_BIAS and advice["bm25_minus_embedding"]
    assert advice["verdict"] in data["advice_text"] and (advice["winner"] is None) == (len(advice["tied"]) > 1)
    assert advice["caveat"] == CAVEAT and data["advice_text"].endswith(f"\nnote: {CAVEAT}")  # what to trust
    assert [(r["strategy"], r["mode"]) for r in data["rows"]] == [("headers", "bm25"), ("headers", "embedding")]
    assert str(db) not in got.text and str(docs) not in got.text
    listed = client.get("/api/questions").json()["sets"]
    assert [s["id"] for s in listed] == [data["set"]] and listed[0]["generated"]
    assert listed[0]["name"].startswith("60 made-up questions (")
    same = client.get("/api/evaluation", params={"set": data["set"], "strategy": "headers", "mode": ["bm25", "embedding"]})
    assert [r["mrr@10"] for r in same.json()["rows"]] == [r["mrr@10"] for r in data["rows"]]
    again = client.post("/api/evaluation/generate", json=body).json()
    assert again["generated"]["reused"] and again["set"] == data["set"]
    for bad, needle in (({"n": 0}, "n must be"), ({"n": "60"}, "n must be"), ({"n": 5, "modes": ["fast"]}, "modes"),
                        ({"n": 5, "extra": 1}, "unknown field")):
        refused = client.post("/api/evaluation/generate", json=bad)
        assert refused.status_code == 400 and needle in refused.json()["error"], bad
    missing = client.post("/api/evaluation/generate", json={"n": 5, "strategies": ["semantic75"]})
    assert missing.status_code == 404  # a strategy, not built
    unknown = client.post("/api/evaluation/generate", json={"n": 5, "strategies": ["nope"]})
    assert unknown.status_code == 400 and "unknown strategy 'nope'" in unknown.json()["error"]  # no strategy
