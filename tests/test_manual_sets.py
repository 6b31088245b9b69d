"""bench/manual_sets.py: the pages and questions of the scipy-docs and man-pages sets, made
from a real numpydoc docstring and a real man page rendered by groff (no download)."""

from __future__ import annotations

import gzip
import inspect
import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy
import pytest

from bench.manual_sets import (
    deb_data,
    keep_questions,
    man_page,
    render_man,
    scipy_page,
    write_pages,
)

MAN = r""".\" SPDX-License-Identifier: Linux-man-pages-copyleft
.TH pipe 2 2023-02-05 "Linux man-pages 6.03"
.SH NAME
pipe, pipe2 \- create pipe
.SH SYNOPSIS
.nf
.B #include <unistd.h>
.PP
.BI "int pipe(int " pipefd [2]);
.fi
.SH DESCRIPTION
.BR pipe ()
creates a unidirectional data channel that can be used for interprocess communication.
.SS Flags
.TP
.B O_NONBLOCK
Set the file status flag on the two new open file descriptions.
.SH SEE ALSO
.BR fork (2)
"""


@pytest.mark.skipif(not shutil.which("groff"), reason="groff (Debian groff-base) renders man pages")
def test_a_man_page_loses_its_description_and_keeps_its_names_and_sections():
    page = man_page("pipe.2.gz", render_man(MAN))
    assert page["question"] == "create pipe"
    assert page["names"] == ("pipe", "pipe2")
    assert page["doc_id"] == "pipe.2.md"
    text = page["text"]
    assert text.startswith("# pipe(2)\n\n## NAME\n\npipe, pipe2\n\n## SYNOPSIS\n")
    assert "create pipe" not in text
    assert "### Flags" in text and "## DESCRIPTION" in text
    assert "pipe() creates a unidirectional data channel" in text
    assert "Linux man-pages 6.03" not in text  # the footer
    assert not any(line.startswith(" ") for line in text.split("\n"))  # no indented code block


def test_a_numpydoc_docstring_becomes_a_page_without_its_summary():
    page = scipy_page("fake", "linspace", inspect.getdoc(numpy.linspace))  # cleaned, as ast gives it
    assert page["question"] == "Return evenly spaced numbers over a specified interval."
    assert page["doc_id"] == "fake/linspace.md"
    text = page["text"]
    assert text.startswith("# scipy.fake.linspace\n\nReturns `num` evenly spaced samples")
    assert "## Parameters" in text and "## Examples" in text and "----------" not in text
    assert "Return evenly spaced numbers" not in text
    # a ufunc's docstring opens with its signature: the summary is the next paragraph
    ufunc = scipy_page("special", "erf", "erf(z, out=None)\n\nReturns the error function of complex "
                       "argument.\n\nParameters\n----------\nz : ndarray\n    Input array.\n")
    assert ufunc["question"] == "Returns the error function of complex argument."
    assert scipy_page("stats", "norm", "A normal continuous random variable.\n\n%(before_notes)s\n") is None


def _page(doc_id: str, question: str, text: str, names=("x",)) -> dict:
    return {"doc_id": doc_id, "question": question, "text": text, "names": names, "tags": []}


def test_questions_that_name_their_page_repeat_or_leak_into_the_corpus_are_left_out():
    pages = [
        _page("a.md", "create a child process", "# a\n\nforks", names=("fork",)),
        _page("b.md", "fork the calling process", "# b\n\ncopies", names=("fork",)),  # names the page
        _page("c.md", "wait for process", "# c\n\nwaits"),
        _page("d.md", "wait for process", "# d\n\nwaits too"),  # the same as c
        _page("e.md", "tune clock", "# e\n\nadjusts"),  # two words
        _page("f.md", "read from a file descriptor", "# f\n\nsee: read from a file descriptor"),  # in the corpus
    ]
    report: dict = {}
    kept = keep_questions(pages, report)
    assert [p["doc_id"] for p in kept] == ["a.md"]
    assert report["skipped"] == {"summary names the page": 1, "the same summary as another page": 2,
                                 "summary under 3 words": 1, "summary also in the corpus": 1}


def test_a_written_set_loads_through_indexer_with_whole_document_targets(tmp_path: Path):
    pages = [_page("p/a.md", "create a child process", "# a\n\nThe child is a copy of its parent.\n"),
             _page("p/b.md", "", "# b\n\nA page without a question stays as a distractor.\n")]
    report: dict = {}
    write_pages(tmp_path, pages, "t", report)
    rows = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert rows == [{"id": "p/a", "question": "create a child process", "doc_id": "p/a.md", "tags": ["t"]}]
    assert (tmp_path / "corpus" / "p" / "b.md").is_file()
    assert report["documents"] == 2 and report["questions"] == 1


def test_the_data_member_of_a_deb_is_found(tmp_path: Path):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as tf:
        body = gzip.compress(b".TH x 2\n")
        info = tarfile.TarInfo("./usr/share/man/man2/x.2.gz")
        info.size = len(body)
        tf.addfile(info, io.BytesIO(body))
    members = [(b"debian-binary", b"2.0\n"), (b"control.tar.xz", b"abc"), (b"data.tar.xz", data.getvalue())]
    blob = b"!<arch>\n"
    for name, content in members:
        blob += name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"100644".ljust(8)
        blob += str(len(content)).encode().ljust(10) + b"`\n" + content + (b"\n" if len(content) % 2 else b"")
    deb = tmp_path / "x.deb"
    deb.write_bytes(blob)
    with deb_data(deb) as tf:
        assert tf.getnames() == ["./usr/share/man/man2/x.2.gz"]
