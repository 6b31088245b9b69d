"""Which PDF library should indexer read PDFs with? Measured, not guessed.

    python -m bench.pdf_compare             # ~15 minutes on 2 cores, most of it the 2,000-page PDF
    python -m bench.pdf_compare --long 0    # without it: ~1-2 minutes
    python -m bench.pdf_compare --pages 30  # a shorter speed run
    python -m bench.pdf_compare --smoke     # 3 pages, no real PDFs, a 3-page long PDF (numbers mean nothing)

The PDFs are drawn by the test fixture (tests/test_pdf.py: reportlab, DejaVu): a
three-page Turkish policy with a heading hierarchy in three sizes, hyphenated line ends, a
two-column page whose rows line up, a ruled table and a running header/footer with page
numbers, so the text a reader should get is known exactly. A 100-page version (the three
pages cycled) measures speed.

Rows: each library's own plain-text call ("native"), and indexer's layout pass
(`indexer.loaders.pdf.layout_markdown`) fed by each library that exposes glyph
positions and sizes ("layout"). PyMuPDF (AGPL) is measured as a reference when it is
importable; it is never a dependency.

Columns: `CER` is the character error rate of the extracted text against the expected
text (edit distance / expected length, Markdown syntax and whitespace aside);
`similarity` is difflib's ratio between the two; `order` the share of line pairs of the two-column
page met in reading order (its rows line up and are drawn row by row across the columns,
so the content stream's order is not the reading order); `furniture` the running headers, footers and page numbers
left out (of 9 on 3 pages); `hyphens` the line-end hyphens handled (2 joined, 2 real ones
kept); `headings` the headings found at the right Markdown level (of 5); `table` the
table rows whose cells stay together on one line, and whether a Markdown table came out;
`Turkish` the expected words with Turkish letters found intact; `pages/s` the speed on
the 100-page PDF; `install` the size of the package and its dependencies on disk.

A second table follows indexer's own extraction document by document: the fixture, the
bundled sample (corpus/pdf, made by its script, so its text is known too), and any
real-world PDFs given with --real (default: the manuals Debian ships in /usr/share/doc, if
there): pages/s (median of 3 runs), CER, headings and table rows found where known. A third
checks the furniture pass on documents that repeat their layout on every page (invoices,
forms, statements, slides: tests/pdf_documents.py), and the last loads and chunks a
2,000-page PDF with every strategy (bench/pdf_long.py: peak RSS, seconds per 1,000 pages,
headings found).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import importlib.util
import re
import tempfile
import time
from pathlib import Path

from bench.common import CORPUS, dist_bytes, machine, median_time, missing, smoke_option, table
from bench.pdf_metrics import (
    cer,
    furniture_removed,
    headings,
    hyphens,
    reading_order,
    similarity,
    table_rows,
    turkish,
)
from indexer.loaders.pdf import Glyph, Page, extract_pdf, layout_markdown
from tests.test_pdf import expected_text, make_policy_pdf

# ------------------------------------------------------------------ extractors: path -> text


def pypdfium2_native(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    out = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    pdf.close()
    return "\n\n".join(out)


def pypdf_native(path: Path, mode: str = "plain") -> str:
    from pypdf import PdfReader

    return "\n\n".join(p.extract_text(extraction_mode=mode) for p in PdfReader(str(path)).pages)


def pdfminer_native(path: Path) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(str(path))


def pdfplumber_native(path: Path) -> str:
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        return "\n\n".join(p.extract_text() or "" for p in pdf.pages)


def pdfplumber_tables(path: Path) -> str:
    """pdfplumber's text with its own table finder's tables as Markdown, in place of
    the words inside them."""
    import pdfplumber

    out = []
    with pdfplumber.open(str(path)) as pdf:
        for page in pdf.pages:
            found = page.find_tables()
            rest = page
            for t in found:
                rest = rest.outside_bbox(t.bbox)
            parts = [rest.extract_text() or ""]
            for t in found:
                rows = [[" ".join((c or "").split()) for c in row] for row in t.extract()]
                if rows:
                    parts.append("\n".join(
                        ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
                        + ["| " + " | ".join(r) + " |" for r in rows[1:]]
                    ))
            out.append("\n\n".join(parts))
    return "\n\n".join(out)


def pymupdf_native(path: Path) -> str:
    import pymupdf

    with pymupdf.open(str(path)) as doc:
        return "\n\n".join(p.get_text() for p in doc)


def pymupdf4llm_markdown(path: Path) -> str:
    import pymupdf4llm

    return pymupdf4llm.to_markdown(str(path), show_progress=False)


def layout_pypdfium2(path: Path) -> str:
    return extract_pdf(path).text


def layout_pdfplumber(path: Path) -> str:
    import pdfplumber

    pages = []
    with pdfplumber.open(str(path)) as pdf:
        for p in pdf.pages:
            page = Page(float(p.width), float(p.height), images=len(p.images))
            for c in p.chars:
                if not c.get("upright", True):
                    continue
                y = float(p.height) - c["matrix"][5] if "matrix" in c else c["bottom"] - 0.2 * c["size"]
                page.glyphs.append(Glyph(c["text"], c["x0"], c["x1"], y, c["size"], "bold" in c["fontname"].lower()))
            page.rules = [(e["x0"], e["top"], e["x1"], e["bottom"]) for e in p.edges]
            pages.append(page)
    return layout_markdown(pages).text


def layout_pymupdf(path: Path) -> str:
    import pymupdf

    pages = []
    with pymupdf.open(str(path)) as doc:
        for p in doc:
            page = Page(p.rect.width, p.rect.height)
            for block in p.get_text("rawdict")["blocks"]:
                for line in block.get("lines", []):
                    if abs(line["dir"][0] - 1) > 0.01:
                        continue
                    for span in line["spans"]:
                        bold = bool(span["flags"] & 16) or "bold" in span["font"].lower()
                        for ch in span["chars"]:
                            x0, _, x1, _ = ch["bbox"]
                            page.glyphs.append(Glyph(ch["c"], x0, x1, ch["origin"][1], span["size"], bold))
            for d in p.get_drawings():
                for item in d["items"]:
                    if item[0] == "l":
                        page.rules.append((item[1].x, item[1].y, item[2].x, item[2].y))
                    elif item[0] == "re":
                        r = item[1]
                        page.rules += [(r.x0, r.y0, r.x1, r.y0), (r.x0, r.y1, r.x1, r.y1),
                                       (r.x0, r.y0, r.x0, r.y1), (r.x1, r.y0, r.x1, r.y1)]
            pages.append(page)
    return layout_markdown(pages).text


# name, kind, function, module it needs, distribution whose size counts, licence
EXTRACTORS = [
    ("pypdfium2", "native", pypdfium2_native, "pypdfium2", "pypdfium2", "Apache-2.0/BSD-3"),
    ("pypdf", "native", pypdf_native, "pypdf", "pypdf", "BSD-3"),
    ("pypdf (layout mode)", "native", lambda p: pypdf_native(p, "layout"), "pypdf", "pypdf", "BSD-3"),
    ("pdfminer.six", "native", pdfminer_native, "pdfminer", "pdfminer.six", "MIT"),
    ("pdfplumber", "native", pdfplumber_native, "pdfplumber", "pdfplumber", "MIT"),
    ("pdfplumber + find_tables", "native", pdfplumber_tables, "pdfplumber", "pdfplumber", "MIT"),
    ("PyMuPDF (reference)", "native", pymupdf_native, "pymupdf", "pymupdf", "AGPL-3.0"),
    ("pymupdf4llm (reference)", "markdown", pymupdf4llm_markdown, "pymupdf4llm", "pymupdf", "AGPL-3.0"),
    ("indexer on pypdfium2", "layout", layout_pypdfium2, "pypdfium2", "pypdfium2", "Apache-2.0/BSD-3"),
    ("indexer on pdfplumber", "layout", layout_pdfplumber, "pdfplumber", "pdfplumber", "MIT"),
    ("indexer on PyMuPDF (reference)", "layout", layout_pymupdf, "pymupdf", "pymupdf", "AGPL-3.0"),
]

def installed_size(dist_name: str) -> tuple[float, float, list[str]]:
    """MB on disk of a distribution alone and with its dependencies (not the standard
    library), and the dependency names."""
    seen: dict[str, float] = {}

    def walk(name: str) -> None:
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in seen:
            return
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            return
        seen[key] = dist_bytes(dist) / 1e6
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            walk(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0])

    walk(dist_name)
    own = next(iter(seen.values()), 0.0)
    return own, sum(seen.values()), list(seen)[1:]


def _version(dist: str) -> str:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return ""


# ------------------------------------------------------------------ run


SAMPLE = CORPUS / "pdf"
REAL = ["/usr/share/doc/libtasn1-doc/libtasn1.pdf", "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"]


def _sample_script():
    spec = importlib.util.spec_from_file_location("make_sample", SAMPLE / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def structure_found(got: str, expected: str) -> tuple[str, str]:
    """Headings found at the right level, and table rows found whole, as found/expected."""
    lines = {line.strip() for line in got.splitlines()}
    heads = [line for line in expected.splitlines() if line.startswith("#")]
    rows = [line for line in expected.splitlines() if line.startswith("|") and "---" not in line]
    return (f"{sum(h in lines for h in heads)}/{len(heads)}",
            f"{sum(r in lines for r in rows)}/{len(rows)}" if rows else "-")


def per_document(work: Path, real: list[str]) -> list[list[object]]:
    """indexer's extraction, document by document."""
    import pypdfium2 as pdfium

    fixture = work / "policy3.pdf"
    sample = work / "sample.pdf"
    docs = [("fixture (tests/test_pdf.py)", fixture, expected_text()),
            ("sample (corpus/pdf)", sample, _sample_script().write(sample))]
    docs += [(Path(r).name, Path(r), None) for r in real if Path(r).exists()]
    rows = []
    for name, path, expected in docs:
        pdf = pdfium.PdfDocument(str(path))
        n = len(pdf)
        pdf.close()
        seconds = median_time(lambda: extract_pdf(path), repeat=3, warmup=1)
        got = extract_pdf(path).text
        heads, table_rows = structure_found(got, expected) if expected else (
            f"{sum(1 for line in got.splitlines() if line.startswith('#'))} found", "-")
        rows.append([name, n, f"{n / seconds:.1f}", f"{cer(got, expected):.2%}" if expected else "-", heads,
                     table_rows, f"{len(got):,}"])
    return rows


