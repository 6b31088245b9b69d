"""PDF files to Markdown-shaped text with a page map: the reader (PDFium).

`extract_pdf(path)` reads every character with its position, size and weight
(pypdfium2, PDFium's text layer), and the ruled lines and images of each page, and hands
the pages, one at a time as they are read, to the layout pass (`layout`, `tables`,
`furniture`, `markdown` in this package): running headers/footers and page numbers
dropped, columns read left then right, hyphenated line ends joined, headings from font
size and weight as `#` levels, ruled tables as Markdown tables. `PdfText.pages[i]` is the
character span of page i+1 in the text.

Bad input never raises anything but `SkipFile` with a one-line reason: empty, not a PDF,
truncated, encrypted, corrupt, over the page cap, or without a text layer (scanned).
`page_count(path)` is the cheap look discovery takes to apply the page cap.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from ...settings import DEFAULT_MAX_PDF_PAGES
from ..skips import SkipFile
from .glyphs import read_glyphs
from .layout import Glyphs, Page
from .markdown import PdfText, layout_markdown, page_list

_PDFIUM = threading.Lock()  # PDFium is not thread-safe: one document at a time per process
_CORRUPT = "corrupt PDF ({}); repair it, e.g. with qpdf, or get a new copy"


def extract_pdf(path, max_pages: int | None = DEFAULT_MAX_PDF_PAGES) -> PdfText:
    """Text, page spans, title and warnings of a PDF file (`max_pages` None: no cap).
    Raises SkipFile (one-line reason) for encrypted, corrupt, truncated, image-only or
    over-long PDFs. Pages are read one at a time and laid out as they come: memory holds
    one page's glyphs and the compact words of the others, not every glyph of the file."""
    _check_file(Path(path))
    with _PDFIUM, _document(Path(path), max_pages) as pdf:
        title = _title(pdf)
        warnings: list[str] = []
        return layout_markdown(_pages(pdf, warnings), title, warnings)


def over_cap(n_pages: int, max_pages: int) -> str:
    """The reason a PDF over the page cap is skipped."""
    return f"{n_pages:,} pages, over the cap of {max_pages:,}; raise --max-pdf-pages to include it"


def page_count(path) -> int | None:
    """Pages of a PDF, or None when PDFium cannot open it (reading it says why)."""
    with _opened(path) as pdf:
        return len(pdf) if pdf is not None else None


def sample_text(path, pages: int = 3) -> str:
    """PDFium's plain text of the first pages ("" when the file cannot be read): enough
    to tell the language of a document without laying it out."""
    with _opened(path) as pdf:
        out = []
        for i in range(min(pages, len(pdf)) if pdf is not None else 0):
            try:
                page = pdf[i]
                textpage = page.get_textpage()
                out.append(textpage.get_text_range())
                textpage.close()
                page.close()
            except Exception:  # noqa: BLE001 - a broken page: the sample goes without it
                continue
        return "\n".join(out)


@contextlib.contextmanager
def _opened(path):
    """The document open (under the PDFium lock), or None when PDFium cannot open it."""
    try:
        import pypdfium2 as pdfium
    except ImportError:  # pragma: no cover - depends on the install
        yield None
        return
    with _PDFIUM:
        try:
            pdf = pdfium.PdfDocument(Path(path))
        except Exception:  # noqa: BLE001 - encrypted, corrupt...: loading it gives the reason
            pdf = None
        try:
            yield pdf
        finally:
            if pdf is not None:
                pdf.close()


