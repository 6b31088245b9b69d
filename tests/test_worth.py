"""A build measures its embedder on the collection it made (`retrieval.worth`): the
measurement is stored with the calibration, shown by `list`, serve and MCP, narrows the
embedding share where the embedder cannot read the collection, and gives way to `tune --save`."""

from __future__ import annotations

import json
import random
import shutil

import pytest
from click.testing import CliRunner

from indexer.agents.server import Tools
from indexer.cli import cli
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.retrieval import Index
from indexer.retrieval.fusion import by_kind
from indexer.retrieval.worth import FLOOR, factor, share
from indexer.serve.library import Library
from indexer.settings import Settings
from tests.conftest import open_store

GEORGIAN = [chr(c) for c in range(0x10D0, 0x10F1)]  # a script use-m3 has no vocabulary for


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def listed(db) -> dict[str, dict]:
    out = run("list", "--db", db, "--json")
    assert out.exit_code == 0, out.output
    return {r["strategy"]: r for r in map(json.loads, out.output.splitlines())}


@pytest.fixture(scope="module")
def unreadable(tmp_path_factory):
    """30 notes in Georgian letters: BM25 tells their words apart, the embedder reads
    every one as unknown pieces, so its vectors cannot tell the notes apart. With a
    question set of phrases taken from the notes."""
    base = tmp_path_factory.mktemp("ka")
    rng = random.Random(7)
    vocab = sorted({"".join(rng.choices(GEORGIAN, k=rng.randint(4, 8))) for _ in range(900)})
    questions = []
    for d in range(30):
        words = [rng.choice(vocab) for _ in range(30)]
        (base / "notes").mkdir(exist_ok=True)
        (base / "notes" / f"note{d:02d}.txt").write_text(" ".join(words) + ".\n", encoding="utf-8")
        phrase = " ".join(words[10:14])
        questions.append({"id": f"q{d}", "question": phrase, "doc_id": f"note{d:02d}.txt", "answer": phrase})
    (base / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    db = base / "db"
    build([base / "notes"], ["headers"], settings=Settings.load(db=db))
    return db, base / "questions.jsonl"


def test_the_share_factor_keeps_a_readable_collection_whole_and_narrows_to_a_floor():
    assert share(0.8, 0.65) == share(0.65, 0.65) == 1.0
    assert share(0.39, 0.65) == 0.6 and share(0.05, 0.65) == FLOOR
    assert share(0.1, None) == 1.0  # no reference for this embedder and kind: nothing narrowed
    assert factor("e5-small", "prose", {"ratio": 0.55}) == 1.0  # the lowest of e5's fitting sets
    assert factor("e5-small", "prose", {"ratio": 0.3}) == 0.6
    assert factor("e5-small", "code", {"ratio": 0.3}) == 1.0  # no e5 code reference yet


def test_a_build_stores_what_it_measured_and_list_shows_it(built_db):
    db, _ = built_db
    rows = listed(db)
    for strategy in ("headers", "fixed64"):
        row = rows[strategy]
        stored = row["extra"]["fusion"]["measured"]
        assert stored["probes"] >= 20 and 0 < stored["embedding_mrr"] <= 1 and stored["bm25_mrr"] > 0.9
        assert stored["ratio"] == pytest.approx(stored["embedding_mrr"] / stored["bm25_mrr"], abs=0.002)
        assert row["measured"] == {**stored, "factor": 1.0}  # use-m3 reads the Turkish corpus as the fit sets
        assert row["search"] == "hybrid adaptive 0.05-0.5 by coverage 0.3-0.6" and row["tuned"] is False
    table = run("list", "--db", db).output.splitlines()
    ratio = rows["headers"]["measured"]["ratio"]
    assert table[0].split()[8] == "emb/bm25" and f" {ratio:.2f} x1 " in next(x for x in table if x.startswith("headers"))


def test_a_collection_the_embedder_cannot_read_gets_a_narrower_embedding_share(unreadable, built_db):
    db, _ = unreadable
    weak, bundled = listed(db)["headers"], listed(built_db[0])["headers"]
    assert weak["measured"]["ratio"] < 0.3 < bundled["measured"]["ratio"]
    assert weak["measured"]["factor"] < 1 == bundled["measured"]["factor"]
    kind = by_kind("use-m3", "prose", "en")[0]
    narrowed = tuple(round(a * weak["measured"]["factor"], 3) for a in kind)
    assert narrowed[1] < kind[1]
    # what the search uses, not only what is shown
    assert Index.open("headers", settings=Settings.load(db=db)).options().alpha_range == narrowed
    assert weak["search"] == (f"hybrid adaptive {narrowed[0]:g}-{narrowed[1]:g} by coverage 0.3-0.6 "
                              f"(embedding share x{weak['measured']['factor']:g}: measured weak here)")
    # serve and MCP describe it the same way
    library = Library(Settings.load(db=db))
    shown = library.describe(library.names()["headers"])
    assert shown["search"] == weak["search"] and shown["measured"] == weak["measured"]
    mcp = Tools(Settings.load(db=db)).list_collections()["collections"][0]
    assert mcp["search"] == weak["search"] and mcp["measured"] == weak["measured"]


def test_tune_save_overrides_the_measured_share_and_outlives_a_rebuild(unreadable, tmp_path):
    src, questions = unreadable
    db = tmp_path / "db"
    shutil.copytree(src, db)
    open_store(db).catalogue.save_search("headers", "use-m3", {"mode": "embedding"})  # a poor earlier choice
    out = run("tune", questions, "-s", "headers", "--db", db, "--save", "-q")
    assert out.exit_code == 0, out.output
    assert "saved as the default search of headers (use-m3)" in out.output
    index = Index.open("headers", settings=Settings.load(db=db))
    tuned = index.options().describe()
    assert index.saved and tuned != "embedding"
    row = listed(db)["headers"]
    assert row["search"] == tuned and row["tuned"] and row["measured"]["factor"] < 1
    # measured again; the saved choice stays
    build([src.parent / "notes"], ["headers"], BuildOptions(full=True), settings=Settings.load(db=db))
    again = listed(db)["headers"]
    assert again["search"] == tuned and again["tuned"] and again["measured"] == row["measured"]
    assert Index.open("headers", settings=Settings.load(db=db)).options().describe() == tuned
