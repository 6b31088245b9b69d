"""Text to a Document: its title and sections from the headings the text's format has
(Markdown and HTML headings, plain text's underlined titles), and the Document of an
extracted text (Office, EPUB, notebooks) with the marks that say where each part came from."""

from __future__ import annotations

from pathlib import Path

from ..types import Document, Mark
from .html import html_to_markdown
from .markdown import Block, Heading, parse
from .sections import build_sections, page_title, plain_headings
from .skips import SkipFile

# the titles Office writes into a new file's properties: no document's own title
_DEFAULT_TITLES = {
    "presentation",
    "powerpoint presentation",
    "document",
    "workbook",
    "title",
    "untitled",
}


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


def extracted_document(
    doc_id: str,
    text: str,
    *,
    source_path: str,
    title: str = "",
    marks: list[Mark] | None = None,
) -> Document:
    """The Markdown Document of a text a loader extracted from a file, with its marks;
    offsets index the extracted text, not the file. Its title is `title`, else the file
    name (not a heading the loader wrote). SkipFile when it holds no text."""
    if not text.strip():
        raise SkipFile("no text in it (only pictures, macros or empty parts?)")
    if title.strip().lower() in _DEFAULT_TITLES:
        title = ""
    title = title or Path(doc_id).stem or doc_id
    doc = make_document(doc_id, text, "markdown", source_path=source_path, title=title)
    doc.marks = list(marks or [])
    doc.newline = ""
    return doc
