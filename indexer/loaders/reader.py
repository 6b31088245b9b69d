"""What the registry lists for each format: a `Reader` (its extensions, the function that
reads a file into a Document, what caps it, the library it needs), and the records every
reader takes: the discovered `SourceFile` and discovery's `Limits`."""

from __future__ import annotations

import importlib.util
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..types import Document
from .skips import SkipFile


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path
    doc_id: str
    size: int
    format: str
    language: str = ""


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps discovery applies: bytes for most files, pages for a PDF."""

    file_size: int
    pdf_pages: int


Load = Callable[[SourceFile, "str | None"], Document]
Sample = Callable[[SourceFile, "str | None"], str]
OverCap = Callable[[Path, int, Limits], str]


def size_label(size: int, cap: int) -> tuple[str, str]:
    """A file size and the cap in the cap's unit, precise enough to tell them apart
    (a 256 KB cap is not "0.2 MB", and 5.01 MB is not "5.0 MB > 5.0 MB")."""
    formats = [lambda n: f"{n:,} bytes"]
    if cap >= 1024:
        formats.insert(0, lambda n: f"{n / 1024:,.0f} KB")
    if cap >= 1024 * 1024:
        formats.insert(0, lambda n: f"{n / 1024 / 1024:,.1f} MB")
    for fmt in formats:
        a, b = fmt(size), fmt(cap)
        if a != b:
            return a, b
    return a, b


def size_cap(path: Path, size: int, limits: Limits) -> str:
    """Why a file is over the byte cap ("" when it is not)."""
    if size <= limits.file_size:
        return ""
    shown = size_label(size, limits.file_size)
    return "over the size cap ({} > {}); raise --max-file-size to include it".format(*shown)


_TEXT_PARTS = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx")


def zipped_text_cap(path: Path, size: int, limits: Limits) -> str:
    """Why a zipped document (Office, EPUB) is over the byte cap: the cap counts its text
    parts unpacked (what the parser holds in memory: 200 KB on disk can unpack to 50 MB of
    XML), not its pictures and media, which are not read."""
    try:
        with zipfile.ZipFile(path) as z:
            parts = z.infolist()
    except (OSError, zipfile.BadZipFile):
        return ""  # reading it says what is wrong
    # the sizes the zip declares bound what is read: a part that unpacks to more fails
    text = sum(i.file_size for i in parts if i.filename.lower().endswith(_TEXT_PARTS))
    if text <= limits.file_size:
        return ""
    shown = size_label(text, limits.file_size)
    return (
        "its text parts are over the size cap ({} unpacked > {}, pictures and media not "
        "counted); raise --max-file-size to include it".format(*shown)
    )


@dataclass(frozen=True, kw_only=True)
class Reader:
    """One format: its name, the file extensions that are it, how a file is read
    (`load(source, encoding)`; `SkipFile` with the reason on bad input), a cheap sample of
    its text (None: the loaded text's start), what caps it, and the library it needs
    (`requires`, an import name) with the requirement to install (`install`)."""

    name: str
    extensions: tuple[str, ...]
    load: Load
    sample: Sample | None = None
    over_cap: OverCap = size_cap
    requires: str = ""
    install: str = ""
    extracted: bool = True  # its text is extracted Markdown, not the file's own bytes
    # a parser's error means a damaged file (a third-party parser's errors are many and
    # undocumented); False: an error is a bug of ours and is raised
    parsed: bool = False

    def missing(self) -> str:
        """The one-line reason a file of this format cannot be read here ("" when it can)."""
        if not self.requires or importlib.util.find_spec(self.requires) is not None:
            return ""
        return (
            f"reading .{self.name} files needs {self.install.split('>')[0]}, which is not "
            f"installed: pip install '{self.install}'"
        )

    def read(self, source: SourceFile, encoding: str | None) -> Document:
        """The document of a file; a library missing, a damaged or protected file: SkipFile."""
        missing = self.missing()
        if missing:
            raise SkipFile(missing)
        if not self.parsed:
            return self.load(source, encoding)
        try:
            return self.load(source, encoding)
        except (SkipFile, MemoryError):
            raise
        except Exception as exc:  # a third-party parser's error on a damaged file
            raise SkipFile(damaged(self.name, exc)) from None

    def text_sample(self, source: SourceFile, encoding: str | None) -> str:
        """Some of the file's text, cheaply; "" when it cannot be read."""
        try:
            if self.sample is not None:
                return self.sample(source, encoding)
            return self.read(source, encoding).text[:20_000]
        except SkipFile:
            return ""


def damaged(fmt: str, exc: BaseException) -> str:
    """The reason a file that fails to parse is skipped."""
    detail = str(exc).splitlines()[0][:160] if str(exc) else ""
    what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return f"damaged or not a real .{fmt} file ({what}); open and re-save it to index it"


_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def check_zip(path: Path, fmt: str) -> None:
    """Refuse what is not a zip package: an encrypted Office file (its package is inside
    an OLE container) or an old binary one; anything else is damaged."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head == _OLE:
        raise SkipFile(
            f"password-protected (encrypted), or an old binary Office file renamed .{fmt}; "
            f"save an unprotected copy as .{fmt} to index it"
        )
    if not zipfile.is_zipfile(path):
        raise SkipFile(f"damaged or not a real .{fmt} file (not a zip package)")
