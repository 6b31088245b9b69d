"""PowerPoint decks (.pptx) through python-pptx, as Markdown-shaped text.

Read: one section per slide, headed by the slide's title (`Slide N` when it has none);
its shapes top to bottom, then left to right (groups opened): text frames (a body
placeholder's paragraphs as list items), tables as pipe tables with their first row as
header, chart titles; then the speaker notes, under the slide. Hidden slides are read.
Not read: pictures, the chart's data, SmartArt, the masters' and layouts' own text,
embedded files, audio and video. Marks: `slide N`."""

from __future__ import annotations

from typing import Any

from ..types import Document
from .assembly import TextBuilder, one_line
from .documents import extracted_document
from .reader import Reader, SourceFile, check_zip, zipped_text_cap

_BULLETED = {"BODY", "OBJECT", "SUBTITLE"}  # placeholder kinds whose paragraphs are bullets


def load(source: SourceFile, encoding: str | None = None) -> Document:
    from pptx import Presentation

    check_zip(source.path, "pptx")
    deck = Presentation(str(source.path))
    out = TextBuilder()
    for number, slide in enumerate(deck.slides, 1):
        out.mark(f"slide {number}")
        _slide(out, slide, number)
    title = one_line(deck.core_properties.title or "")
    return extracted_document(
        source.doc_id, out.text(), source_path=str(source.path), title=title, marks=out.marks
    )


def slide_title(slide: Any, number: int) -> str:
    """The text of the slide's title placeholder, else `Slide N`."""
    shape = slide.shapes.title
    text = one_line(shape.text_frame.text) if shape is not None and shape.has_text_frame else ""
    return text or f"Slide {number}"


def _slide(out: TextBuilder, slide: Any, number: int) -> None:
    out.heading(1, slide_title(slide, number))
    title = slide.shapes.title
    for shape in _reading_order(slide.shapes):
        if title is None or shape.shape_id != title.shape_id:
            _shape(out, shape)
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            out.block("Notes: " + notes.text.strip())


def _reading_order(shapes: Any) -> list[Any]:
    """Shapes top to bottom, then left to right; a group's shapes in its place."""
    found = []
    for shape in shapes:
        if shape.shape_type is not None and str(shape.shape_type).startswith("GROUP"):
            found.extend(_reading_order(shape.shapes))
        else:
            found.append(shape)
    return sorted(found, key=lambda s: (s.top or 0, s.left or 0))


def _shape(out: TextBuilder, shape: Any) -> None:
    if shape.has_text_frame:
        _text_frame(out, shape)
    elif getattr(shape, "has_table", False):
        rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
        out.table([r for r in rows if any(c.strip() for c in r)])
    elif getattr(shape, "has_chart", False):
        out.block(chart_title(shape.chart))


def chart_title(chart: Any) -> str:
    """`Chart: its title` ("" for a chart without a title of its own)."""
    if not chart.has_title or not chart.chart_title.has_text_frame:
        return ""
    title = one_line(chart.chart_title.text_frame.text)
    return f"Chart: {title}" if title else ""


def _text_frame(out: TextBuilder, shape: Any) -> None:
    paragraphs = [(p.level, p.text) for p in shape.text_frame.paragraphs if p.text.strip()]
    if not paragraphs:
        return
    if _bulleted(shape):
        out.items(paragraphs)
    else:
        out.block("\n".join(one_line(text) for _, text in paragraphs))


def _bulleted(shape: Any) -> bool:
    if not shape.is_placeholder:
        return False
    kind = str(shape.placeholder_format.type).split(" ")[0].split(".")[-1]
    return kind in _BULLETED


PPTX = Reader(
    name="pptx",
    extensions=(".pptx",),
    load=load,
    over_cap=zipped_text_cap,
    requires="pptx",
    install="python-pptx>=1.0,<2",
    parsed=True,
)
