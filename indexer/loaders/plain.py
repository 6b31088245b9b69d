"""The formats read from their own text: Markdown, plain text (and reStructuredText),
HTML and source code. The file is decoded (`decoding`), and the Document's offsets
index that text (HTML: the Markdown-shaped text made from it)."""

from __future__ import annotations

from ..types import Document
from .decoding import read_text
from .documents import make_document
from .reader import Reader, SourceFile
from .skips import SkipFile


def load(source: SourceFile, encoding: str | None = None) -> Document:
    """A text file's Document; SkipFile with the reason on bad input."""
    text, warning, newline = read_text(source.path, encoding)
    doc = make_document(
        source.doc_id,
        text,
        source.format,
        language=source.language,
        source_path=str(source.path),
        warnings=[warning] if warning else [],
    )
    if not doc.text.strip():
        raise SkipFile("HTML page without visible text")
    doc.newline = newline
    return doc


def sample(source: SourceFile, encoding: str | None = None) -> str:
    """The file's decoded text ("" when it cannot be read)."""
    try:
        return read_text(source.path, encoding)[0]
    except SkipFile:
        return ""


def _reader(name: str, extensions: tuple[str, ...]) -> Reader:
    # HTML is sampled as the text made from it: its markup (styles, scripts, menus) would
    # outweigh the prose a language is told by
    html = name == "html"
    return Reader(
        name=name, extensions=extensions, load=load, sample=None if html else sample, extracted=html
    )


MARKDOWN = _reader("markdown", (".md", ".markdown", ".mdown", ".mkd", ".mdx"))
TEXT = _reader("text", (".txt", ".text", ".rst"))
HTML = _reader("html", (".html", ".htm", ".xhtml"))
# code files are told by `formats.CODE_LANGUAGES`, which also gives their language
CODE = _reader("code", ())
