"""Pay once (issue 53): a build embeds what search reads (its chunks), and answer-sized
context embeds the few units a question reads, once, into the index's embedding cache;
a lost cache heals on demand (issue 51, G9) and never silently lowers quality."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.errors import EmbedderError
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.retrieval import Index
from indexer.retrieval.context.vectors import SHORTLIST, UnitVectors
from indexer.settings import Settings

TOPICS = ("kargo", "iade", "ödeme", "üyelik")
QUESTION = "Kargo ücreti kaç gün içinde iade edilir?"


def _folder(tmp_path):
    """Four documents of three sections of eight sentences: ~100 units, more than a
    question's shortlist, more than the 32 a query used to embed before giving up."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for topic in TOPICS:
        sections = []
        for s in range(3):
            sentences = " ".join(
                f"{topic.capitalize()} kuralı {s}.{i}: bu işlem {i + 2} gün içinde tamamlanır ve "
                f"ücret {10 * i + s} TL olarak {topic} hesabına yansır." for i in range(8))
            sections.append(f"## {topic.capitalize()} bölüm {s}\n\n{sentences}")
        (folder / f"{topic}.md").write_text(f"# {topic.capitalize()}\n\n" + "\n\n".join(sections) + "\n")
    return folder


def _vectors_in_cache(db) -> int:
    path = db / "cache" / "embeddings.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]


def _spans(context) -> list[tuple[str, int, int]]:
    return [(s.doc_id, s.start, s.end) for s in context.spans]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pay-once")
    folder = _folder(tmp)
    db = tmp / "db"
    [report] = build([folder], ["headers"], settings=Settings.load(db=db))
    return folder, db, report


def test_a_build_embeds_its_chunks_and_no_unit(built):
    """Before: every sentence of every document was embedded at build time (~100 units
    here beside 16 chunks); the cache held them all."""
    _, db, report = built
    assert report.embedded == report.chunks == _vectors_in_cache(db)
    assert report.timings["model"] > 0  # the model's own time, which the bench sets apart


def test_a_question_embeds_its_shortlist_once_for_every_process(tmp_path):
    folder = _folder(tmp_path)
    db = tmp_path / "db"
    [report] = build([folder], ["headers"], settings=Settings.load(db=db))
    context = Index.open("headers", settings=Settings.load(db=db)).context(QUESTION, 200)
    assert context.scoring == "bm25+embedding" and context.spans and not context.note
    added = _vectors_in_cache(db) - report.chunks
    assert 0 < added <= SHORTLIST < context.units  # only the shortlist was embedded
    # another process asking the same reads them: nothing is embedded again
    again = _query(db)
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr
    assert _vectors_in_cache(db) - report.chunks == added


def test_a_question_gets_the_same_context_on_a_fresh_and_a_used_index(built, tmp_path):
    """The shortlist depends on the question and its candidates, never on the vectors
    earlier queries left in the cache."""
    folder, _, _ = built
    fresh, used = tmp_path / "fresh", tmp_path / "used"
    for db in (fresh, used):
        build([folder], ["headers"], settings=Settings.load(db=db))
    index = Index.open("headers", settings=Settings.load(db=used))
    for other in ("üyelik hesabına yansır", "ödeme kuralı 2.5", "iade bölüm 1 ücret"):
        index.context(other, 400)
    first = Index.open("headers", settings=Settings.load(db=fresh)).context(QUESTION, 200)
    assert _spans(index.context(QUESTION, 200)) == _spans(first)


