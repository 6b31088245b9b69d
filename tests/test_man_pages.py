"""Man pages rendered to text (docs/own-folder.md's recipe, `man --nh --nj cp | col -b`):
a stranger's pages (issue 51, G14) had the title line (`CP(1) User Commands CP(1)`) and
`NAME cp - copy files and directories` as chunks of their own in `auto`, and no option's
chunk said which command it belongs to. The page's NAME line now heads its heading path,
and the title line, NAME and SYNOPSIS are the page's first chunk."""

from __future__ import annotations

from indexer.chunkers import parse_strategy
from indexer.loaders import make_document
from tests.debian import man_page_text

PAGE = """CP(1)                            User Commands                           CP(1)

NAME
       cp - copy files and directories

SYNOPSIS
       cp [OPTION]... [-T] SOURCE DEST

DESCRIPTION
       Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.

       -a, --archive
              same as -dR --preserve=all

       -i, --interactive
              prompt before overwrite (overrides a previous -n option)

SEE ALSO
       Full documentation <https://www.gnu.org/software/coreutils/cp>

GNU coreutils 9.1               September 2022                          CP(1)
"""


def _auto_chunks(doc_id: str, text: str):
    doc = make_document(doc_id, text, "text")
    return doc, parse_strategy("auto").create().chunk(doc)


def test_a_man_pages_name_line_heads_every_path_and_its_title_line_is_no_chunk():
    doc, chunks = _auto_chunks("man/cp.1.txt", PAGE)
    assert doc.title == "cp - copy files and directories"
    assert [s.path for s in doc.sections] == [
        "cp - copy files and directories",
        "cp - copy files and directories › DESCRIPTION",
        "cp - copy files and directories › SEE ALSO",
    ]
    first = chunks[0]
    assert first.text.startswith("CP(1)") and "NAME\n       cp - copy" in first.text
    assert "SYNOPSIS\n       cp [OPTION]" in first.text
    options = [c for c in chunks if "--interactive" in c.text]
    assert options and all(c.header.startswith("cp - copy files") for c in options)
    assert all(c.text == doc.text[c.start : c.end] for c in chunks)


def test_a_page_without_a_title_line_keeps_its_name_section():
    text = PAGE.split("\n", 2)[2]
    doc = make_document("cp.txt", text, "text")
    assert doc.title == "cp"
    assert [s.path for s in doc.sections][:2] == ["cp › NAME", "cp › SYNOPSIS"]


def test_coreutils_cp_page_rendered_by_man():
    """The real page, rendered here as the docs say (skips without man-db, bsdextrautils
    and coreutils' man pages)."""
    text = man_page_text("cp")
    doc, chunks = _auto_chunks("cp.txt", text)
    assert doc.title == "cp - copy files and directories"
    title_line = text.strip().split("\n", 1)[0].strip()
    texts = [" ".join(c.text.split()) for c in chunks]
    assert " ".join(title_line.split()) not in texts
    assert not any(t.startswith("NAME") for t in texts)
    assert chunks[0].text.lstrip().startswith("CP(1)") and "SYNOPSIS" in chunks[0].text
    for option in ("--archive", "--interactive", "--no-dereference", "--target-directory"):
        holding = [c for c in chunks if option in c.text]
        assert holding and all(c.header.startswith("cp - copy files") for c in holding), option
    assert all(c.header.startswith("cp - copy files and directories") for c in chunks)


def test_a_title_line_cut_short_and_a_name_line_of_many_names():
    """`man` cuts a long page name short on the left of the title line; OpenSSL's page
    names 53 commands, and its title names the page instead."""
    body = ("\n\nDESCRIPTION\n       Lists the tasks of an execution,\n       one a line, with their state.\n\n"
            "EXAMPLES\n       Run it with the name of the execution\n       and its region.\n")
    cut = ("GCLOUD_RUN_JOBS_EXECUTIONS_TGeneraGCLOUD_RUN_JOBS_EXECUTIONS_TASKS_DESCRIBE(1)\n\nNAME\n"
           "       gcloud run jobs executions tasks describe - obtain details about tasks" + body)
    doc = make_document("g.txt", cut, "text")
    assert doc.title == "gcloud run jobs executions tasks describe - obtain details about tasks"
    names = ", ".join(f"command{k}" for k in range(53))
    many = f"OPENSSL-CMDS(1SSL)\t\t    OpenSSL\t\t    OPENSSL-CMDS(1SSL)\n\nNAME\n       {names} - OpenSSL commands" + body
    doc = make_document("o.txt", many, "text")
    assert [s.path for s in doc.sections] == [
        "OPENSSL-CMDS(1SSL)", "OPENSSL-CMDS(1SSL) › DESCRIPTION", "OPENSSL-CMDS(1SSL) › EXAMPLES"]
