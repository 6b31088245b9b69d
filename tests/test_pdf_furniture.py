"""Running headers, footers and page numbers are dropped; the body of a page never is.

Invoices, forms, statements and slide decks repeat their layout on every page: the same
labels at the same places, numbers that differ from page to page. Every line that
differs between pages must come back, and so must a line that is the same on every page
but sits in the body; a running title, `Sayfa 3 / 12`, a bare page number and a
confidentiality footer must not (tests/pdf_documents.py draws them; issue 22).
"""

from __future__ import annotations

import pytest

from indexer.chunkers import parse_strategy
from indexer.loaders import discover, load_documents
from indexer.loaders.pdf import extract_pdf
from indexer.loaders.pdf.furniture import EdgeText, same_but_page_number
from tests import pdf_documents as docs


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("make", [docs.invoice_pdf, docs.chapters_pdf, docs.letterhead_invoice_pdf, docs.form_pdf,
                                  docs.statement_pdf, docs.slides_pdf], ids=lambda f: f.__name__)
def test_every_body_line_is_kept_and_furniture_dropped(make, tmp_path):
    path = tmp_path / "doc.pdf"
    drawn = make(path)
    text = _flat(extract_pdf(path).text)
    for page in drawn.body:
        for line in page:
            assert _flat(line) in text
    for line in {line for page in drawn.body for line in page}:  # a line on every page is kept on every page
        assert text.count(_flat(line)) >= sum(line in page for page in drawn.body), line
    for furniture in drawn.furniture:
        assert furniture not in text


def test_the_issues_invoices_keep_every_number(tmp_path):
    path = tmp_path / "fatura.pdf"
    docs.invoice_pdf(path)
    assert extract_pdf(path).text == "".join(
        f"# Fatura 100{i}\n\nMusteri {i}: toplam tutar {1250 * i} TL, vade {15 * i} gun. Odeme havale ile yapilir.\n"
        + ("\n" if i < 5 else "") for i in range(1, 6)
    )


def test_pages_that_differ_only_in_digits_are_a_document_not_furniture(tmp_path):
    """The issue's 3-page PDF was skipped whole as "no text but running headers"."""
    root = tmp_path / "docs"
    root.mkdir()
    drawn = docs.chapters_pdf(root / "bolumler.pdf")
    found, [doc] = load_documents([root])
    assert not found.skipped
    assert [s.heading_path[-1] for s in doc.sections] == [page[0] for page in drawn.body]
    assert [doc.page_at(doc.text.index(page[1])) for page in drawn.body] == [1, 2, 3]


def _note_pdf(path, note_y: float, note_size: float) -> None:
    """Four pages of text ending at the same height, a note under it that is the same on
    every page, and a page footer."""
    sheet = docs.Sheet(path)
    for n in range(1, 5):
        for k in range(5):
            sheet.text(72, 660 + 12 * k, f"Kalem {k + 1}: sipariş {n * 10 + k} adet, birim fiyat {n * 7 + k},50 TL.")
        sheet.text(72, note_y, "Ödeme havale ile yapılır.", note_size)
        sheet.text(297.5, 806, f"Sayfa {n} / 4", 8, align="centre")
        sheet.page()
    sheet.save()


def test_a_repeated_line_glued_to_the_body_is_body_even_in_the_footer_band(tmp_path):
    path = tmp_path / "not.pdf"
    _note_pdf(path, note_y=720, note_size=10)  # one line's step below the last item
    text = extract_pdf(path).text
    assert text.count("Ödeme havale ile yapılır.") == 4 and "Sayfa" not in text


def test_the_same_line_set_apart_at_the_page_foot_is_a_footer(tmp_path):
    path = tmp_path / "altbilgi.pdf"
    _note_pdf(path, note_y=790, note_size=8)  # a blank space below the body, in a small font
    text = extract_pdf(path).text
    assert "Ödeme havale" not in text and "Sayfa" not in text
    assert text.count("Kalem 5:") == 4


@pytest.mark.parametrize(("numbers", "pages", "kept"), [
    ([(3, 12), (4, 12), (5, 12), (6, 12)], [0, 1, 2, 3], 4),  # "Sayfa 3 / 12": the page number moves
    ([(2025,), (2025,), (2025,)], [0, 1, 2], 3),  # "Politika 2025": nothing moves
    ([(1001,), (1002,), (1003,)], [0, 1, 2], 0),  # "Fatura 1001": grows with the page, but no page number
    ([(1, 1250, 15), (2, 2500, 30), (3, 3750, 45)], [0, 1, 2], 0),  # amounts and terms: several numbers move
    ([(7,), (9,), (4,)], [0, 1, 2], 0),  # a number that does not follow the pages
])
def test_the_same_text_but_for_a_page_number(numbers, pages, kept):
    seen = [EdgeText(p, nums, []) for p, nums in zip(pages, numbers)]
    assert len(same_but_page_number(seen, n_pages=len(pages) + 9)) == kept


def test_a_long_manual_keeps_the_bold_heading_of_every_page(tmp_path):
    """One bold numbered heading at the top of every page, at the same place, its number
    that of the page: 2,000 of them were dropped as running headers (issue 22). The
    60-page version here; bench/pdf_compare.py --long times the 2,000-page one."""
    root = tmp_path / "kilavuz"
    root.mkdir()
    drawn = docs.manual_pdf(root / "kilavuz.pdf", 60)
    [doc] = load_documents([root])[1]
    headings = [line[2:] for line in doc.text.splitlines() if line.startswith("# ")]
    assert headings == drawn.headings
    assert [doc.page_at(doc.text.index("# " + h)) for h in drawn.headings] == list(range(1, 61))
    flat = _flat(doc.text)
    assert all(_flat(line) in flat for page in drawn.body for line in page)
    assert not any(f in doc.text for f in drawn.furniture)
    sections = parse_strategy("headers").create().chunk(doc)
    assert len({c.heading_path for c in sections}) == 60
    assert discover([root]).files[0].doc_id == "kilavuz.pdf"
