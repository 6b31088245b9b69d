"""Spreadsheets: Excel workbooks (.xlsx, .xlsm) through openpyxl, and the table every
sheet becomes (CSV and TSV files share it: `delimited`).

Read: one section per worksheet, headed by its name (hidden sheets too); its rows as a
pipe table, the first row with a value its header row; empty rows and the empty columns
at the right left out; each cell's value as Excel last saved it (a formula's cached
result, not the formula; dates as ISO dates). Big sheets stay one table: the chunkers cut
a table between rows, never inside one, and repeat its header row. Not read: charts,
pictures, comments, cell formats, chart sheets, macros. Marks: `Sheet row N` (the row's
number in the sheet)."""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..text.headrows import too_long_warning
from ..types import Document
from .assembly import TextBuilder, one_line
from .documents import extracted_document
from .reader import Reader, SourceFile, check_zip, zipped_text_cap


def load(source: SourceFile, encoding: str | None = None) -> Document:
    check_zip(source.path, "xlsx")
    out = TextBuilder()
    notes: list[str] = []
    with warnings.catch_warnings():  # "Unknown extension is not supported": nothing we read
        warnings.simplefilter("ignore")
        title = _read_book(source.path, out, notes)
    doc = extracted_document(
        source.doc_id, out.text(), source_path=str(source.path), title=title, marks=out.marks
    )
    doc.warnings = notes
    return doc


def _read_book(path: Path, out: TextBuilder, notes: list[str]) -> str:
    """Write every worksheet of a workbook into `out`, its warnings into `notes`; the
    workbook's title."""
    from openpyxl import load_workbook

    book = load_workbook(str(path), read_only=True, data_only=True)
    try:
        for sheet in book.worksheets:
            # the size a sheet declares (<dimension>) is not trusted: some programs write
            # `A1`, and a read-only sheet would stop there, dropping every other cell
            sheet.reset_dimensions()
            rows = enumerate(sheet.iter_rows(values_only=True), 1)
            note = add_sheet(out, sheet.title, ((n, [cell_value(v) for v in r]) for n, r in rows))
            if note:
                notes.append(f"sheet {sheet.title}: {note}")
        return one_line(book.properties.title or "")
    finally:
        book.close()


def cell_value(value: Any) -> str:
    """A cell as text: a whole float without `.0`, a date or time in ISO form."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def add_sheet(
    out: TextBuilder, name: str, rows: Iterable[tuple[int, list[str]]], heading: bool = True
) -> str | None:
    """A sheet: its name as a heading, then its rows with text as one table, each row
    marked `name row N` (without a heading: `row N`). A warning when its header row is
    too long to repeat with each chunk (`text.headrows`)."""
    kept = [(n, r) for n, r in rows if _has_text(r)]
    width = max((_used(r) for _, r in kept), default=0)
    out.mark("")
    if not kept:
        return None  # an empty sheet: no section
    if heading:
        out.heading(1, name)
    prefix = f"{name} row" if heading else "row"
    head = out.table([r[:width] for _, r in kept], [f"{prefix} {n}" for n, _ in kept])
    out.mark("")
    return too_long_warning(head)


def _has_text(row: list[str]) -> bool:
    return any(c.strip() for c in row)


def _used(row: list[str]) -> int:
    """The row's width without its empty cells at the right."""
    n = len(row)
    while n and not row[n - 1].strip():
        n -= 1
    return n


XLSX = Reader(
    name="xlsx",
    extensions=(".xlsx", ".xlsm"),
    load=load,
    over_cap=zipped_text_cap,
    requires="openpyxl",
    install="openpyxl>=3.1,<4",
    parsed=True,
)
