"""The big file of each format bench/formats.py loads, written at run time (never
committed): each writer takes a folder and a scale (1.0: the full size) and returns the
file it wrote."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

WORDS = ("delivery", "invoice", "warehouse", "refund", "customer", "parcel", "courier",
         "order", "address", "payment", "return", "label")


def sentence(n: int) -> str:
    return " ".join(WORDS[(n * 7 + i) % len(WORDS)] for i in range(14)) + f" number {n}."


def write_docx(work: Path, scale: float) -> Path:
    import docx

    doc = docx.Document()
    paragraphs = max(20, int(2000 * scale))
    for n in range(paragraphs):
        if n % 50 == 0:
            doc.add_heading(f"Section {n // 50 + 1}", level=1 + (n // 50) % 2)
        doc.add_paragraph(sentence(n))
    rows = max(5, int(200 * scale))
    table = doc.add_table(rows=rows, cols=3)
    for r in range(rows):
        for c, text in enumerate((f"ID-{r:05d}", WORDS[r % len(WORDS)], str(r * 3))):
            table.cell(r, c).text = text
    path = work / "big.docx"
    doc.save(str(path))
    return path


def write_pptx(work: Path, scale: float) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for n in range(max(4, int(200 * scale))):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text_frame.text = sentence(n)
        shape = slide.shapes.add_table(4, 3, Inches(1), Inches(4), Inches(6), Inches(1.5))
        for r in range(4):
            for c in range(3):
                shape.table.cell(r, c).text = f"r{r}c{c} {WORDS[(n + r + c) % len(WORDS)]}"
        slide.notes_slide.notes_text_frame.text = sentence(n + 1)
    path = work / "big.pptx"
    deck.save(str(path))
    return path


def write_xlsx(work: Path, scale: float) -> Path:
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("Orders")
    sheet.append(["order", "customer", "amount", "note"])
    for n in range(max(50, int(20_000 * scale))):
        sheet.append([f"ORD-{n:06d}", f"customer {n % 977}", n * 1.25, sentence(n)[:60]])
    path = work / "big.xlsx"
    book.save(str(path))
    return path


def write_csv(work: Path, scale: float) -> Path:
    lines = ["コード,都道府県,金額,備考"]
    for n in range(max(50, int(20_000 * scale))):
        lines.append(f"JP-{n:06d},東京都,{n * 3},配送済み 受領印あり {n}")
    path = work / "big-sjis.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))
    return path


def write_ipynb(work: Path, scale: float) -> Path:
    cells = []
    for n in range(max(10, int(500 * scale))):
        if n % 5 == 0:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": [f"## Step {n}\n", sentence(n)]})
        source = [f"def step_{n}(orders):\n", f"    return [o for o in orders if o.id > {n}]\n"]
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": n, "source": source,
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": [f"{n} orders\n"]}]})
    notebook = {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
                "metadata": {"kernelspec": {"language": "python", "name": "python3"}}}
    path = work / "big.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


_CONTAINER = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
              'xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" '
              'media-type="application/oebps-package+xml"/></rootfiles></container>')


def write_epub(work: Path, scale: float) -> Path:
    chapters = max(3, int(40 * scale))
    items = "".join(f'<item id="c{n}" href="c{n}.xhtml" media-type="application/xhtml+xml"/>'
                    for n in range(chapters))
    spine = "".join(f'<itemref idref="c{n}"/>' for n in range(chapters))
    opf = ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
           '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Big Book</dc:title>'
           f"</metadata><manifest>{items}</manifest><spine>{spine}</spine></package>")
    path = work / "big.epub"
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", _CONTAINER)
        book.writestr("OEBPS/book.opf", opf)
        for n in range(chapters):
            body = "".join(f"<p>{sentence(n * 100 + i)}</p>" for i in range(100))
            book.writestr(f"OEBPS/c{n}.xhtml", f"<html><body><h1>Chapter {n + 1}</h1>{body}</body></html>",
                          compress_type=zipfile.ZIP_DEFLATED)
    return path


BIG_WRITERS = {"docx": write_docx, "pptx": write_pptx, "xlsx": write_xlsx, "csv": write_csv,
               "epub": write_epub, "ipynb": write_ipynb}
