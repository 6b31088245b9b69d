"""What strangers' trials of `indexer questions` found on real folders (man pages, a
missing folder): each test failed before its fix."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from indexer.cli import cli


@pytest.mark.parametrize("files, reason", [
    (None, "{folder}: no such file or folder"),
    ({"blob.txt": b"\x7fELF\x00\x01" * 50}, "blob.txt: binary file (contains NUL bytes)"),
], ids=["missing", "binary"])
def test_a_folder_without_documents_says_why_each_file_was_skipped(write_files, tmp_path, files, reason):
    """`indexer questions nosuch -o q.jsonl` said "1 skipped; see the reasons above" with no
    reason above it (`indexer build` prints "skipped nosuch: no such file or folder")."""
    folder = write_files(files) if files else tmp_path / "nosuch"
    result = CliRunner().invoke(cli, ["questions", str(folder), "-o", str(tmp_path / "q.jsonl")])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert "skipped " + reason.format(folder=folder) in lines
    assert lines[-1].startswith("Error: no documents to ask about")


MAN_PAGE = """TAR(1)                     GNU TAR Manual                     TAR(1)

DESCRIPTION
       GNU tar saves many files together into a single tape or disk archive,
       and can restore individual files from the archive.

       To get a listing of the members with their sizes and owners, the
       following command line can be used:

           $ tar -tvf archive.tar

       The archive format is chosen with these keywords:

         * gnu, the GNU tar format of version 1.13 and later.
         * posix, the POSIX.1-2001 interchange format.

       -C, --directory=DIR
              Change to DIR before performing any operations, as follows:

                  tar -C /tmp -xf archive.tar

SEE ALSO
       tar(5), symlink(7), rmt(8)

       Online copies of GNU tar documentation in various formats can be found
       at:

           http://www.gnu.org/software/tar/manual
