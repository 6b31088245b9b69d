"""Bad question records and queries no encoder can write, through the front doors (issue
35, items 3 and 4): a field of the wrong type is one line naming the file, the line and
the field; a query holding undecodable bytes or a lone surrogate is cleaned where it enters
the library (U+FFFD), and every mode answers it — CLI, eval, MCP's search tool (serve:
tests/test_serve.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexer.agents.server import Tools
from indexer.cli import cli
from indexer.errors import UsageError
from indexer.retrieval import MODES, Index
from indexer.settings import Settings
from tests.conftest import CORPUS

FIRST = [json.loads(line) for line in (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:4]]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def question_file(tmp_path, second: dict) -> str:
    """Four questions of the bundled set, the second one replaced."""
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in [FIRST[0], second, *FIRST[2:]]), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("field, value, problem", [
    ("question", 42, "question must be a string, not int"),
    ("question", ["kargo", "iade"], "question must be a string, not list"),
    ("question", "   ", "question is blank"),
    ("section", 5, "section must be a string, not int"),
    ("answer", 5, "answer must be a string, not int"),
    ("symbol", {"name": "x"}, "symbol must be a string, not dict"),
    ("doc_id", 7, "doc_id must be a string, not int"),
    ("id", [1], "id must be a string or a whole number, not list"),
    ("tags", 3, "tags must be a string or a list of strings, not 3"),
    ("tags", ["a", 1], 'tags must be a string or a list of strings, not ["a", 1]'),
    ("span", [True, 4], "span must be [start, end] character offsets with start < end"),
])
def test_a_question_field_of_the_wrong_type_is_one_line_naming_it(built_db, tmp_path, field, value, problem):
    db, _ = built_db
    path = question_file(tmp_path, {**FIRST[1], field: value})
    for command in ("eval", "tune"):
        result = run(command, path, "-s", "headers", "--db", db, *(["-m", "bm25"] if command == "eval" else []))
        assert (result.exit_code, result.stdout) == (1, ""), (command, result.output, result.exception)
        assert result.stderr == f"Error: {path}: line 2: {problem}\n", command


def test_the_library_refuses_a_query_that_is_not_text(built_db):
    db, _ = built_db
    with pytest.raises(UsageError, match="^the query must be text, not int$"):
        Index.open("headers", settings=Settings.load(db=db)).search(42)


@pytest.mark.parametrize("mode", MODES)
def test_a_query_with_undecodable_bytes_is_answered(built_db, mode):
    """`indexer query $'\\xff\\xfe kargo'`: Python hands such bytes of argv over as lone
    surrogates; the embedder could not encode them."""
    db, _ = built_db
    query = b"\xff\xfe kargo".decode("utf-8", "surrogateescape")
    result = run("query", query, "-s", "headers", "-m", mode, "-k", 3, "--db", db, "--json")
    assert result.exit_code == 0, (result.output, result.exception)
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(hits) == 3 and any("kargo" in h["text"].lower() for h in hits)
    cleaned = Index.open("headers", settings=Settings.load(db=db)).search("\ufffd\ufffd kargo", mode=mode, k=3)
    assert [h["id"] for h in hits] == [h.chunk.id for h in cleaned]  # the same as U+FFFD in their place


@pytest.mark.parametrize("mode", MODES)
def test_mcp_search_answers_a_lone_surrogate(built_db, mode):
    db, _ = built_db
    got = Tools(Settings.load(db=db), strategy="headers").search("\ud800 kargo", mode=mode, k=3)
    assert got["mode"] == mode and len(got["results"]) == 3
    json.dumps(got, ensure_ascii=False).encode("utf-8")  # what the server writes can be written


def test_eval_scores_a_question_with_a_lone_surrogate_in_every_mode(built_db, tmp_path):
    db, _ = built_db
    path = question_file(tmp_path, {**FIRST[1], "question": "\ud800" + FIRST[1]["question"]})
    result = run("eval", path, "-s", "headers", "--db", db, "--json", "-q")
    assert result.exit_code == 0, (result.output, result.exception)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["mode"], r["questions"]) for r in rows] == [(m, 4) for m in MODES]
    assert all(r["per_question"][1]["first_hit"] for r in rows)  # the question was searched, and found


def test_a_number_past_pythons_digit_limit_is_a_line_of_the_file_not_a_traceback(tmp_path):
    """json.loads raises a plain ValueError (not a JSONDecodeError) for an integer of more
    than 4,300 digits; the set's reader told only JSON's own errors apart."""
    from indexer.errors import QuestionSetError
    from indexer.evaluation import load_questions

    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(FIRST[0]) + "\n" + '{"question": "x", "doc_id": "a.md", "k": ' + "9" * 5000 + "}\n",
                    encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r"line 2: not JSON that can be read \(Exceeds the limit") as caught:
        load_questions(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value).strip()
