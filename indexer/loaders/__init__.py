"""Files to Documents: Markdown, plain text (and reStructuredText), HTML, PDF, source code,
Word, PowerPoint, Excel, CSV/TSV, EPUB and Jupyter notebooks (`registry` lists them)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from ..settings import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_PDF_PAGES
from ..types import Document
from .documents import make_document
from .files import Discovery, SourceFile, discover
from .registry import reader_of
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


def load_file(source: SourceFile, encoding: str | None = None) -> Document:
    """Read and parse one discovered file through its format's reader (`registry`).
    Raises SkipFile with the reason on bad input: damaged, protected, without text, or
    needing a library that is not installed (the reason says what to install)."""
    return reader_of(source.format).read(source, encoding)


def sample_text(source: SourceFile, encoding: str | None = None) -> str:
    """Some of a file's text, cheaply (a PDF's first pages without layout; "" when it
    cannot be read): what telling its language needs."""
    return reader_of(source.format).text_sample(source, encoding)


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
    found = discover(
        paths,
        include,
        exclude,
        max_file_size=max_file_size,
        skip_dirs=skip_dirs,
        max_pdf_pages=max_pdf_pages,
    )

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
