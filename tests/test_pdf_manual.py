"""What a Texinfo manual's PDF says, as Debian's bash-doc showed it (issue 51, G5 and G13):
a definition list whose terms are bash's special parameters (`*`, `#`, `-`) keeps each
term as the PDF has it, and the title page's authors and the table of contents' entries
are no headings. The manual itself (bashref.pdf) is read where bash-doc is installed."""

from __future__ import annotations

from pathlib import Path

from indexer.loaders import load_documents
from indexer.loaders.pdf import extract_pdf
from tests.debian import installed
from tests.pdf_documents import Sheet

PARAMETERS = [  # bashref.pdf p. 29: the term, then its description from the same line on
    ("*", "($*) Expands to the positional parameters, starting from one. When the expansion",
     "is not within double quotes, each positional parameter expands to a separate word."),
    ("@", "($@) Expands to the positional parameters, starting from one. In contexts where",
     "word splitting is performed, this expands each positional parameter to a word."),
    ("#", "($#) Expands to the number of positional parameters in decimal, counted from",
     "one, as the shell sees them when the expansion is performed in the current shell."),
    ("-", "($-, a hyphen.) Expands to the current option flags as specified upon invocation,",
     "by the set builtin command, or those set by the shell itself (such as the -i option)."),
    ("$", "($$) Expands to the process id of the shell. In a subshell, it expands to the",
     "process id of the invoking shell, not the subshell, whatever the subshell is doing."),
]


def _headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#") and line[1:2] in "# "]


def _parameters_pdf(path: Path) -> None:
    sheet = Sheet(path, size=(612.0, 792.0))
    sheet.text(72, 90, "3.4.2 Special Parameters", 12, bold=True)
    intro = ["The shell treats several parameters specially. These parameters may only be referenced;",
             "assignment to them is not allowed. Each is named by one character, which is also how the",
             "manual lists them below: the character at the margin, what it expands to beside it, in",
             "the order the shell documents them, one entry after the other, a line of space between."]
    for k, line in enumerate(intro):
        sheet.text(72, 112 + 12 * k, line, 10)
    y = 170
    for term, first, second in PARAMETERS:
        sheet.text(90, y, term, 10)
        sheet.text(126, y, first, 10)
        sheet.text(126, y + 12, second, 10)
        y += 32
    sheet.page()
    sheet.save()


def test_a_term_that_is_a_markdown_mark_keeps_its_character(tmp_path):
    root = tmp_path / "pdf"
    root.mkdir()
    _parameters_pdf(root / "params.pdf")
    text = extract_pdf(root / "params.pdf").text
    lines = text.split("\n\n")[2:]
    assert [line[0] for line in lines] == [term for term, *_ in PARAMETERS]
    assert "* ($*) Expands to the positional parameters" in text  # not "- ($*)"
    # `# ` would open a heading: the space after the term is a no-break one, no backslash
    assert "\n#\u00a0($#) Expands to the number of positional parameters in decimal," in text
    [doc] = load_documents([root])[1]
    assert [s.path for s in doc.sections] == ["3.4.2 Special Parameters"]


def _manual_pdf(path: Path) -> list[str]:
    """A Texinfo manual's first pages (bash's): the title page with the authors large and
    bold at its foot under a subtitle sentence, the copyright page, the table of contents
    (chapter entries bold, one wrapped onto a second line, one with a short leader), then
    a chapter. Returns the headings."""
    sheet = Sheet(path, size=(612.0, 792.0))
    sheet.text(90, 230, "Bash Reference Manual", 20.5, bold=True)
    sheet.text(522, 250, "Reference Documentation for Bash", 11, align="right")
    sheet.text(522, 263, "Edition 5.2, for Bash Version 5.2.", 11, align="right")
    sheet.text(522, 290, "September 2022", 11, align="right")
    sheet.text(90, 645, "Chet Ramey, Case Western Reserve University", 14.5, bold=True)
    sheet.text(90, 662, "Brian Fox, Free Software Foundation", 14.5, bold=True)
    sheet.page()
    sheet.text(90, 100, "This text is a brief description of the features that are present in the Bash shell.", 11)
    sheet.page()
    sheet.text(90, 90, "Table of Contents", 17, bold=True)
    entries = [
        ("1 Introduction " + ". " * 30 + "1", True),
        ("1.1 What is Bash? " + ". " * 30 + "1", False),
        ("Appendix B Major Differences From", True),
        ("The Bourne Shell " + ". " * 24 + "168", True),
        ("B.1 Implementation Differences From The SVR4.2 Shell " + ". " * 5 + "172", False),
        ("Appendix C GNU Free Documentation License . . 174", True),
    ]
    for k, (entry, bold) in enumerate(entries):
        sheet.text(90, 125 + 14 * k, entry, 11, bold=bold)
    sheet.page()
    sheet.text(90, 90, "1 Introduction", 17, bold=True)
    sheet.text(90, 120, "This chapter introduces the Bash shell and what it is for, in a sentence or two.", 11)
    sheet.page()
    sheet.save()
    return ["# Bash Reference Manual", "## Table of Contents", "## 1 Introduction"]


def test_title_page_authors_and_contents_entries_are_no_headings(tmp_path):
    path = tmp_path / "bashref.pdf"
    headings = _manual_pdf(path)
    text = extract_pdf(path).text
    assert _headings(text) == headings
    assert "\n\nChet Ramey, Case Western Reserve University Brian Fox, Free Software Foundation\n\n" in text
    assert "\n\nAppendix B Major Differences From The Bourne Shell . . ." in text


def test_bash_reference_manual():
    """bashref.pdf from Debian's bash-doc (skips without it)."""
    pdf = extract_pdf(installed("bash-doc", "bashref.pdf"))
    text = pdf.text
    start, end = pdf.pages[28]  # p. 29: Special Parameters
    page = text[start:end]
    for term, name in (("*", "$*"), ("@", "$@"), ("?", "$?"), ("-", "$-"), ("$", "$$")):
        assert f"\n{term} ({name}" in page, term
    assert "\n#\u00a0($#) Expands to the number of positional parameters in decimal." in page
    assert "- ($*)" not in page and "\\#" not in page
    front = _headings(text[: pdf.pages[6][0]])  # the title page, copyright and contents
    assert front == ["# Bash Reference Manual", "## Table of Contents"]
    assert not [h for h in _headings(text) if ". . " in h]
