"""PDF in the registry: read through `loaders/pdf` (PDFium's text layer and the layout
pass) as Markdown-shaped text with a page map; capped by pages, not bytes."""

from __future__ import annotations

from pathlib import Path

from ..types import Document
from .documents import make_document
from .reader import Limits, Reader, SourceFile
from .skips import SkipFile


def load(source: SourceFile, encoding: str | None = None) -> Document:
    """A PDF's Document: its extracted text, title and `pages` (discovery has applied
    the page cap)."""
    from .pdf import extract_pdf

    pdf = extract_pdf(source.path, max_pages=None)
    doc = make_document(
        source.doc_id,
        pdf.text,
        "markdown",
        source_path=str(source.path),
        warnings=pdf.warnings,
        title=pdf.title,
    )
    if not doc.text.strip():
        raise SkipFile("no text but running headers, footers or page numbers")
    doc.pages = pdf.pages
    doc.newline = ""  # offsets index the extracted text, not the file's
    return doc


def sample(source: SourceFile, encoding: str | None = None) -> str:
    """The first pages' text without layout ("" when the file cannot be read)."""
    from .pdf import sample_text

    return sample_text(source.path)


def over_cap(path: Path, size: int, limits: Limits) -> str:
    """Why a PDF is over its page cap ("" when it is not, or cannot be opened: loading
    it will say why)."""
    from .pdf import over_cap as pages_over
    from .pdf import page_count

    pages = page_count(path)
    if pages is None or pages <= limits.pdf_pages:
        return ""
    return pages_over(pages, limits.pdf_pages)


PDF = Reader(name="pdf", extensions=(".pdf",), load=load, sample=sample, over_cap=over_cap)