def _check_file(path: Path) -> None:
    """What the bytes alone tell: empty, not a PDF, or cut short (no end-of-file marker)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(1024)
            size = fh.seek(0, 2)
            fh.seek(max(0, size - 4096))
            tail = fh.read()
            if size <= len(head) and not head.strip():
                raise SkipFile("empty file")
            if b"%PDF" not in head:
                raise SkipFile("not a PDF (no %PDF header); rename it if it is another format")
            if b"%%EOF" not in tail and b"startxref" not in tail and not _contains(fh, b"%%EOF"):
                raise SkipFile(
                    "truncated PDF (no end-of-file marker; the copy or download was cut short?); get a complete copy"
                )
    except OSError as exc:
        raise SkipFile(f"unreadable ({exc.strerror or exc})") from None


def _contains(fh, marker: bytes, block: int = 1 << 20) -> bool:
    """Does the file hold `marker` anywhere (read a block at a time)?"""
    fh.seek(0)
    carry = b""
    while chunk := fh.read(block):
        if marker in carry + chunk:
            return True
        carry = chunk[-len(marker) + 1 :]
    return False


@contextlib.contextmanager
def _document(path: Path, max_pages: int | None):
    """The PDF open (the caller holds the PDFium lock), or SkipFile with the reason."""
    try:
        import pypdfium2 as pdfium
        import pypdfium2.raw as raw
    except ImportError:  # pragma: no cover - depends on the install
        raise SkipFile("PDF support is not installed; pip install pypdfium2") from None
    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        if exc.err_code in (raw.FPDF_ERR_PASSWORD, raw.FPDF_ERR_SECURITY):
            raise SkipFile(
                "encrypted PDF (needs a password); decrypt it first, e.g. qpdf --decrypt --password=PASS in.pdf out.pdf"
            ) from None
        raise SkipFile(
            "corrupt or truncated PDF (PDFium cannot open it); repair it, e.g. with qpdf, or get a new copy"
        ) from None
    except Exception as exc:  # noqa: BLE001 - a library fault must not end the run
        raise SkipFile(_CORRUPT.format(exc.__class__.__name__)) from None
    try:
        n = len(pdf)
        if max_pages is not None and n > max_pages:
            raise SkipFile(over_cap(n, max_pages))
        if n == 0:
            raise SkipFile(_CORRUPT.format("no pages"))
        yield pdf
    finally:
        pdf.close()


def _title(pdf) -> str:
    try:
        return (pdf.get_metadata_dict().get("Title") or "").strip()
    except Exception:  # noqa: BLE001
        return ""


def _pages(pdf, warnings: list[str]):
    """Each page in turn (a broken one as an empty page); the pages that could not be read
    and the sideways text left out go to `warnings` at the end."""
    import pypdfium2.raw as raw

    n = len(pdf)
    failed: list[int] = []
    rotated = 0
    fixed: dict[str, bool] = {}  # font name: fixed-pitch, by its glyphs' widths
    for i in range(n):
        try:
            page, turned = _read_page(pdf, i, raw, fixed)
        except Exception:  # noqa: BLE001 - one broken page must not lose the others
            failed.append(i + 1)
            page, turned = Page(612, 792), 0
        rotated += turned
        yield page
    if failed and len(failed) == n:
        raise SkipFile(_CORRUPT.format("no page could be read"))
    if failed:
        warnings.append(f"page(s) {page_list(failed)} could not be read and were left out")
    if rotated:
        warnings.append(f"{rotated:,} characters of rotated (sideways) text were left out")


def _read_page(pdf, index: int, raw, fixed: dict[str, bool]) -> tuple[Page, int]:
    import ctypes

    page = pdf[index]
    try:
        cx0, cy0, cx1, cy1 = page.get_cropbox()
        rot = page.get_rotation() % 360

        def to_display(x: float, y: float) -> tuple[float, float]:
            if rot == 90:
                return y - cy0, x - cx0
            if rot == 180:
                return cx1 - x, y - cy0
            if rot == 270:
                return cy1 - y, cx1 - x
            return x - cx0, cy1 - y

        w, h = (cy1 - cy0, cx1 - cx0) if rot in (90, 270) else (cx1 - cx0, cy1 - cy0)
        glyphs = Glyphs()
        out = Page(w, h, glyphs)
        textpage = page.get_textpage()
        try:
            rotated = read_glyphs(
                textpage.raw,
                raw,
                to_display,
                rot=rot,
                cx0=cx0,
                glyphs=glyphs,
                ctypes=ctypes,
                fixed=fixed,
            )
        finally:
            textpage.close()
        _read_drawing(page, raw, to_display, out, ctypes)
        return out, rotated
    finally:
        page.close()


def _read_drawing(page, raw, to_display, out: Page, ctypes, max_segments: int = 20000) -> None:
    """Axis-aligned line segments of the page's vector paths (rules, cell borders), and
    the number of images. Nested form XObjects are walked with their matrices."""
    matrix = raw.FS_MATRIX()
    px, py = ctypes.c_float(), ctypes.c_float()

    def walk(count, get, parent, m, depth):
        for k in range(count(parent)):
            obj = get(parent, k)
            if not obj:
                continue
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_IMAGE:
                out.images += 1
            elif kind in (raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_FORM):
                raw.FPDFPageObj_GetMatrix(obj, matrix)
                om = _mul((matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f), m)
                if kind == raw.FPDF_PAGEOBJ_FORM:
                    if depth < 8:
                        walk(
                            raw.FPDFFormObj_CountObjects,
                            raw.FPDFFormObj_GetObject,
                            obj,
                            om,
                            depth + 1,
                        )
                elif len(out.rules) < max_segments:
                    _path_segments(
                        obj, om, raw, px=px, py=py, to_display=to_display, rules=out.rules
                    )

    walk(raw.FPDFPage_CountObjects, raw.FPDFPage_GetObject, page.raw, (1, 0, 0, 1, 0, 0), 0)


def _mul(a, b):
    """Matrix a then b (PDF order: [a b c d e f])."""
    return (
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    )


def _path_segments(obj, m, raw, px, py, to_display, rules) -> None:
    start = prev = None
    for s in range(raw.FPDFPath_CountSegments(obj)):
        seg = raw.FPDFPath_GetPathSegment(obj, s)
        raw.FPDFPathSegment_GetPoint(seg, px, py)
        x, y = px.value, py.value
        point = to_display(m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])
        kind = raw.FPDFPathSegment_GetType(seg)
        if kind == raw.FPDF_SEGMENT_MOVETO:
            start = prev = point
            continue
        if kind == raw.FPDF_SEGMENT_LINETO and prev is not None:
            rules.append((*prev, *point))
        prev = point
        if raw.FPDFPathSegment_GetClose(seg) and start is not None:
            rules.append((*point, *start))
            prev = start
