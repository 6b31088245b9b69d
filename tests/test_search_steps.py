"""A search is the list of steps in `indexer.retrieval.searching.steps.STEPS`, run over one snapshot
of one version: a step added to that list runs in every front door (the library, the
CLI, the web API, MCP, the evaluator, answer-sized context), and a version published
while a search runs never reaches that search."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import indexer
from indexer.indexing.building import build
from indexer.retrieval import Index, SearchOptions
from indexer.retrieval.searching import steps
from indexer.retrieval.searching.steps import Pass
from indexer.settings import Settings
from tests.conftest import CORPUS
from tests.test_front_doors import mcp, run_cli, web

DOCS = ("kargo-ve-teslimat.md", "iade-ve-geri-odeme.md", "uyelik-ve-hesap.md")
QUERY = "kargo kaç günde gelir"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("steps")
    docs = root / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(CORPUS / name, docs / name)
    db = root / "db"
    build([docs], ["headers"], settings=Settings.load(db=db))
    return db, docs


class Counting:
    """A step that changes nothing and counts the passes it saw."""

    def __init__(self) -> None:
        self.passes: list[Pass] = []

    def __call__(self, p: Pass) -> Pass:
        self.passes.append(p)
        return p


@pytest.fixture
def counting(monkeypatch) -> Counting:
    step = Counting()
    at = steps.STEPS.index(steps.one_per_text) + 1
    monkeypatch.setattr(steps, "STEPS", [*steps.STEPS[:at], step, *steps.STEPS[at:]])
    return step


def test_a_step_in_the_list_runs_in_every_front_door(built, counting):
    db, docs = built
    settings = Settings.load(db=db)
    doors = {
        "library": lambda: indexer.search(QUERY, "headers", settings=settings),
        "Index.search": lambda: Index.open("headers", settings=settings).search(QUERY),
        "Index.context": lambda: Index.open("headers", settings=settings).context(QUERY, 200),
        "cli query": lambda: run_cli("query", QUERY, "-s", "headers", "--db", db),
        "cli query --budget": lambda: run_cli("query", QUERY, "--budget", "200", "--db", db),
        "web search": lambda: _web_search(db),
        "mcp search": lambda: mcp(db, "search", query=QUERY),
        "mcp search max_tokens": lambda: mcp(db, "search", query=QUERY, max_tokens=300),
    }
    for door, call in doors.items():
        before = len(counting.passes)
        call()
        assert len(counting.passes) > before, f"{door} searched without the list's steps"
        assert counting.passes[-1].query == QUERY and counting.passes[-1].hits, door


def test_the_evaluator_searches_through_the_list(built, counting, tmp_path):
    db, docs = built
    questions = tmp_path / "q.jsonl"
    kept = [line for line in (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if any(f'"{d}"' in line for d in DOCS)]
    questions.write_text("\n".join(kept) + "\n", encoding="utf-8")
    code, _, err = run_cli("eval", questions, "--corpus", docs, "-s", "headers", "-m", "bm25",
                           "--db", db)
    assert code == 0, err
    asked = {json.loads(line)["question"].strip() for line in kept}
    assert {p.query for p in counting.passes} == asked  # every question went through


def _web_search(db: Path) -> dict:
    with web(db) as client:
        response = client.post("/api/search", json={"query": QUERY, "strategy": "headers"})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_version_published_during_a_search_does_not_reach_it(built, monkeypatch, tmp_path):
    """A step halfway through the search publishes a new version (the answer's document
    rewritten) and makes the handle follow it, as another thread's query would: the
    search still reads the version it started on, to the end."""
    db, docs = built
    db2, docs2 = tmp_path / "db", tmp_path / "docs"
    shutil.copytree(db, db2)
    shutil.copytree(docs, docs2)
    settings = Settings.load(db=db2)
    index = Index.open("headers", settings=settings, refresh=0)
    before = index.search(QUERY)
    first = before[0].chunk
    published: list[str] = []

    def publish(p: Pass) -> Pass:
        if not published:
            (docs2 / first.doc_id).write_text("# Başka\n\nBurada artık kargo yok.\n", encoding="utf-8")
            [report] = build([docs2], ["headers"], settings=settings)
            assert report.mode == "incremental"
            assert index.follow(force=True)  # the handle now reads the new version
            published.append(index.entry.collection + str(index.entry.generation))
        return p

    read: list[tuple[str, int]] = []

    def version_read(p: Pass) -> Pass:
        read.append((p.snapshot.entry.collection, p.snapshot.entry.generation))
        return p

    old = (index.entry.collection, index.entry.generation)
    at = steps.STEPS.index(steps.side_candidates) + 1
    monkeypatch.setattr(steps, "STEPS", [version_read, *steps.STEPS[:at], publish, version_read,
                                         *steps.STEPS[at:], version_read])
    during = index.search(QUERY)
    assert published and (index.entry.collection, index.entry.generation) != old
    assert read == [old, old, old]  # every step of the search read the version it started on
    assert [(h.chunk.id, h.chunk.text) for h in during] == [(h.chunk.id, h.chunk.text) for h in before]
    after = index.search(QUERY)  # the next search reads the new version
    assert first.id not in {h.chunk.id for h in after}
    assert all(h.chunk.doc_id != first.doc_id or "artık kargo yok" in h.chunk.text for h in after)


def test_a_pass_is_a_record_each_step_returns_anew(built):
    """Steps return a new record; the one they were handed is left as it was."""
    db, _ = built
    snapshot = Index.open("headers", settings=Settings.load(db=db)).snapshot()
    start = steps.start(QUERY, snapshot.resolve(SearchOptions(mode="bm25")), snapshot)
    after = steps.side_candidates(start)
    assert start.sparse == [] and after.sparse and after is not start
    assert replace(after, sparse=[]) == replace(start, sparse=[])
