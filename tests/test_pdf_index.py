"""PDFs through the whole tool: loaded as Markdown documents with a page map, chunked by
every strategy with exact slices and the right pages, built, queried (pages shown), and
evaluated on the bundled PDF sample (corpus/pdf)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner

from indexer.chunkers import parse_strategy
from indexer.cli import cli
from indexer.embeddings import get_embedder
from indexer.evaluation import evaluate
from indexer.indexing.building import build
from indexer.loaders import discover, load_documents
from indexer.loaders.pdf import extract_pdf
from indexer.retrieval import Index
from indexer.settings import Settings
from tests.conftest import CORPUS
from tests.test_chunkers import ALL
from tests.test_pdf import make_policy_pdf

SAMPLE = CORPUS / "pdf"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A 3-page policy PDF (the extraction fixture of test_pdf.py) beside a Markdown file."""
    root = tmp_path_factory.mktemp("pdfs") / "docs"
    root.mkdir()
    make_policy_pdf(root / "politika.pdf")
    (root / "not.md").write_text("# Not\n\nBu dosya PDF değil.\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def doc(folder):
    _, docs = load_documents([folder])
    return {d.doc_id: d for d in docs}["politika.pdf"]


def test_a_pdf_loads_as_a_markdown_document_with_its_pages(doc):
    assert doc.format == "markdown" and doc.title == "Kargo ve Teslimat Politikası"
    assert len(doc.pages) == 3
    assert [s.path for s in doc.sections][:3] == [
        "Kargo ve Teslimat Politikası", "Kargo ve Teslimat Politikası › Teslim Süreleri",
        "Kargo ve Teslimat Politikası › Teslim Süreleri › İstanbul İçi Gönderiler",
    ]
    assert doc.page_at(doc.text.index("Köylere")) == 2 and doc.page_at(doc.text.index("| Yurt dışı")) == 3
    assert doc.page_at(doc.text.index("## Ücret Tablosu")) == 3  # a heading's mark is on its page


@pytest.mark.parametrize("strategy", ALL)
def test_every_strategy_keeps_exact_slices_and_the_right_pages(strategy, doc):
    spec = parse_strategy(strategy.rstrip(":"))
    chunks = spec.create(embedder=get_embedder() if spec.uses_embedder else None).chunk(doc)
    assert chunks
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
        assert c.start_page == doc.page_at(c.start) and c.end_page == doc.page_at(c.end - 1)
        assert 1 <= c.start_page <= c.end_page <= 3


def test_build_and_query_show_pages(folder, tmp_path):
    db = tmp_path / "index"
    [report] = build([folder], ["blocks:target=48,hard_max=64"], settings=Settings.load(db=db))
    assert report.files == 2 and not report.skipped
    index = Index.open(report.strategy, settings=Settings.load(db=db))
    chunks = index.chunks("politika.pdf")
    assert chunks[0].start_page == 1 and chunks[-1].end_page == 3
    assert all(c.start_page == 0 for c in index.chunks("not.md"))
    table = next(c for c in chunks if "| Yurt dışı |" in c.text)
    assert (table.start_page, table.end_page) == (3, 3)
    hits = [json.loads(line) for line in run("query", "Yurt dışı teslim süresi ve ücreti", "--db", db,
                                             "--mode", "bm25", "-k", 1, "--json").stdout.splitlines()]
    assert hits[0]["doc_id"] == "politika.pdf" and (hits[0]["start_page"], hits[0]["end_page"]) == (3, 3)
    shown = run("query", "Yurt dışı teslim süresi ve ücreti", "--db", db, "--mode", "bm25", "-k", 1)
    assert shown.exit_code == 0 and shown.stdout.splitlines()[0].split()[2:4] == ["politika.pdf", "p.3"]
    dump = run("dump", "--strategy", report.strategy, "--db", db, "--doc", "politika.pdf").stdout
    assert " p.1 " in dump and " p.3 " in dump


def test_pdfs_are_capped_by_pages_not_bytes(folder):
    found = discover([folder], max_file_size=16)  # both files are over 16 bytes
    assert [f.doc_id for f in found.files] == ["politika.pdf"] and found.skipped[0].doc_id == "not.md"
    capped = discover([folder], max_pdf_pages=2)
    assert [(s.doc_id, s.reason) for s in capped.skipped] == [
        ("politika.pdf", "3 pages, over the cap of 2; raise --max-pdf-pages to include it")]
    result = run("chunk", folder, "-s", "headers", "--max-pdf-pages", 2)
    assert result.exit_code == 0
    assert "skipped politika.pdf: 3 pages, over the cap of 2; raise --max-pdf-pages to include it" in result.output
    assert run("chunk", folder, "--max-pdf-pages", 0).exit_code == 2


# -- the bundled sample ---------------------------------------------------------------------------

def _sample_script():
    spec = importlib.util.spec_from_file_location("make_sample", SAMPLE / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sample_is_small_and_made_by_its_script(tmp_path):
    pdf = SAMPLE / "personel-el-kitabi.pdf"
    assert pdf.stat().st_size < 200 * 1024
    script = _sample_script()
    expected = script.write(tmp_path / "again.pdf")
    assert extract_pdf(tmp_path / "again.pdf").text == expected == extract_pdf(pdf).text
    found = discover([SAMPLE])
    assert [f.doc_id for f in found.files] == ["personel-el-kitabi.pdf"]  # not the script (.indexerignore)
    assert "pdf" not in {f.doc_id.split("/")[0] for f in discover([CORPUS]).files}  # nor in the Turkish set


def test_the_sample_questions_resolve_and_retrieve(tmp_path):
    db = tmp_path / "index"
    build([SAMPLE], ["headers"], settings=Settings.load(db=db))
    ev = evaluate(SAMPLE / "questions.jsonl", ["headers"], ("bm25", "hybrid"), (1, 5), settings=Settings.load(db=db))
    assert len(ev.questions) >= 10
    for row in ev.rows:
        assert row.recall(5) >= 0.8 * row.n, (row.mode, row.recall(5))