"""


def test_plain_text_lead_ins_are_not_asked_about(write_files):
    """A man page rendered to text marks no code block or list, so its lead-ins ("... can be
    found at:" over an indented address, "... can be used:" over an indented command, "...
    with these keywords:" over bulleted lines) were asked about; an option's entry over an
    indented example (a term, then its indented description) still is."""
    from indexer.questions.generate import make_questions

    made = make_questions(write_files({"tar.txt": MAN_PAGE}), 20, seed=0)
    answers = {" ".join(q["answer"].split()) for q in made.questions}
    assert not any(a.endswith(("found at:", "can be used:", "these keywords:")) for a in answers), answers
    assert "-C, --directory=DIR Change to DIR before performing any operations, as follows:" in answers
    assert any("GNU tar saves many files" in a for a in answers)


NAV = ('<div class="nav-panel"><p>Next: <a href="Simple-Example.html">Simple Example</a>, '
       'Up: <a href="Using-libffi.html">Using libffi</a> &nbsp; [<a href="Index.html">Index</a>]</p></div>')


def test_a_manuals_navigation_line_is_not_asked_about(write_files):
    """GNU manuals in HTML (texinfo: libffi, nettle, bc, time in /usr/share/doc) open and
    close every page with "Next: Simple Example, Up: Using libffi [Index]"; made-up
    questions targeted it, and on a page that is only a menu, its menu items instead."""
    from indexer.questions.generate import make_questions

    basics = (f"<html><body>{NAV}<hr><h3>2.1 The Basics</h3><p>libffi assumes that you have a pointer "
              f"to the function you wish to call and know the types of its arguments.</p><hr>{NAV}</body></html>")
    menu = (f"<html><body>{NAV}<h2>2 Using libffi</h2><ul><li><a href='b.html'>The Basics</a></li>"
            "<li><a href='s.html'>Simple Example</a></li></ul></body></html>")
    made = make_questions(write_files({"The-Basics.html": basics,
                                       "Using-libffi.html": menu}), 10, seed=0)
    assert [q["answer"] for q in made.questions] == [
        "libffi assumes that you have a pointer to the function you wish to call and know the types of its arguments."]


def test_a_man_pages_running_lines_and_headed_pointers_are_not_asked_about(write_files):
    """A man page rendered to text opens and closes with running lines ("GNU coreutils 9.1
    September 2022 LS(1)"), and its pointers sit under a section name the text does not mark
    as a heading ("BUG REPORTS\\n Report bugs to ..."): made-up questions targeted both."""
    from indexer.questions.generate import make_questions

    page = ("LS(1)\t\t\t\t User Commands\t\t\t\t LS(1)\n\n\n\n"
            "DESCRIPTION\n       List information about the FILEs (the current directory by default).\n\n"
            "       Sort entries alphabetically if none of the sort options is given.\n\n"
            "       Mandatory arguments to long options are mandatory for short options too.\n\n"
            "BUG REPORTS\n       Report bugs to <bug-coreutils@gnu.org>.\n\n"
            "SEE ALSO\n       Full documentation <https://www.gnu.org/software/coreutils/ls>\n\n\n\n"
            "GNU coreutils 9.1\t\tSeptember 2022\t\t\t\t LS(1)\n")
    made = make_questions(write_files({"ls.txt": page}), 10, seed=0)
    assert sorted(" ".join(q["answer"].split()) for q in made.questions) == [
        "List information about the FILEs (the current directory by default).",
        "Mandatory arguments to long options are mandatory for short options too.",
        "Sort entries alphabetically if none of the sort options is given."]


def test_a_reference_list_entry_is_not_asked_about(write_files):
    """ssh's page got questions about its STANDARDS entries ("F. Cusack and M. Forssen,
    Generic Message Exchange Authentication ..., RFC 4256, January 2006.")."""
    from indexer.questions.generate import make_questions

    page = ("# Standards\n\nThe client speaks version 2 of the protocol and nothing older.\n\n"
            "F. Cusack and M. Forssen, Generic Message Exchange Authentication for the Secure Shell "
            "Protocol (SSH), RFC 4256, January 2006.\n\n"
            "[12] J. Smith, A. Jones: Retrieval at scale for the whole archive. 2019.\n")
    made = make_questions(write_files({"standards.md": page}), 10, seed=0)
    assert [q["answer"] for q in made.questions] == [
        "The client speaks version 2 of the protocol and nothing older."]


def test_a_lead_in_to_a_quoted_block_is_not_asked_about(write_files):
    """procps' bugs.md leads into its commands with "strace and ltrace output are very
    helpful:" over a `>` quote; the lead-in rule knew code blocks, lists and tables only."""
    from indexer.questions.generate import make_questions

    page = ("# Reporting bugs\n\nPlease include the version of procps you are running with every report.\n\n"
            "strace and ltrace output are very helpful:\n\n> strace -o output-file ps --blah\n> bzip2 output-file\n")
    made = make_questions(write_files({"bugs.md": page}), 10, seed=0)
    answers = [q["answer"] for q in made.questions]
    assert "Please include the version of procps you are running with every report." in answers
    assert "strace and ltrace output are very helpful:" not in answers


def test_a_lead_in_that_ends_a_longer_paragraph_is_not_asked_about(write_files):
    """tar's page: "The example command above written in the short-option style could look
    like:" closes a paragraph of several sentences; the lead-in rule took one-sentence
    paragraphs only. The paragraph's other sentences stay targets."""
    from indexer.questions.generate import make_questions

    page = ("# Options\n\nShort options are single letters after one dash and may be grouped together. "
            "The example command above written in the short-option style could look like:\n\n"
            "```\ntar -cvf etc.tar /etc\n```\n")
    made = make_questions(write_files({"tar.md": page}), 10, seed=0)
    assert [q["answer"] for q in made.questions] == [
        "Short options are single letters after one dash and may be grouped together."]


def test_a_command_at_a_shell_prompt_is_not_asked_about(write_files):
    """ssh-keygen's README got a question whose answer was "$ ssh-keygen -lv -f
    ~/.ssh/known_hosts": a command, in plain text that marks no code."""
    from indexer.questions.generate import make_questions

    page = ("Fingerprints of every known host are listed with a visual picture of each key.\n\n"
            "    $ ssh-keygen -lv -f ~/.ssh/known_hosts\n\n"
            "    > bzip2 output-file written for the report\n")
    made = make_questions(write_files({"README.txt": page}), 10, seed=0)
    assert [q["answer"] for q in made.questions] == [
        "Fingerprints of every known host are listed with a visual picture of each key."]
