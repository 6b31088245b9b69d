"""PDF files read as Markdown-shaped text with a page map.

`reader` gets each page's glyphs, rules and images from PDFium; the layout pass turns
them into text: `layout` (words, lines, columns, reading order), `furniture` (running
headers, footers, page numbers), `blocks` (paragraphs, lists, headings), `tables` (ruled
tables) and `markdown` (the text and its page spans). The rest of the package uses the
names below."""

from .furniture import page_number_like
from .layout import Glyph, Page
from .markdown import PdfText, layout_markdown
from .reader import extract_pdf, over_cap, page_count, sample_text

__all__ = [
    "Glyph",
    "Page",
    "PdfText",
    "extract_pdf",
    "layout_markdown",
    "over_cap",
    "page_count",
    "page_number_like",
    "sample_text",
]
