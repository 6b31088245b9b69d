"""CSV and TSV files: one sheet each, read as a spreadsheet's sheet is (`sheets`).

The bytes are decoded in this order: `--encoding` when given; a byte-order mark; strict
UTF-8; else the encoding charset-normalizer finds most likely (a Shift-JIS / cp932 export
comes out as Japanese, a Windows-1252 one as Western letters), named in a warning; when it
finds none, the legacy rule every text file has (`decoding`). The delimiter is a tab for
.tsv, else the one the standard library's sniffer finds among `, ; | tab` (a comma when it
cannot tell). Read: every record, the first one the header row, quoted fields with
newlines inside kept in their cell. Marks: `row N` (the record's number, the header is 1)."""

from __future__ import annotations

import csv
import io
import sys

from ..types import Document
from .assembly import TextBuilder
from .decoding import decode, normalise_newlines
from .documents import extracted_document
from .reader import Reader, SourceFile
from .sheets import add_sheet
from .skips import SkipFile

_DELIMITERS = ",;|\t"


def load(source: SourceFile, encoding: str | None = None) -> Document:
    try:
        data = source.path.read_bytes()
    except OSError as exc:
        raise SkipFile(f"unreadable ({exc.strerror or exc})") from None
    text, warning = decode_table(data, encoding)
    out = TextBuilder()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # a long quoted field is one cell
    rows = csv.reader(io.StringIO(text, newline=""), dialect=_dialect(text, source))
    note = add_sheet(out, source.path.stem, enumerate(rows, 1), heading=False)
    doc = extracted_document(
        source.doc_id, out.text(), source_path=str(source.path), marks=out.marks
    )
    doc.warnings = [w for w in (warning, note) if w]
    return doc


def decode_table(data: bytes, encoding: str | None) -> tuple[str, str | None]:
    """A table file's text and a warning (None when it was UTF-8 or named)."""
    if encoding or not data or _utf8_or_bom(data):
        text, warning = decode(data, encoding)
        return normalise_newlines(text), warning
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        text, warning = decode(data)
        return normalise_newlines(text), warning
    name = best.encoding
    warning = f"not UTF-8; read as {name} (detected); pass --encoding if that is wrong"
    return normalise_newlines(str(best)), warning


def _utf8_or_bom(data: bytes) -> bool:
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _dialect(text: str, source: SourceFile) -> type[csv.Dialect] | csv.Dialect:
    if source.path.suffix.lower() == ".tsv":
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:16_384], delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel


CSV = Reader(name="csv", extensions=(".csv", ".tsv", ".tab"), load=load)
