"""indexer.llm, the one LLM client of the contextual strategy and of question making,
against the Ollama stand-in (no model runs here).

Replies kept by earlier versions stay valid: the cache files keep their place (the index
folder's cache: `contexts.sqlite`, `questions.sqlite`) and their format, written here by
hand as those versions wrote them."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from indexer.chunkers import parse_strategy
from indexer.errors import UsageError
from indexer.indexing.building import build
from indexer.llm import ChatClient, ReplyCache
from indexer.loaders import load_documents
from indexer.questions import make_questions
from indexer.retrieval import Index
from indexer.settings import Settings
from indexer.text.tokens import get_tokenizer
from tests.ollama_standin import StandInOllama

TEXT = ("# Kargo\n\nStandart kargo üç iş gününde teslim edilir.\n\n## Puanlar\n\n"
        "Puanlar nakde çevrilemez. Puanların süresi 12 aydır.\n\n"
        "## İade\n\nİade 14 gün içinde ücretsiz yapılır.\n")
# the table every version so far has written (chunk: the SHA-256 of the chunk's text)
SCHEMA = ("CREATE TABLE contexts (model TEXT, prompt INTEGER, doc TEXT, chunk TEXT, "
          "context TEXT, input_tokens INTEGER, output_tokens INTEGER, "
          "PRIMARY KEY (model, prompt, doc, chunk)) WITHOUT ROWID")


def _chats(server: StandInOllama) -> int:
    return sum(route == "/api/chat" for route, _ in server.requests)


def test_contexts_kept_by_an_earlier_version_are_used_without_a_call(tmp_path, write_files):
    root = write_files({"k.md": TEXT})
    settings = Settings.load(db=tmp_path / "db")
    build([root], ["headers"], settings=settings)  # an index folder, as a user has one
    doc = next(iter(load_documents([root])[1]))
    chunks = parse_strategy("headers").create(tokenizer=get_tokenizer()).chunk(doc)
    kept = {c.text: f"{doc.title} bölümü: kayıtlı bağlam {i}" for i, c in enumerate(chunks)}
    db = sqlite3.connect(tmp_path / "db" / "cache" / "contexts.sqlite")
    db.execute(SCHEMA)
    db.executemany("INSERT INTO contexts VALUES (?, ?, ?, ?, ?, ?, ?)", [
        ("ollama:gemma3:4b", 1, doc.hash, hashlib.sha256(t.encode()).hexdigest(), c, 900, 40)
        for t, c in kept.items()])
    db.commit()
    db.close()
    with StandInOllama() as server:
        with_server = settings.with_(ollama_host=server.url)
        [report] = build([root], ["contextual:llm=ollama:gemma3:4b"], settings=with_server)
        assert _chats(server) == 0
    assert f"0 LLM calls, {len(chunks)} cached" in report.notes[0]
    stored = Index.open("contextual:llm=ollama:gemma3:4b", settings=settings).chunks()
    assert len(stored) == len(chunks) == 3
    assert {c.text: c.context for c in stored} == kept


def test_question_replies_are_kept_in_the_same_format(tmp_path, write_files):
    root = write_files({"k.md": TEXT})

    def reply(messages):
        return '{"question": "How long do I have to send it back?", "answer": "İade 14 gün içinde"}'

    with StandInOllama(chat_reply=reply) as server:
        settings = Settings.load(db=tmp_path / "db", ollama_host=server.url)
        make_questions(root, 1, llm="ollama:gemma3:4b", settings=settings)
        assert _chats(server) >= 1
    db = sqlite3.connect(tmp_path / "db" / "cache" / "questions.sqlite")
    schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'contexts'").fetchone()[0]
    rows = db.execute("SELECT model, prompt, context FROM contexts").fetchall()
    db.close()
    assert schema.replace("IF NOT EXISTS ", "") == SCHEMA
    assert rows and {(m, p) for m, p, _ in rows} == {("questions-v1:ollama:gemma3:4b", 1)}
    assert all("How long do I have" in r for _, _, r in rows)


def test_the_client_sends_one_deterministic_chat_and_counts_its_tokens():
    with StandInOllama(chat_reply=lambda messages: "Kısa bir bağlam.") as server:
        client = ChatClient("gemma3:4b", server.url)
        reply = client.chat("system words", "user words", max_tokens=64, json=True)
        [(route, body)] = [r for r in server.requests if r[0] == "/api/chat"]
    assert reply.text == "Kısa bir bağlam." and reply.input_tokens > 0 and reply.output_tokens > 0
    assert body["options"] == {"temperature": 0, "seed": 42, "num_predict": 64} and body["format"] == "json"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert client.backend == "ollama:gemma3:4b"
    with pytest.raises(UsageError, match="give the Ollama model"):
        ChatClient("", server.url)


def test_the_cache_keys_replies_by_prompt_version(tmp_path):
    first = ReplyCache(tmp_path / "c.sqlite", 1)
    first.put("m", "doc", "item", "reply one", 10, 2)
    assert first.get("m", "doc", "item") == "reply one"
    assert ReplyCache(tmp_path / "c.sqlite", 2).get("m", "doc", "item") is None  # a new prompt asks again
    assert ReplyCache(tmp_path / "c.sqlite", 1).get("m", "doc", "other") is None
