"""The folder of real Word, PowerPoint, Excel, CSV, EPUB and notebook files through the
whole tool (tests/data/formats): built with nothing skipped; each file's distinctive
string comes first for its exact query; Word headings, sheet names, slide titles,
chapters and notebook headings are in heading paths; and each chunk's location shows in
`dump`, `query`, the web view and MCP's `get_document_span`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexer.agents.server import Tools
from indexer.cli import cli
from indexer.indexing.building import build
from indexer.retrieval import Index
from indexer.settings import Settings
from tests.test_formats import FOLDER

STRATEGY = "blocks"
# (query, the file its first hit must come from, a heading its path holds, its location)
FIRST = [
    ("Text before Text after", "word/blk-paras-and-tables.docx", "blk-paras-and-tables", "table 2 row 1"),
    ("unladen swallows", "slides/tbl-cell.pptx", "Slide 1", "slide 1"),
    ("Какой сценарий является родительским", "sheets/sheets.xlsx", "Вариант использования",
     "Вариант использования row"),
    ("JP-47", "sheets/todofuken-sjis.csv", "todofuken-sjis", "row"),
    ('print("hello")', "notebooks/test4.ipynb", "nbconvert latex test", "cell"),  # one chunk
    ("compute_percentile", "notebooks/density_relevance.ipynb", "Density based retrieval relevance", "cell"),
    ("Ogilvy the astronomer at Ottershaw", "books/war-of-the-worlds.epub", "Chapter 1 The Eve of the War",
     "main2.xml"),
    ("python-docx was here too", "word/test.docx", "python-docx was here!", ""),
    ("Presentation Title Text Subtitle Text", "slides/test.pptx", "Presentation Title Text", "slide 1"),
]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    db = tmp_path_factory.mktemp("formats") / "index"
    [report] = build([FOLDER], [STRATEGY], settings=Settings.load(db=db))
    assert report.files == 19 and not report.skipped
    return db


@pytest.mark.parametrize(("query", "doc_id", "heading", "where"), FIRST, ids=[q[1] for q in FIRST])
def test_each_files_distinctive_string_comes_first(db, query, doc_id, heading, where):
    out = run("query", query, "--db", db, "-s", STRATEGY, "-k", 3, "--json")
    assert out.exit_code == 0, out.output
    first = json.loads(out.stdout.splitlines()[0])
    assert first["doc_id"] == doc_id
    assert heading in first["heading_path"].split(" › ")
    assert first["location"].startswith(where) and (where or not first["location"])


def test_sheet_names_slide_titles_and_chapters_are_heading_paths(db):
    index = Index.open(STRATEGY, settings=Settings.load(db=db))
    paths = {c.heading_path for c in index.chunks("sheets/sheets.xlsx")}
    assert any(p.endswith("› Реестр") for p in paths) and any(p.endswith("› Вариант использования") for p in paths)
    slides = {c.heading_path for c in index.chunks("slides/tbl-cell.pptx")}
    assert "tbl-cell › Slide 1" in slides  # the deck is one chunk: its first slide's path
    book = {c.heading_path for c in index.chunks("books/war-of-the-worlds.epub")}
    assert "The War of the Worlds › The Coming of the Martians › Chapter 2 The Falling Star" in book


def test_dump_and_the_query_line_show_the_location(db):
    dump = run("dump", "--strategy", STRATEGY, "--db", db, "--doc", "sheets/todofuken-sjis.csv").stdout
    assert "(row 1-" in dump and "那覇市" in dump
    shown = run("query", "JP-47", "--db", db, "-s", STRATEGY, "-k", 1).stdout.splitlines()[0]
    assert shown.split()[2] == "sheets/todofuken-sjis.csv" and shown.split()[3] == "row"


def test_mcp_gives_the_locations_of_a_document_span(db):
    tools = Tools(Settings.load(db=db), strategy=STRATEGY)
    span = tools.get_document_span("slides/tbl-cell.pptx", 1, 40)
    assert span["locations"] and all(p.startswith("slide ") for p in span["locations"])
    assert "unladen swallows" in span["text"]
    hit = tools.search("unladen swallows", k=1)["results"][0]
    assert hit["location"].startswith("slide 1")


def test_the_web_view_lays_chunks_with_their_location(db):
    from starlette.testclient import TestClient

    from indexer.serve.app import create_app

    client = TestClient(create_app(Settings.load(db=db)), base_url="http://127.0.0.1")
    view = client.get("/api/view", params={"doc": "notebooks/test4.ipynb", "strategy": STRATEGY}).json()
    chunks = view["lanes"][0]["chunks"]
    assert all(c["location"].startswith("cell ") for c in chunks)
    assert view["text"].startswith("# nbconvert latex test")


def test_a_csv_with_a_very_wide_header_makes_an_index_linear_in_its_size(tmp_path):
    """A 3,000-column header was copied into every chunk (its unit map, its `header`): a
    1.5 MB CSV of 150,000 columns made a 9 GB index. Now a header row over the bound
    goes into a chunk cut with a mark, a row's unit goes without it, and the build names
    the file in one line; the table's text is all in the chunks, each an exact slice."""
    from indexer.loaders import load_documents
    from indexer.store.records import chunk_from_record
    from tests.conftest import raw_chroma

    folder = tmp_path / "wide"
    folder.mkdir()
    cols = 1200
    lines = [",".join(f"column{i}" for i in range(cols))]
    lines += [",".join(f"v{r}x{i}" for i in range(cols)) for r in range(2)]
    (folder / "wide.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "index"
    reports = build([folder], ["headers", "blocks"], settings=Settings.load(db=db))
    for strategy in ("headers", "blocks"):
        index = Index.open(strategy, settings=Settings.load(db=db))
        got = raw_chroma(db).collection(index.entry.collection).get(include=["metadatas"])
        chunks = [chunk_from_record(i, None, m) for i, m in zip(got["ids"], got["metadatas"])]
        assert len(chunks) > 5
        # a chunk's record: its own text plus a bounded overhead, never the whole header
        for meta in got["metadatas"]:
            assert len(json.dumps(meta, ensure_ascii=False)) < 4 * len(meta["text"]) + 4 * 2048  # text.headrows' bound
        [doc] = load_documents([folder])[1]
        assert all(doc.text[c.start : c.end] == c.text for c in chunks)
        covered = set()
        for c in chunks:
            covered.update(range(c.start, c.end))
        assert all(ch.isspace() for i, ch in enumerate(doc.text) if i not in covered)
    [warning] = reports[0].warnings
    assert warning.doc_id == "wide.csv" and "header row" in warning.reason