def repeated_layouts(work: Path) -> list[list[object]]:
    """Invoices, forms, statements, slides: every line that differs between pages (and a
    line the same on every page but in the body) must come back; running titles, page
    numbers and confidentiality footers must not."""
    from tests import pdf_documents as docs

    rows = []
    for make in (docs.invoice_pdf, docs.chapters_pdf, docs.letterhead_invoice_pdf, docs.form_pdf, docs.statement_pdf,
                 docs.slides_pdf):
        path = work / f"{make.__name__}.pdf"
        drawn = make(path)
        flat = " ".join(extract_pdf(path).text.split())
        lines = [" ".join(line.split()) for page in drawn.body for line in page]
        rows.append([make.__name__.removesuffix("_pdf"), len(drawn.body), f"{sum(line in flat for line in lines)}/{len(lines)}",
                     f"{sum(f not in flat for f in drawn.furniture)}/{len(drawn.furniture)}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100, help="pages of the speed PDF (default 100)")
    parser.add_argument("--show", metavar="NAME", help="print what one extractor makes of the 3-page PDF")
    parser.add_argument("--real", nargs="*", default=REAL, metavar="PDF",
                        help="real-world PDFs for the per-document table (default: Debian's manuals, if present)")
    parser.add_argument("--long", type=int, default=2000, metavar="PAGES",
                        help="pages of the long PDF loaded and chunked by every strategy (default 2,000; 0: skip)")
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.pages, args.real, args.long = 3, [], 3

    work = Path(tempfile.mkdtemp(prefix="pdf_compare_"))
    small, big = work / "policy3.pdf", work / f"policy{args.pages}.pdf"
    expected = make_policy_pdf(small)
    make_policy_pdf(big, n_pages=args.pages)

    rows = []
    for name, kind, fn, module, dist, licence in EXTRACTORS:
        if missing(module):
            rows.append([name, kind, licence] + ["not installed"] + [""] * 10)
            continue
        if args.show and args.show.lower() in name.lower():
            print(f"===== {name}\n{fn(small)}\n=====")
        try:
            got = fn(small)
            t0 = time.perf_counter()
            fn(big)
            seconds = time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - a peer's failure is a result, not a crash
            rows.append([name, kind, licence, f"failed: {exc.__class__.__name__}: {exc}"[:60]] + [""] * 10)
            continue
        together, markdown = table_rows(got)
        own, total, deps = installed_size(dist)
        rows.append([
            name, kind, licence,
            f"{cer(got, expected):.1%}",
            f"{similarity(got, expected):.3f}",
            f"{reading_order(got):.0%}",
            f"{furniture_removed(got)}/9",
            f"{hyphens(got)}/4",
            f"{headings(got)}/5",
            f"{together}/4" + (" md" if markdown else ""),
            f"{turkish(got):.0%}",
            f"{args.pages / seconds:.1f}",
            f"{own:.1f} / {total:.1f} MB",
            ", ".join(deps) or "-",
        ])
    print(f"PDF extraction, {time.strftime('%Y-%m-%d')}, {machine()}")
    print(f"3-page fixture for quality, {args.pages}-page fixture for speed; versions: " + ", ".join(
        f"{d} {_version(d)}" for d in ("pypdfium2", "pypdf", "pdfminer.six", "pdfplumber", "pymupdf", "pymupdf4llm")
        if _version(d)
    ))
    print()
    print(table(
        ["extractor", "kind", "licence", "CER", "similarity", "order", "furniture", "hyphens", "headings", "table",
         "Turkish", "pages/s", "install (own / with deps)", "dependencies"],
        rows,
    ))
    print()
    print("indexer's extraction (pypdfium2 + layout pass) per document:")
    print(table(["document", "pages", "pages/s", "CER", "headings", "table rows", "characters"],
                per_document(work, args.real)))
    print()
    print("Documents that repeat their layout on every page (tests/pdf_documents.py): body lines kept, furniture left out:")
    print(table(["document", "pages", "body lines kept", "furniture left out"], repeated_layouts(work)))
    if args.long:
        from bench.pdf_long import STRATEGIES
        from bench.pdf_long import report as long_pdf

        print()
        strategies = ["headers"] if args.smoke else STRATEGIES
        which = "headers only" if args.smoke else "every strategy"
        print(f"A {args.long:,}-page PDF loaded and chunked, {which} (bench/pdf_long.py):")
        print(long_pdf(args.long, work, strategies)[0])


if __name__ == "__main__":
    main()
