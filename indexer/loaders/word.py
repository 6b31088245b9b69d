"""Word documents (.docx) through python-docx, as Markdown-shaped text.

Read: the body's paragraphs and tables in order; headings (by their heading style or
outline level) as Markdown headings; list paragraphs as list items; tables as pipe
tables, the first row their header (a merged cell once); text boxes after the paragraph
that anchors them; then footnotes, endnotes and comments with text, and the headers and
footers of all sections, each text once. Not read: pictures, charts, equations, fields'
codes, tracked deletions, embedded files. Marks: `table N row M`, `footnote N`,
`comment N`, `header`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..types import Document
from .assembly import TextBuilder, one_line
from .documents import extracted_document
from .reader import Reader, SourceFile, check_zip, zipped_text_cap

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NS = {"w": _W}
_HEADING_STYLE = re.compile(r"heading\s*(\d)$", re.I)
_NOTES = (
    ("footnotes", "footnote", "Footnotes"),
    ("endnotes", "endnote", "Endnotes"),
    ("comments", "comment", "Comments"),
)


def load(source: SourceFile, encoding: str | None = None) -> Document:
    import docx

    check_zip(source.path, "docx")
    document = docx.Document(str(source.path))
    out = TextBuilder()
    tables, styles = _Counter(), _Styles()
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            _table(out, item, tables.next())
        else:
            _paragraph(out, item, styles)
    for part, label, heading in _NOTES:
        _notes(out, _part_xml(document, part), label, heading)
    _headers_footers(out, document)
    title = one_line(document.core_properties.title or "")
    return extracted_document(
        source.doc_id, out.text(), source_path=str(source.path), title=title, marks=out.marks
    )


class _Counter:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n


@dataclass(frozen=True, slots=True)
class StyleKind:
    """What a paragraph style makes of its paragraphs: a heading level by its name
    (`Heading 2`, `Title`: 1), by its outline level, and whether it is a list style."""

    named: int
    outline: int | None
    listed: bool


def style_kind(style: Any) -> StyleKind:
    name = (style.name if style is not None else "") or ""
    m = _HEADING_STYLE.match(name)
    named = int(m.group(1)) if m else 1 if name == "Title" else 0
    level = None
    while level is None and style is not None:
        level = _outline_level(style.element)
        style = style.base_style
    return StyleKind(named=named, outline=level, listed=name.startswith("List"))


class _Styles:
    """Each paragraph style's kind, worked out once a document (python-docx looks a
    paragraph's style up among all of them at every call)."""

    def __init__(self) -> None:
        self.kinds: dict[str, StyleKind] = {}

    def kind(self, paragraph: Any) -> StyleKind:
        found = paragraph._p.xpath("./w:pPr/w:pStyle/@w:val")
        key = str(found[0]) if found else ""
        if key not in self.kinds:
            self.kinds[key] = style_kind(paragraph.style)
        return self.kinds[key]


def heading_level(paragraph: Any, kind: StyleKind) -> int:
    """A paragraph's heading level (0: not a heading): its style's name (`Heading 2`,
    `Title` is 1), else the outline level set on it or on its style chain."""
    if kind.named:
        return kind.named
    level = _outline_level(paragraph._p)
    level = kind.outline if level is None else level
    return 0 if level is None or level > 8 else level + 1


def _outline_level(element: Any) -> int | None:
    found = element.xpath("./w:pPr/w:outlineLvl/@w:val")
    return int(found[0]) if found else None


def _list_depth(paragraph: Any, kind: StyleKind) -> int | None:
    """A list paragraph's depth (None: not a list item): numbered by Word, or in a list style."""
    level = paragraph._p.xpath("./w:pPr/w:numPr/w:ilvl/@w:val")
    if paragraph._p.xpath("./w:pPr/w:numPr/w:numId"):
        return int(level[0]) if level else 0
    return 0 if kind.listed else None


def _paragraph(out: TextBuilder, paragraph: Any, styles: _Styles) -> None:
    out.mark("")
    kind = styles.kind(paragraph)
    level = heading_level(paragraph, kind)
    depth = None if level else _list_depth(paragraph, kind)
    text = paragraph.text
    if level:
        out.heading(level, text)
    elif depth is not None:
        out.items([(depth, text)])
    else:
        out.block(text)
    for box in _text_boxes(paragraph._p):
        out.block(box)


def _text_boxes(element: Any) -> list[str]:
    """The text of the text boxes anchored in a paragraph, each once (Word writes a box
    twice: as a drawing and as its VML fallback)."""
    seen: list[str] = []
    for box in element.xpath(".//w:txbxContent"):
        paragraphs = ["".join(p.xpath(".//w:t/text()")) for p in box.xpath("./w:p")]
        text = "\n".join(p for p in paragraphs if p.strip())
        if text.strip() and text not in seen:
            seen.append(text)
    return seen


def _table(out: TextBuilder, table: Any, number: int) -> None:
    rows = [_row_cells(row) for row in table.rows]
    rows = [r for r in rows if any(c.strip() for c in r)]
    if rows:
        labels = [f"table {number} row {i}" for i in range(1, len(rows) + 1)]
        out.table(rows, labels)
    out.mark("")


def _row_cells(row: Any) -> list[str]:
    """A row's cells' texts, a cell merged across columns once."""
    cells: list[str] = []
    last = None
    for cell in row.cells:
        if cell._tc is not last:
            cells.append(cell.text)
        last = cell._tc
    return cells


def _part_xml(document: Any, name: str) -> Any:
    """The XML of the document's footnotes, endnotes or comments part (None: it has none)."""
    from lxml import etree

    for rel in document.part.rels.values():
        if rel.reltype.endswith("/" + name) and not rel.is_external:
            return etree.fromstring(rel.target_part.blob)
    return None


def _notes(out: TextBuilder, root: Any, label: str, heading: str) -> None:
    """Footnotes, endnotes or comments with text, under one heading."""
    if root is None:
        return
    notes = []
    for note in root.xpath(f"./w:{label}", namespaces=_NS):
        paragraphs = ["".join(p.xpath(".//w:t/text()", namespaces=_NS)) for p in note]
        text = "\n".join(p for p in paragraphs if p.strip())
        if text.strip():
            notes.append((note.get(f"{{{_W}}}id", ""), text))
    if not notes:
        return
    out.mark("")
    out.heading(1, heading)
    for number, text in notes:
        out.mark(f"{label} {number}")
        out.block(text)


def _headers_footers(out: TextBuilder, document: Any) -> None:
    """Each distinct header or footer text once, under one heading."""
    texts: list[str] = []
    for section in document.sections:
        for part in _section_parts(section):
            text = "\n".join(p.text for p in part.paragraphs if p.text.strip())
            if text and text not in texts:
                texts.append(text)
    if not texts:
        return
    out.mark("")
    out.heading(1, "Headers and footers")
    out.mark("header")
    for text in texts:
        out.block(text)


def _section_parts(section: Any) -> list[Any]:
    names = ("header", "first_page_header", "even_page_header") + (
        "footer",
        "first_page_footer",
        "even_page_footer",
    )
    parts = [getattr(section, name) for name in names]
    return [p for p in parts if not p.is_linked_to_previous]


DOCX = Reader(
    name="docx",
    extensions=(".docx",),
    load=load,
    over_cap=zipped_text_cap,
    requires="docx",
    install="python-docx>=1.1,<2",
    parsed=True,
)