def test_a_lost_embedding_cache_heals_on_demand(tmp_path):
    """Issue 51, G9: after a damaged cache was moved aside, --budget scored by BM25 alone
    until `build --full` (more than 32 unit vectors missing), and the build did not say
    so. The units a question reads are embedded on demand now (each step a process of its
    own, as a user runs them)."""
    folder = _folder(tmp_path)
    db = tmp_path / "db"
    build([folder], ["headers"], settings=Settings.load(db=db))
    before = _query(db)
    for leftover in (db / "cache").glob("embeddings.sqlite-*"):
        leftover.unlink()
    (db / "cache" / "embeddings.sqlite").write_bytes(b"this is no database" * 100)
    rebuilt = subprocess.run([sys.executable, "-m", "indexer", "build", str(folder), "-s", "headers",
                              "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert rebuilt.returncode == 0 and "was damaged" in rebuilt.stdout, rebuilt.stdout + rebuilt.stderr
    after = _query(db)
    assert after.returncode == 0 and "warning" not in after.stderr, after.stderr
    assert after.stdout == before.stdout and before.stdout  # the same spans: nothing lost
    assert _vectors_in_cache(db) > 0  # and the shortlist's vectors are kept again


def _query(db) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "indexer", "query", QUESTION, "-s", "headers", "--db", str(db),
            "--budget", "200", "--json"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def test_vectors_the_cache_cannot_take_are_kept_by_the_process_and_said(built, monkeypatch, tmp_path):
    """A read-only index (or a cache a build has yet to set aside): the process keeps the
    vectors it made, the context is the same, and the note says why it costs more."""
    from indexer.embeddings import EmbeddingCache

    folder, _, _ = built
    db = tmp_path / "db"
    build([folder], ["headers"], settings=Settings.load(db=db))
    monkeypatch.setattr(EmbeddingCache, "put_many", lambda self, model, items: False)
    source = UnitVectors(db / "cache")
    index = Index.open("headers", settings=Settings.load(db=db))
    texts = ["Kargo kuralı 0.1", "İade kuralı 2.3"]
    first = source.vectors(index.embedder, texts)
    assert "cannot be written" in source.note and len(source.memo) == 2
    monkeypatch.setattr(type(index.embedder), "embed_documents", _refuse)
    assert np.array_equal(source.vectors(index.embedder, texts), first)  # not embedded again


def _refuse(self, texts):
    raise AssertionError("embedded again")


def test_an_embedder_that_fails_scores_by_bm25_and_the_command_says_so(built, monkeypatch):
    from indexer.cli import cli

    _, db, _ = built

    def fail(self, model, texts):
        raise EmbedderError("the Ollama server at http://127.0.0.1:9 does not answer")

    monkeypatch.setattr(UnitVectors, "vectors", fail)
    context = Index.open("headers", settings=Settings.load(db=db)).context(QUESTION, 200)
    assert context.scoring == "bm25" and context.spans
    assert "units scored by BM25 alone" in context.note and "does not answer" in context.note
    shown = CliRunner().invoke(cli, ["query", QUESTION, "-s", "headers", "--db", str(db), "--budget", "200"])
    assert shown.exit_code == 0, shown.output
    assert "warning: units scored by BM25 alone: the embedder failed" in shown.output


def test_unit_vectors_at_build_time_when_asked(tmp_path):
    """The old behaviour, on request: every unit embedded by the build (its cost said in
    `build --help`), and a question reads every unit's vector without embedding any."""
    folder = _folder(tmp_path)
    db = tmp_path / "db"
    [report] = build([folder], ["headers"], BuildOptions(unit_vectors=True), settings=Settings.load(db=db))
    stored = _vectors_in_cache(db)
    assert stored > 4 * report.chunks  # the units too
    index = Index.open("headers", settings=Settings.load(db=db))
    assert index.entry.extra["unit_vectors"] is True
    context = index.context(QUESTION, 200)
    assert context.scoring == "bm25+embedding" and _vectors_in_cache(db) == stored
    # asked for on a collection built without them: a full build, which says why
    plain = tmp_path / "plain"
    build([folder], ["headers"], settings=Settings.load(db=plain))
    [again] = build([folder], ["headers"], BuildOptions(unit_vectors=True), settings=Settings.load(db=plain))
    assert again.mode == "full" and "unit_vectors" in again.reason


def test_a_record_holds_its_text_once_and_no_empty_field(built):
    """Issue 53, item 3: a record's text was Chroma's document (indexed by a full-text
    search nothing reads: four times the text's bytes) and again in `indexed_text`, with
    every empty field stored too. Records written so before are read as they were."""
    from indexer.store.records import chunk_from_record
    from tests.conftest import raw_chroma

    _, db, _ = built
    index = Index.open("headers", settings=Settings.load(db=db))
    got = raw_chroma(db).collection(index.entry.collection).get(include=["documents", "metadatas"])
    assert got["documents"] and all(d is None for d in got["documents"])
    for meta in got["metadatas"]:
        assert meta["text"] and "indexed_text" not in meta
        assert all(v not in ("", 0) for k, v in meta.items() if k != "gen")
    chunk = index.chunks()[0]
    assert chunk.text and chunk.indexed_text.endswith(chunk.text)
    older = chunk_from_record("c1", "Kargo 3 günde gelir.", {"doc_id": "a.md", "indexed_text": "x", "start": 4})
    assert (older.text, older.doc_id, older.start, older.end_line) == ("Kargo 3 günde gelir.", "a.md", 4, 0)


def test_list_says_each_collections_size_on_disk(built):
    from indexer.cli import cli
    from indexer.store.disk import folder_bytes

    _, db, _ = built
    listed = CliRunner().invoke(cli, ["list", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    [row] = [json.loads(line) for line in listed.output.splitlines()]
    disk = row["disk"]
    assert disk["records"] > 0 and disk["vectors"] > 0 and disk["side"] > 0
    assert disk["total"] == disk["records"] + disk["vectors"] + disk["side"]
    assert disk["side"] == folder_bytes(db / "indexes")  # one collection: all its side files
    shown = CliRunner().invoke(cli, ["list", "--db", str(db)])
    assert " MB " in shown.output.splitlines()[1] and "index folder" in shown.output
    assert "embedding cache" in shown.output
