"""The formats indexer reads: one table from a format's name to its `Reader` (the file
extensions that are it, how a file is read, sampled and capped, the library it needs).

A new format is one module of `loaders/` defining its `Reader`, and one entry here;
discovery, loading, language sampling and the size caps all read this table."""

from __future__ import annotations

from .delimited import CSV
from .epub import EPUB
from .notebook import IPYNB
from .pdffile import PDF
from .plain import CODE, HTML, MARKDOWN, TEXT
from .reader import Reader
from .sheets import XLSX
from .slides import PPTX
from .word import DOCX

READERS: tuple[Reader, ...] = (
    MARKDOWN,
    TEXT,
    HTML,
    CODE,
    PDF,
    DOCX,
    PPTX,
    XLSX,
    CSV,
    EPUB,
    IPYNB,
)
BY_NAME = {r.name: r for r in READERS}
BY_EXTENSION = {ext: r.name for r in READERS for ext in r.extensions}


def reader_of(fmt: str) -> Reader:
    """The reader of a format (`docx`); KeyError for a format no reader has."""
    return BY_NAME[fmt]


def stored_format(fmt: str | None) -> str:
    """The format of the text a format's documents hold: Markdown for every extracted
    text (HTML, PDF, Office, EPUB, notebooks), else the format itself (plain text and
    unknown kinds: text)."""
    reader = BY_NAME.get(fmt or "")
    if reader is None:
        return "text"
    return "markdown" if reader.extracted else reader.name
