"""Word, PowerPoint, Excel, CSV/TSV, EPUB and Jupyter notebooks read from real public
documents (tests/data/formats, see its README): the registry every door reads, what each
loader keeps (headings, tables with their header row, notes, sheets, chapters, cells),
the marks that give each chunk its location, exact slices for every strategy, and the
one-line reasons for damaged, protected and unreadable files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from indexer.chunkers import parse_strategy
from indexer.embeddings import get_embedder
from indexer.loaders import SkipFile, discover, load_documents, load_file, registry
from indexer.loaders.decoding import decode
from indexer.loaders.delimited import decode_table
from indexer.loaders.formats import format_of
from indexer.loaders.reader import Reader
from indexer.types import Document, Mark, marks_label
from tests.conftest import ROOT
from tests.test_chunkers import ALL

FOLDER = ROOT / "tests" / "data" / "formats"
KINDS = {"docx", "pptx", "xlsx", "csv", "epub", "ipynb"}


@pytest.fixture(scope="module")
def docs():
    found, loaded = load_documents([FOLDER])
    docs = {d.doc_id: d for d in loaded}
    assert not found.skipped and not found.unsupported
    return docs


def paths(doc) -> list[str]:
    return [s.path for s in doc.sections]


def test_a_real_folder_of_every_format_loads_with_nothing_skipped(docs):
    found = discover([FOLDER])
    assert {f.format for f in found.files} == KINDS
    assert len(docs) == len(found.files) == 19  # README.md and LICENSES/ are ignored
    assert all(d.format == "markdown" and d.newline == "" for d in docs.values())


def test_the_registry_is_one_table_from_format_to_reader():
    for reader in registry.READERS:
        for ext in reader.extensions:
            assert format_of(f"name{ext}") == (reader.name, "")
            assert format_of(f"NAME{ext.upper()}")[0] == reader.name
    assert format_of("app.py") == ("code", "python") and format_of("deck.pptm") == (None, "")
    assert registry.stored_format("docx") == "markdown" and registry.stored_format("text") == "text"
    assert registry.stored_format("code") == "code" and registry.stored_format(None) == "text"


def test_a_new_format_is_one_reader_in_the_table(monkeypatch, write_files):
    """Discovery, loading and the caps all read the table: one entry makes a format."""
    from indexer.loaders.documents import extracted_document

    def load(source, encoding):
        rows = source.path.read_text().split()
        return extracted_document(source.doc_id, "\n\n".join(rows), source_path="", title="")

    fake = Reader(name="words", extensions=(".words",), load=load)
    monkeypatch.setitem(registry.BY_NAME, "words", fake)
    monkeypatch.setitem(registry.BY_EXTENSION, ".words", "words")
    root = write_files({"a.words": "alpha beta", "b.md": "# B\n"})
    [doc] = [d for d in load_documents([root])[1] if d.doc_id == "a.words"]
    assert doc.text == "alpha\n\nbeta" and doc.title == "a"


def test_word_headings_lists_tables_comments_and_headers_once(docs):
    test = docs["word/test.docx"]
    assert test.text == "# python-docx was here!\n\npython-docx was here too!\n"
    assert paths(test) == ["test › python-docx was here!"]
    table = docs["word/blk-paras-and-tables.docx"]
    assert "| Text before Text after |\n| --- |" in table.text  # a table with its header row
    at = table.text.index("| Text before")
    assert table.mark_at(at) == "table 2 row 1" and table.mark_at(len(table.text) - 2) == ""
    assert docs["word/num-having-numbering-part.docx"].text == "- Paragraph having List Number style.\n"
    comments = docs["word/comments-rich-para.docx"]
    assert "# Comments\n\nText with hyperlink https://google.com embedded." in comments.text
    assert "comments-rich-para › Comments" in paths(comments)
    assert comments.mark_at(comments.text.index("Text with character style")) == "comment 2"
    headers = docs["word/doc-add-section.docx"]
    assert headers.text.count("Primary (Odd-Page) Header content") == 1  # once, not per page
    assert "Even Page Footer content" in headers.text and "doc-add-section › Headers and footers" in paths(headers)


def test_slides_are_sections_titled_by_their_titles_with_tables_charts_and_notes(docs):
    deck = docs["slides/test.pptx"]
    assert deck.text == "# Presentation Title Text\n\n- Subtitle Text\n"
    assert paths(deck) == ["test › Presentation Title Text"] and deck.title == "test"  # not "Presentation"
    tables = docs["slides/tbl-cell.pptx"]
    assert paths(tables) == [f"tbl-cell › Slide {n}" for n in (1, 2, 3)]  # untitled slides
    assert "| a | b | c |\n| --- | --- | --- |\n| d | e | f |" in tables.text
    assert tables.mark_at(tables.text.index("unladen swallows")) == "slide 1"
    assert tables.mark_at(tables.text.index("| d | e | f |")) == "slide 3"
    charts = docs["slides/cht-chart-props.pptx"]
    assert "Chart: On The Radar" in charts.text and "Chart: Explicit Chart Title" in charts.text
    notes = docs["slides/sld-notes.pptx"]
    assert notes.text.startswith("# Slide 1\n\nNotes: Notes\n")  # the notes under their slide
    shapes = docs["slides/test_slides.pptx"]
    assert shapes.title == "python-pptx was here!"
    assert "| Col head 1 | Col head 2 |\n| --- | --- |\n| Cell text 1 | Cell text 2 |" in shapes.text
    assert "Group test text" in shapes.text  # a group's shapes are read


def test_a_workbook_is_a_section_per_sheet_with_its_header_row_and_row_marks(docs):
    book = docs["sheets/sheets.xlsx"]
    assert book.title == "Use Case description & register"
    assert paths(book) == [f"{book.title} › Реестр", f"{book.title} › Вариант использования"]
    assert "| № | URL | Название | Вер. | Сост. | Аналитик | Заказчик |\n| --- |" in book.text
    cell = book.text.index("Какой сценарий является родительским")
    assert book.mark_at(cell) == "Вариант использования row 6"  # C6, as openpyxl names it
    empty = docs["sheets/last-column-empty.xlsx"]  # an empty last column is left out
    assert empty.text.split("\n")[2:5] == ["| A | B | C |", "| --- | --- | --- |", "| stuff | more stuff |  |"]


def test_a_sheet_that_declares_a_smaller_size_than_it_has_is_read_whole(tmp_path):
    """Some programs write `<dimension ref="A1"/>` whatever a sheet holds; a read-only
    openpyxl sheet believed it and the workbook lost every cell but one (a trial)."""
    import re

    original = ROOT / "tests/data/formats/sheets/sheets.xlsx"
    lying = tmp_path / "lying.xlsx"
    with zipfile.ZipFile(original) as src, zipfile.ZipFile(lying, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("xl/worksheets/sheet"):
                data = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1"/>', data)
            dst.writestr(info, data)
    whole = load_file(discover([original]).files[0])
    read = load_file(discover([lying]).files[0])
    assert read.text == whole.text and "Какой сценарий является родительским" in read.text


def test_a_big_sheet_is_cut_between_rows_never_inside_one(tmp_path):
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Orders"
    sheet.append(["order", "customer", "note"])
    for n in range(1, 1501):
        sheet.append([f"ORD-{n:05d}", f"customer {n}", "delivered on time, signed by the front desk"])
    book.save(tmp_path / "orders.xlsx")
    [doc] = load_documents([tmp_path])[1]
    chunks = parse_strategy("blocks").create().chunk(doc)
    rows = [c for c in chunks if c.kind == "table"]
    assert len(rows) > 5
    for c in rows:
        assert doc.text[c.start:c.end] == c.text
        lines = c.text.split("\n")
        lines = lines[2:] if lines[0] == "# Orders" else lines  # the sheet's heading
        assert all(line.startswith("| ") and line.endswith(" |") for line in lines)
        assert "| order | customer | note |" in c.header or lines[0] == "| order | customer | note |"
        last = int(lines[-1][6:11]) + 1  # ORD-00001 is row 2
        first = 1 if lines[0] == "| order | customer | note |" else int(lines[0][6:11]) + 1
        assert c.location == f"Orders row {first}-{last}"


def test_a_shift_jis_csv_comes_out_as_japanese(docs):
    data = (FOLDER / "sheets" / "todofuken-sjis.csv").read_bytes()
    with pytest.raises(SkipFile):  # the text files' rule: UTF-8, else Windows-1254
        decode(data)
    text, warning = decode_table(data, None)
    assert text.startswith("コード,都道府県,県庁所在地,地方\nJP-01,北海道,札幌市,北海道地方\n")
    assert "cp932" in warning
    doc = docs["sheets/todofuken-sjis.csv"]
    assert doc.text.startswith("| コード | 都道府県 | 県庁所在地 | 地方 |\n| --- | --- | --- | --- |\n| JP-01 | 北海道 |")
    assert doc.mark_at(doc.text.index("那覇市")) == "row 48" and doc.warnings == [warning]
    assert docs["sheets/utf8.csv"].warnings == []  # UTF-8 needs no guess


def test_a_tsv_and_an_explicit_encoding(write_files):
    root = write_files({"t.tsv": "code\tname\nA-1\tone, with a comma\n",
                        "latin.csv": "name;city\nJosé;Málaga\n".encode("latin-1")})
    docs = {d.doc_id: d for d in load_documents([root], encoding="latin-1")[1]}
    assert docs["t.tsv"].text == "| code | name |\n| --- | --- |\n| A-1 | one, with a comma |\n"
    assert docs["latin.csv"].text == "| name | city |\n| --- | --- |\n| José | Málaga |\n"


def test_an_epub_is_its_chapters_in_spine_order_under_the_book_title(docs):
    book = docs["books/war-of-the-worlds.epub"]
    assert book.title == "The War of the Worlds" and book.text.startswith("# The War of the Worlds\n")
    title = "The War of the Worlds › The Coming of the Martians"
    chapters = [p for p in paths(book) if p.startswith(title + " › Chapter") and p.count(" › ") == 2]
    assert chapters == [f"{title} › Chapter {n} {name}" for n, name in
                        ((1, "The Eve of the War"), (2, "The Falling Star"), (3, "On Horsell Common"))]
    assert book.mark_at(book.text.index("No one would have believed")) == "main2.xml"
    assert book.text.index("The Eve of the War") < book.text.index("The Falling Star")


def test_an_epub_with_encrypted_chapters_is_skipped(tmp_path):
    src = zipfile.ZipFile(FOLDER / "books" / "war-of-the-worlds.epub")
    with zipfile.ZipFile(tmp_path / "drm.epub", "w") as out:
        for item in src.infolist():
            out.writestr(item, src.read(item.filename))
        out.writestr("META-INF/encryption.xml", '<encryption><CipherReference URI="OPS/main2.xml"/></encryption>')
    found, docs = load_documents([tmp_path])
    assert list(docs) == [] and found.skipped[0].reason.startswith("its chapters are encrypted (DRM)")


def test_a_notebook_is_markdown_cells_and_fenced_code_with_searchable_outputs(docs):
    nb = docs["notebooks/test4.ipynb"]
    assert paths(nb)[:2] == ["test4 › nbconvert latex test", "test4 › nbconvert latex test › Printed Using Python"]
    assert '```python\nfrom __future__ import annotations\n\nprint("hello")\n```\n\n```output\nhello\n```' in nb.text
    assert "IPython.core.display.HTML at 0x" not in nb.text  # a bare object repr is no text
    assert nb.mark_at(nb.text.index('print("hello")')) == "cell 4"  # three Markdown cells before it
    real = docs["notebooks/density_relevance.ipynb"]
    assert "density_relevance › Density based retrieval relevance › Preliminaries" in paths(real)
    assert "image/png" not in real.text and "iVBOR" not in real.text  # pictures are left out


SAMPLES = ["word/comments-rich-para.docx", "slides/tbl-cell.pptx", "sheets/sheets.xlsx",
           "sheets/todofuken-sjis.csv", "notebooks/test4.ipynb", "books/war-of-the-worlds.epub"]


@pytest.mark.parametrize("strategy", ALL)
def test_every_strategy_cuts_exact_slices_that_carry_their_location(strategy, docs):
    spec = parse_strategy(strategy.rstrip(":"))
    chunker = spec.create(embedder=get_embedder() if spec.uses_embedder else None)
    for doc_id in SAMPLES:
        doc = docs[doc_id]
        chunks = chunker.chunk(doc)
        assert chunks, doc_id
        for c in chunks:
            assert doc.text[c.start:c.end] == c.text
            assert c.location == doc.location(c.start, c.end)
        if not doc_id.startswith("word/"):
            # every chunk but a sheet's or slide's heading alone lies somewhere
            assert all(c.location for c in chunks if c.start > 30 and "\n" in c.text.strip()), doc_id


def test_locations_join_the_marks_at_both_ends():
    assert marks_label("slide 3", "slide 3") == "slide 3"
    assert marks_label("slide 3", "slide 4") == "slide 3-4"
    assert marks_label("Sales row 2", "Sales row 40") == "Sales row 2-40"
    assert marks_label("Sales row 40", "Totals row 2") == "Sales row 40 – Totals row 2"
    assert marks_label("", "table 2 row 1") == "table 2 row 1" and marks_label("", "") == ""
    doc = Document(doc_id="d.xlsx", text="# S\n\n| a |\n| 1 |\n", title="d", format="markdown",
                   marks=[Mark(5, "S row 1"), Mark(11, "S row 2")])
    assert doc.location(0, 10) == "S row 1" and doc.location(0, 16) == "S row 1-2"  # from the heading
    assert doc.location(11, 16) == "S row 2" and doc.location(0, 3) == ""


@pytest.mark.parametrize("name", ["report.docx", "deck.pptx", "book.xlsx"])
def test_a_damaged_or_protected_office_file_is_skipped_with_one_line(name, tmp_path):
    good = {"docx": "word/test.docx", "pptx": "slides/test.pptx", "xlsx": "sheets/utf8.xlsx"}
    data = (FOLDER / good[name.rsplit(".", 1)[1]]).read_bytes()
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / name).write_bytes(data[: len(data) // 2])  # cut short: a damaged zip
    (folder / f"locked-{name}").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600))
    found, docs = load_documents([folder])
    assert list(docs) == []
    reasons = {s.doc_id: s.reason for s in found.skipped}
    assert reasons[name].startswith(f"damaged or not a real .{name.rsplit('.', 1)[1]} file")
    assert reasons[f"locked-{name}"].startswith("password-protected (encrypted)")
    assert all("\n" not in r for r in reasons.values())


def test_a_missing_library_is_named_with_what_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pptx" else real(name, *a))
    found = discover([FOLDER / "slides"])
    with pytest.raises(SkipFile, match=r"^reading \.pptx files needs python-pptx, which is not installed: "
                                       r"pip install 'python-pptx>=1.0,<2'$"):
        load_file(found.files[0])


def test_office_files_are_capped_by_their_text_not_their_pictures(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    src = zipfile.ZipFile(FOLDER / "word" / "test.docx")
    with zipfile.ZipFile(folder / "photos.docx", "w") as out:
        for item in src.infolist():
            out.writestr(item, src.read(item.filename))
        out.writestr("word/media/photo.jpeg", bytes(300_000), compress_type=zipfile.ZIP_STORED)
    assert [f.doc_id for f in discover([folder], max_file_size=200_000).files] == ["photos.docx"]
    [skipped] = discover([folder], max_file_size=4_000).skipped
    assert skipped.reason.startswith("its text parts are over the size cap (")
    assert Path(folder / "photos.docx").stat().st_size > 300_000


def test_a_small_office_file_that_unpacks_past_the_cap_is_skipped_in_one_line(tmp_path):
    """A zip bomb: a .docx of a few KB whose document.xml unpacks to far more than
    --max-file-size is skipped before any parser holds it in memory; a normal one is read."""
    import docx
    from click.testing import CliRunner

    from indexer.cli import cli

    folder = tmp_path / "in"
    folder.mkdir()
    word = docx.Document()
    for _ in range(4_000):
        word.add_paragraph("All work and no play makes Jack a dull boy. " * 4)
    word.save(folder / "bomb.docx")
    (folder / "report.docx").write_bytes((FOLDER / "word" / "test.docx").read_bytes())
    with zipfile.ZipFile(folder / "bomb.docx") as z:
        xml = z.getinfo("word/document.xml").file_size
    assert xml > 600_000 and (folder / "bomb.docx").stat().st_size < 150_000
    done = CliRunner().invoke(cli, ["build", str(folder), "-s", "headers", "--db", str(tmp_path / "db"),
                                    "--max-file-size", "300KB"])
    assert done.exit_code == 0, done.output
    skipped = [line for line in done.output.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == 1 and skipped[0].startswith(
        "skipped bomb.docx: its text parts are over the size cap ("), done.output
    assert "KB unpacked > 300 KB" in skipped[0] and skipped[0].endswith("raise --max-file-size to include it")
    assert done.stdout.splitlines()[1].split()[2] == "1"  # report.docx was read and built
