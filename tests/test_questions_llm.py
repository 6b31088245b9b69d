"""`indexer questions --llm ollama:MODEL` against the Ollama stand-in (no model runs here):
the wire protocol, the validation of every reply, and the cache."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.errors import EmbedderError
from indexer.questions.generate import make_questions
from indexer.questions.llm import copied, find_answer, parse_reply
from indexer.questions.simulate import TermStats
from indexer.settings import Settings
from tests.conftest import free_port
from tests.ollama_standin import StandInOllama

DOC = """# Shipping

## Islands

Parcels to the islands take five working days by sea.

## Express

Express parcels are flown overnight and cost twelve euros extra.
"""


def _passage(messages) -> str:
    return re.search(r"<passage>\s*(.+?)\s*</passage>", messages[-1]["content"], re.S).group(1)


def _good(messages) -> str:
    passage = _passage(messages)
    first = re.search(r"[A-Z][^.]*\.", passage).group()
    question = "How long until my order reaches the coast?" if "islands" in first else "How much more is the fast air option?"
    return "Sure!\n```json\n" + json.dumps({"question": question, "answer": first}) + "\n```"


@pytest.fixture
def folder(write_files):
    return write_files({"shipping.md": DOC})


def test_questions_from_the_llm_are_validated_and_cached(folder, tmp_path):
    db = tmp_path / "idx"
    with StandInOllama(chat_reply=_good) as server:
        made = make_questions(folder, 2, llm="ollama:gemma3:4b", settings=Settings.load(db=db, ollama_host=server.url))
        chats = [r for r in server.requests if r[0] == "/api/chat"]
        assert len(chats) == 2
        body = chats[0][1]
        assert body["model"] == "gemma3:4b" and body["options"]["temperature"] == 0 and body["format"] == "json"
        assert "<heading>Shipping › Islands</heading>" in body["messages"][-1]["content"] or \
            "<heading>Shipping › Express</heading>" in body["messages"][-1]["content"]
        assert {q["question"] for q in made.questions} == {"How long until my order reaches the coast?",
                                                           "How much more is the fast air option?"}
        for q in made.questions:
            assert q["tags"][:2] == ["generated", "ollama:gemma3:4b"]
            start, end = q["span"]
            assert q["answer"] in DOC[start:end] and q["answer"].endswith(".")
        assert "2 LLM calls, 0 cached" in made.notes[0] and "2 questions accepted" in made.notes[0]
        again = make_questions(folder, 2, llm="ollama:gemma3:4b", settings=Settings.load(db=db, ollama_host=server.url))
        assert len([r for r in server.requests if r[0] == "/api/chat"]) == 2  # all from the cache
        assert again.questions == made.questions and "0 LLM calls, 2 cached" in again.notes[0]


@pytest.mark.parametrize("reply, reason", [
    (lambda m: json.dumps({"question": _passage(m).split("\n")[-1].rstrip(".") + "?",
                           "answer": _passage(m).split("\n")[-1]}), "copies the passage"),
    (lambda m: json.dumps({"question": "How long until my order reaches the coast?",
                           "answer": "Orders arrive by drone within the hour."}), "answer not in the passage"),
    (lambda m: "Here is a question: how long does it take?", "no question"),
])
def test_replies_that_fail_validation_are_rejected(folder, tmp_path, reply, reason):
    with StandInOllama(chat_reply=reply) as server:
        made = make_questions(folder, 2, llm="ollama:gemma3:4b", settings=Settings.load(db=tmp_path / "idx", ollama_host=server.url))
        assert made.questions == []
        assert f"rejected: 2 {reason}" in made.notes[0]
        assert made.shortfall.startswith("made 0 of the 2 questions")
        result = CliRunner().invoke(cli, ["questions", str(folder), "-o", str(tmp_path / "q.jsonl"), "--llm",
                                          "ollama:gemma3:4b", "--ollama-host", server.url, "--db", str(tmp_path / "idx")])
        assert result.exit_code == 1 and "nothing written" in result.output and not (tmp_path / "q.jsonl").exists()


def test_an_unreachable_ollama_is_a_one_line_error(folder, tmp_path):
    port = free_port()
    with pytest.raises(EmbedderError, match="cannot reach the Ollama server"):
        make_questions(folder, 2, llm="ollama:gemma3:4b", settings=Settings.load(db=tmp_path / "i", ollama_host=f"http://127.0.0.1:{port}"))
    with StandInOllama(models=("other:latest",)) as server:
        result = CliRunner().invoke(cli, ["questions", str(folder), "-o", str(tmp_path / "q.jsonl"), "--llm",
                                          "ollama:gemma3:4b", "--ollama-host", server.url, "--db", str(tmp_path / "i")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith("Error: the Ollama server at")
    assert "ollama pull gemma3:4b" in result.output


def test_reply_parsing_overlap_and_answer_search():
    assert parse_reply('{"question": " How  long? ", "answer": "x"}') == ("How long?", "x")
    assert parse_reply("no json here") == ("", "")
    assert parse_reply('["a list"]') == ("", "")
    vocab = TermStats()
    share, run = copied(vocab, "How long do parcels to the islands take?", "Parcels to the islands take five days.", "en")
    assert share == pytest.approx(3 / 4) and run == 5  # "parcels to the islands take"
    text = "| Plan | Price |\n|---|---|\n| Growth | 199 dollars |"
    assert find_answer(text, "Growth 199 dollars", 0, len(text)) == (text.index("Growth"), len(text) - 2)
    assert find_answer(text, "Enterprise", 0, len(text)) is None
