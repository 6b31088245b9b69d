"""Files to Documents: Markdown, plain text (and reStructuredText), HTML, PDF and source code."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..settings import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_PDF_PAGES
from ..types import Document
from .decoding import read_text
from .files import Discovery, SourceFile, discover
from .html import html_to_markdown
from .markdown import Block, Heading, parse
from .sections import build_sections, page_title, plain_headings
from .skips import SkipFile, Skipped

__all__ = [
    "Discovery",
    "SkipFile",
    "Skipped",
    "SourceFile",
    "discover",
    "load_file",
    "load_documents",
    "make_document",
    "sample_text",
]


def make_document(
    doc_id: str,
    text: str,
    fmt: str = "markdown",
    language: str = "",
    source_path: str = "",
    warnings: list[str] | None = None,
    title: str = "",
) -> Document:
    """Build a Document (title and sections) from already-decoded text.

    HTML is first turned into Markdown-shaped text; `<h1>`–`<h3>` give the sections.
    """
    html_title = ""
    if fmt == "html":
        text, html_title = html_to_markdown(text)
    headings, blocks = _structure(text, fmt)
    if not title:
        title = (
            doc_id
            if fmt == "code"
            else page_title(headings, html_title) or Path(doc_id).stem or doc_id
        )
    doc = Document(
        doc_id=doc_id,
        text=text,
        title=title,
        format=fmt,
        sections=build_sections(text, title, headings),
        language=language,
        source_path=source_path,
        warnings=list(warnings or []),
    )
    if blocks is not None:
        doc.derived.blocks = blocks
    return doc


def _structure(text: str, fmt: str) -> tuple[list[Heading], list[Block] | None]:
    """A text's headings, and its Markdown blocks (None but for Markdown and HTML)."""
    if fmt in ("markdown", "html"):
        return parse(text, 3 if fmt == "html" else 6)
    if fmt == "text":
        return plain_headings(text), None
    return [], None


def load_file(source: SourceFile, encoding: str | None = None) -> Document:
    """Read and parse one discovered file. Raises SkipFile with the reason on bad input.

    A PDF becomes a Markdown document of its extracted text, with its page map in
    `pages` (discovery has applied the page cap)."""
    if source.format == "pdf":
        return _load_pdf(source)
    text, warning, newline = read_text(source.path, encoding)
    doc = make_document(
        source.doc_id,
        text,
        source.format,
        source.language,
        str(source.path),
        [warning] if warning else [],
    )
    if not doc.text.strip():
        raise SkipFile("HTML page without visible text")
    doc.newline = newline
    return doc


def _load_pdf(source: SourceFile) -> Document:
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


def sample_text(source: SourceFile, encoding: str | None = None) -> str:
    """Some of a file's text, cheaply (a PDF's first pages without layout; "" when it
    cannot be read): what telling its language needs."""
    if source.format == "pdf":
        from .pdf import sample_text as pdf_sample

        return pdf_sample(source.path)
    try:
        return read_text(source.path, encoding)[0]
    except SkipFile:
        return ""


def load_documents(
    paths: Sequence[str | os.PathLike[str]],
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    skip_dirs: tuple[str | os.PathLike[str], ...] = (),
    encoding: str | None = None,
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
) -> tuple[Discovery, Iterator[Document]]:
    """Discover files, then load them lazily; files that fail to load are appended to
    `discovery.skipped` as the iterator reaches them."""
    found = discover(paths, include, exclude, max_file_size, skip_dirs, max_pdf_pages)

    def documents() -> Iterator[Document]:
        for source in found.files:
            try:
                doc = load_file(source, encoding)
            except SkipFile as exc:
                found.skipped.append(Skipped(source.doc_id, str(exc)))
                continue
            found.warnings.extend(Skipped(doc.doc_id, w) for w in doc.warnings)
            yield doc

    return found, documents()
