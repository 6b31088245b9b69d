"""EPUB books (2 and 3), read from the zip directly: `META-INF/container.xml` names the
package document, whose spine gives the chapters in reading order; each chapter's XHTML
goes through the HTML loader (`html_to_markdown`), so its `<h1>`–`<h3>` are headings and
its lists and tables keep their shape.

Read: every XHTML document of the spine, in spine order (those marked non-linear too); the
book's title (`dc:title`) is the document's title and its one top heading, the chapters'
headings one level below it, so heading paths run `Book › Part › Chapter`.
Not read: pictures, styles, fonts, the table of contents' own file (the chapters' headings
say the same), page-list and footnote pop-ups outside the spine. A book whose chapters are
encrypted (DRM) is skipped. Marks: the chapter's file in the book (`main2.xml`): a spine
position would read as a chapter number it is not (a book's first chapter is often its
fifth file)."""

from __future__ import annotations

import posixpath
import zipfile
from xml.etree import ElementTree

from ..types import Document
from .assembly import TextBuilder, one_line
from .documents import extracted_document
from .html import html_to_markdown
from .markdown import parse
from .reader import Reader, SourceFile, zipped_text_cap
from .skips import SkipFile

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_HTML_TYPES = {"application/xhtml+xml", "text/html"}


def load(source: SourceFile, encoding: str | None = None) -> Document:
    if not zipfile.is_zipfile(source.path):
        raise SkipFile("damaged or not a real .epub file (not a zip package)")
    out = TextBuilder()
    with zipfile.ZipFile(source.path) as book:
        _refuse_drm(book)
        opf_path = _package_path(book)
        package = ElementTree.fromstring(book.read(opf_path))
        title = one_line(package.findtext(f"{_OPF}metadata/{_DC}title") or "")
        title = title or source.path.stem
        out.heading(1, title)
        folder = posixpath.dirname(opf_path)
        for name in spine(package, folder):
            out.mark(posixpath.relpath(name, folder or "."))
            out.block(demoted(_chapter_text(book, name)))
    return extracted_document(
        source.doc_id, out.text(), source_path=str(source.path), title=title, marks=out.marks
    )


def demoted(text: str) -> str:
    """Markdown with every heading one level down, under the book's title."""
    headings, _ = parse(text, 6)
    for h in reversed(headings):
        if text.startswith("#", h.start) and h.level < 6:
            text = text[: h.start] + "#" + text[h.start :]
    return text


def _refuse_drm(book: zipfile.ZipFile) -> None:
    """Skip a book whose content documents are encrypted (fonts alone may be obfuscated)."""
    try:
        listed = book.read("META-INF/encryption.xml").decode("utf-8", "replace")
    except KeyError:
        return
    if any(ext in listed for ext in (".xhtml", ".html", ".htm", '.xml"')):
        raise SkipFile("its chapters are encrypted (DRM); a DRM-free copy can be indexed")


def _package_path(book: zipfile.ZipFile) -> str:
    container = ElementTree.fromstring(book.read("META-INF/container.xml"))
    root = container.find(f"{_CONTAINER}rootfiles/{_CONTAINER}rootfile")
    if root is None or not root.get("full-path"):
        raise SkipFile("damaged .epub file (META-INF/container.xml names no package)")
    return str(root.get("full-path"))


def spine(package: ElementTree.Element, folder: str) -> list[str]:
    """The zip paths of the spine's (X)HTML documents, in reading order."""
    manifest = {
        item.get("id"): item
        for item in package.iterfind(f"{_OPF}manifest/{_OPF}item")
        if item.get("media-type") in _HTML_TYPES
    }
    paths = []
    for ref in package.iterfind(f"{_OPF}spine/{_OPF}itemref"):
        item = manifest.get(ref.get("idref"))
        if item is not None and item.get("href"):
            href = str(item.get("href")).split("#", 1)[0]
            paths.append(posixpath.normpath(posixpath.join(folder, _unquote(href))))
    return paths


def _unquote(href: str) -> str:
    from urllib.parse import unquote

    return unquote(href)


def _chapter_text(book: zipfile.ZipFile, name: str) -> str:
    try:
        data = book.read(name)
    except KeyError:
        return ""  # listed but missing: nothing to read
    return html_to_markdown(data.decode("utf-8", "replace"))[0]


EPUB = Reader(name="epub", extensions=(".epub",), load=load, over_cap=zipped_text_cap, parsed=True)
