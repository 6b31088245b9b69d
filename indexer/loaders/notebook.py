"""Jupyter notebooks (.ipynb, nbformat 4, and 3's worksheets), read as plain JSON.

Read: Markdown cells as Markdown (their headings are sections; the first `#` heading is
the title); code cells as fenced code in the notebook's language (its kernel's or
`language_info`'s, else Python); raw cells as text. Outputs: only the text a person would
search, as a fenced `output` block under its cell: what a cell printed to stdout and a
result's plain-text form (not a bare `<Object at 0x...>`), each cut to its first 20
lines. Left out: error tracebacks,
stderr, pictures, HTML, JSON, widgets and the cell's metadata. Marks: `cell N` (the N-th
cell, counting every kind)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..types import Document
from .assembly import TextBuilder
from .documents import extracted_document
from .reader import Reader, SourceFile
from .skips import SkipFile

OUTPUT_LINES = 20
_OBJECT_REPR = re.compile(r"<[\w.]+ (object )?at 0x[0-9a-fA-F]+>")


def load(source: SourceFile, encoding: str | None = None) -> Document:
    try:
        notebook = json.loads(source.path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkipFile(f"damaged or not a real .ipynb file (not JSON: {exc})") from None
    if not isinstance(notebook, dict):
        raise SkipFile("damaged or not a real .ipynb file (not a notebook's JSON object)")
    language = notebook_language(notebook)
    out = TextBuilder()
    for number, cell in enumerate(cells(notebook), 1):
        if isinstance(cell, dict):
            out.mark(f"cell {number}")
            _cell(out, cell, language)
    return extracted_document(
        source.doc_id, out.text(), source_path=str(source.path), marks=out.marks, title=""
    )


def cells(notebook: dict[str, Any]) -> list[Any]:
    """The cells of a notebook: nbformat 4's list, or version 3's worksheets' cells."""
    if isinstance(notebook.get("cells"), list):
        return list(notebook["cells"])
    found: list[Any] = []
    for sheet in notebook.get("worksheets") or []:
        if isinstance(sheet, dict):
            found.extend(sheet.get("cells") or [])
    return found


def notebook_language(notebook: dict[str, Any]) -> str:
    meta = notebook.get("metadata") or {}
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = (meta.get(key) or {}).get(field)
        if isinstance(value, str) and value:
            return value.lower()
    return "python"


def source_of(value: Any) -> str:
    """A cell's source or an output's text: a string, or a list of lines."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _cell(out: TextBuilder, cell: dict[str, Any], language: str) -> None:
    kind = cell.get("cell_type")
    text = source_of(cell.get("source", cell.get("input")))
    if kind == "code":
        out.code(text, language)
        for output in cell.get("outputs") or []:
            out.code(_output_text(output), "output")
    elif kind in ("markdown", "raw", "heading"):
        level = cell.get("level")
        out.block(f"{'#' * int(level)} {text}" if kind == "heading" and level else text)


def _output_text(output: Any) -> str:
    """The searchable text of one output ("" for the kinds left out), cut short."""
    if not isinstance(output, dict):
        return ""
    kind = output.get("output_type")
    if kind == "stream":
        text = source_of(output.get("text")) if output.get("name") == "stdout" else ""
    elif kind in ("execute_result", "pyout", "display_data"):
        data = output.get("data") or output
        text = source_of(data.get("text/plain", data.get("text")))
    else:
        text = ""
    if _OBJECT_REPR.fullmatch(text.strip()):
        return ""  # `<IPython.core.display.HTML at 0x1112757d0>`: no text of its own
    lines = text.rstrip().split("\n")
    return "\n".join(lines[:OUTPUT_LINES])


IPYNB = Reader(name="ipynb", extensions=(".ipynb",), load=load, parsed=True)
