"""HTML pages as a stranger's SQLite documentation showed them (issue 51, G6 and G7):
numbered `<h1>` sections under the page's `<title>`, syntax diagrams drawn as inline SVG,
superscripts, and list items of several paragraphs. The real pages are read where
Debian's sqlite3-doc is installed."""

from __future__ import annotations

from indexer.chunkers import parse_strategy
from indexer.loaders import make_document
from indexer.loaders.html import html_to_markdown
from tests.debian import installed

MENU = "<div class=menu><ul><li><a href='index.html'>Home</a><li><a href='about.html'>About</a></ul></div>"
DIAGRAM = (
    "<svg viewBox='0 0 600 65'><title>diagram</title><style>text{font:sans}</style>"
    "<path d='M9,17L26,17'/><text x='78' y='17'>VACUUM</text><polygon points='165,47'/>"
    "<text x='228' y='47'>schema-name</text><text x='403' y='47'>INTO</text>"
    "<text x='497' y='47'>file<tspan>name</tspan></text></svg>"
)
PAGE = (
    "<html><head><title>VACUUM</title></head><body>" + MENU + "<div class=fancy_title>VACUUM</div>"
    "<h1><span>1. </span>Syntax</h1><p><b>vacuum-stmt:</b></p><div>" + DIAGRAM + "</div>"
    "<h1><span>2. </span>Description</h1><p>The VACUUM command rebuilds the database file.</p>"
    "<h2>2.1. VACUUM with an INTO clause</h2><p>The new database is named by INTO.</p>"
    "<h1>3. How VACUUM works</h1><p>It copies the database.</p></body></html>"
)


def test_numbered_h1s_are_sections_under_the_pages_title():
    doc = make_document("lang_vacuum.html", PAGE, "html")
    assert doc.title == "VACUUM"
    assert [s.path for s in doc.sections] == [
        "VACUUM",  # the site menu and the page's title: not labelled "1. Syntax"
        "VACUUM › 1. Syntax",
        "VACUUM › 2. Description",
        "VACUUM › 2. Description › 2.1. VACUUM with an INTO clause",
        "VACUUM › 3. How VACUUM works",
    ]
    headers = [c.header for c in parse_strategy("headers").create().chunk(doc)]
    assert headers and all(h.startswith("VACUUM") for h in headers)


def test_an_h1_that_is_no_numbered_section_still_titles_the_page():
    html = "<title>Site · Guide</title><h1>Guide</h1><p>Text.</p><h1>2024 plans</h1><p>More.</p>"
    assert make_document("g.html", html, "html").title == "Guide"
    docbook = "<title>Unified system</title><h1>2. Unified system</h1><p>T.</p><h2>2.1. Layout</h2><p>L.</p>"
    doc = make_document("x34.html", docbook, "html")  # the number and the page's name
    assert [s.path for s in doc.sections] == ["2. Unified system", "2. Unified system › 2.1. Layout"]
    several = docbook.replace("<h2>2.1. Layout</h2>", "<h1>3. Layout</h1>")  # SQLite's datatype3.html
    paths = [s.path for s in make_document("d.html", several, "html").sections]
    assert paths == ["Unified system › 2. Unified system", "Unified system › 3. Layout"]


def test_an_inline_svg_keeps_its_words_in_the_order_drawn():
    text, title = html_to_markdown(PAGE)
    assert title == "VACUUM"
    assert "vacuum-stmt:\n\nVACUUM schema-name INTO filename\n\n# 2. Description" in text
    assert "diagram" not in text and "font:sans" not in text
    inline, _ = html_to_markdown("<p>Press <svg><text>OK</text></svg> to go on.</p>")
    assert inline == "Press OK to go on."


def test_a_superscript_is_marked_and_chunks_stay_exact_slices():
    html = (
        "<p>A string is up to 2<small><sup>31</sup></small>-1 bytes; the loop is O(N<sup>2</sup>) "
        "on the 1<sup>st</sup> pass.</p><p>See note ↩<sup>2</sup>.</p><table><tr><th>rows</th></tr><tr><td>2<sup>64</sup></td></tr></table>"
    )
    doc = make_document("limits.html", html, "html")
    assert "up to 2^31-1 bytes; the loop is O(N^2) on the 1st pass." in doc.text
    assert "| 2^64 |" in doc.text and "See note ↩2." in doc.text
    for strategy in ("auto", "fixed:size=8,overlap=2", "headers"):
        for c in parse_strategy(strategy).create().chunk(doc):
            assert doc.text[c.start : c.end] == c.text


def test_a_list_item_of_several_paragraphs_is_numbered_once():
    text, _ = html_to_markdown(
        "<ol><li><p><b>Incremental update is hard.</b><p>It is difficult.<p>Nobody does it.</li>"
        "<li><p>Startup is slow.</li></ol><p>Then:</p><ul><li>one<p>more</li><li>two</li></ul>"
    )
    assert text == (
        "1. Incremental update is hard.\n   It is difficult.\n   Nobody does it.\n2. Startup is slow."
        "\n\nThen:\n\n- one\n  more\n- two"
    )


def _sqlite_page(name: str):
    path = installed("sqlite3-doc", f"/{name}")
    return make_document(name, path.read_text(encoding="utf-8"), "html")


def test_sqlite_vacuum_page():
    doc = _sqlite_page("lang_vacuum.html")
    assert doc.title == "VACUUM"
    assert doc.sections[0].path == "VACUUM" and doc.sections[0].level == 0
    assert [s.path for s in doc.sections if s.level == 1] == [
        "VACUUM › 1. Syntax", "VACUUM › 2. Description", "VACUUM › 3. How VACUUM works"]
    assert "VACUUM schema-name INTO filename" in doc.text
    chunks = parse_strategy("auto").create().chunk(doc)
    assert all(c.header.startswith("VACUUM") for c in chunks)
    assert all(doc.text[c.start : c.end] == c.text for c in chunks)


def test_sqlite_limits_and_file_format_pages():
    assert "up to 2^31-1 or 2147483647" in _sqlite_page("limits.html").text
    text = _sqlite_page("affcase1.html").text
    assert "1. Incremental update is hard.\n   It is difficult to update" in text
    assert "\n1. It is difficult" not in text


def test_a_line_that_reads_as_a_mark_keeps_its_characters():
    """Bash's `# ($#)` in a paragraph keeps its `#` (no backslash) and opens no heading; a
    line opening with `>` is still escaped, and `#include` needs nothing."""
    html = ("<h1>Parameters</h1><p># ($#) Expands to the number of positional parameters.</p>"
            "<p>> not a quote</p><p>#include &lt;stdio.h&gt;</p><p>#</p>")
    doc = make_document("params.html", html, "html")
    assert doc.text.split("\n\n")[1:] == [
        "#\u00a0($#) Expands to the number of positional parameters.", "\\> not a quote",
        "#include <stdio.h>", "\\#"]
    assert [s.path for s in doc.sections] == ["Parameters"]
