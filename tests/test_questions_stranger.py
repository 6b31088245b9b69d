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


def test_credits_contacts_funding_and_licence_sentences_are_not_asked_about(write_files):
    """gnupg's THANKS (renamed, so no file-name rule caught it) gave 27 of 600 questions:
    a 12 KB list of names and addresses ("Mollard mfvm at gmx.de"), "Many thanks to my
    wife ...", "... has partly been funded by the German Ministry ...", "... WITHOUT ANY
    WARRANTY ..."; bash's README ended in "Chet Ramey\\nchet.ramey@case.edu"."""
    from indexer.questions.generate import make_questions

    kept = "The keyring stores every public key that was imported from a keyserver."
    page = (f"# Thanks\n\n{kept}\n\n"
            "Alexander Belopolsky belopols at example.org\nMichael Nottebrock mfvm at gmx.de\n"
            "Werner Koch <wk@gnupg.org>\nStelian Pop <stelian@popies.net>\n\n"
            "Many thanks to my wife Gerlinde for having so much patience with me while hacking.\n\n"
            "The development of this software has partly been funded by the German Ministry of Economics.\n\n"
            "This file is distributed in the hope that it will be useful, but WITHOUT ANY WARRANTY, to the extent "
            "permitted by law.\n\nChet Ramey\nchet.ramey@case.edu\n")
    made = make_questions(write_files({"gnupg-THANKS.md": page}), 10, seed=0)
    assert [q["answer"] for q in made.questions] == [kept]


def test_a_sentence_ending_in_a_colon_is_not_asked_about_wherever_it_stands(write_files):
    """jq's page: "and the second is one of these:" over a paragraph at the same indent;
    gnupg: "The format of a response is:" over a record. A colon at the end introduces
    the answer; it is not one."""
    from indexer.questions.generate import make_questions

    page = ("Each filter reads its input and writes results to standard output in order.\n\n"
            "The format of a response is:\n\nstatus code, a space, then the message text follows.\n\n"
            "Options come in two kinds; the first takes no argument, and the second is one of these:\n"
            "the file, the string or the number given after it.\n")
    made = make_questions(write_files({"jq.txt": page}), 10, seed=0)
    answers = {" ".join(q["answer"].split()) for q in made.questions}
    assert "Each filter reads its input and writes results to standard output in order." in answers
    assert not any(a.endswith(":") for a in answers), answers


def test_plain_text_org_headings_are_not_asked_about(write_files):
    """gnupg's docs mark headings org-mode style (`* Windows` over `** How to build an
    installer for Windows`, `*** SPK - Signature subpacket records`): bare headings were
    answers."""
    from indexer.questions.generate import make_questions

    page = ("* Windows\n** How to build an installer for Windows\n\n"
            "The installer is built from a tarball with the speedo makefile on a Linux host.\n\n"
            "*** SPK - Signature subpacket records\n\n"
            "Each record describes one subpacket of a signature with its flags and its value.\n")
    made = make_questions(write_files({"HACKING.txt": page}), 10, seed=0)
    assert sorted(q["answer"] for q in made.questions) == [
        "Each record describes one subpacket of a signature with its flags and its value.",
        "The installer is built from a tarball with the speedo makefile on a Linux host."]


def test_a_hard_wrapped_list_item_is_asked_about_whole(write_files):
    """python-dotenv's changelog: an item wrapped over three lines gave three answers, one
    per line ("entact as it is.")."""
    from indexer.questions.generate import make_questions

    page = ("# Changelog\n\n"
            "- `set_key` and `unset_key` only modified the affected file instead of\n"
            "  parsing and re-writing file, this causes comments and other file\n"
            "  entact as it is.\n"
            "- Drop support for the oldest interpreter release line in this version.\n"
            "  - Nested items stay their own item when they open with a bullet.\n")
    made = make_questions(write_files({"CHANGES.md": page}), 10, seed=0)
    answers = sorted(" ".join(q["answer"].split()) for q in made.questions)
    assert answers == sorted([
        "- `set_key` and `unset_key` only modified the affected file instead of parsing and re-writing file, "
        "this causes comments and other file entact as it is.",
        "- Drop support for the oldest interpreter release line in this version.",
        "- Nested items stay their own item when they open with a bullet."]), answers


def test_a_file_of_one_huge_line_gives_no_megabyte_answer(write_files):
    """A 2 MB one-line file got the question "hugeline word", answered by all of it."""
    from indexer.questions.generate import make_questions

    folder = write_files({"hugeline.md": "word " * 100_000,
                          "notes.md": "The archive keeps every monthly report of the finance team.\n"})
    made = make_questions(folder, 4, seed=0)
    assert made.questions and all(len(q["answer"]) < 5000 for q in made.questions)


def test_overload_stubs_and_decorator_strings_are_no_code_targets(write_files):
    """pathspec's two `@overload` stubs of `from_lines` and tenacity's `@t.overload def
    retry(` were targets; `def match` under a deprecation decorator got the decorator's
    string ("Pattern.match() is deprecated. ...") as its answer."""
    from indexer.loaders import load_documents
    from indexer.questions.code import symbols

    code = ('import typing as t\nfrom typing import overload\n\n\nclass PathSpec:\n'
            '    @overload\n    def from_lines(\n        cls, lines: list[str],\n    ) -> "PathSpec": ...\n\n'
            '    @t.overload\n    def from_lines(\n        cls, lines: str,\n    ) -> "PathSpec": ...\n\n'
            '    def from_lines(cls, lines):\n        """Compile the lines."""\n        return cls([l.strip() for l in lines])\n\n'
            '    @deprecated(\n        "Pattern.match() is deprecated. Use Pattern.match_file()"\n    )\n'
            '    def match(self, files):\n        """Match the files."""\n        return [f for f in files if f]\n')
    folder = write_files({"pathspec.py": code})
    doc = next(iter(load_documents([folder])[1]))
    found = [(s.symbol, doc.text[s.answer[0]:s.answer[1]]) for s in symbols(doc)]
    assert ("PathSpec.from_lines", "def from_lines(cls, lines):") in found
    assert sum(1 for name, _ in found if name == "PathSpec.from_lines") == 1
    assert ("PathSpec.match", "def match(self, files):") in found


def test_questions_prints_the_warnings_build_prints(write_files, tmp_path):
    """An Icelandic Latin-1 file: `indexer build` warned it was read as Windows-1254,
    `indexer questions` said nothing; and the warning only offered to "silence" it, not
    that its letters may be wrong or how to read it right."""
    text = "# Þingvellir\n\nÞórður og Guðrún fóru ýmsar leiðir um þingstaðinn á hverju sumri.\n"
    folder = write_files({"is.md": text.encode("latin-1")})
    result = CliRunner().invoke(cli, ["questions", str(folder), "-n", "1", "-o", str(tmp_path / "q.jsonl")])
    assert result.exit_code == 0, result.output
    assert ("warning is.md: not valid UTF-8; read as Windows-1254 (Turkish), so letters of another language "
            "may be wrong: re-save it as UTF-8, or pass --encoding (e.g. latin-1)") in result.output.splitlines()
    fixed = CliRunner().invoke(cli, ["questions", str(folder), "-n", "1", "-o", str(tmp_path / "r.jsonl"),
                                     "--encoding", "latin-1"])
    assert fixed.exit_code == 0 and "warning" not in fixed.output
    assert "Þórður" in (tmp_path / "r.jsonl").read_text(encoding="utf-8")


def test_a_page_nested_under_a_contents_heading_is_asked_about(write_files):
    """Debian's python-policy.html (Sphinx) nests its whole text under a "Contents" heading:
    it got 0 of 600 questions, and its two candidates were the sidebar's links."""
    from indexer.questions.generate import make_questions

    page = ("<html><head><title>Debian Python Policy</title></head><body><h1>Abstract</h1>"
            "<p>This document describes the packaging of Python modules for the distribution.</p><h1>Contents</h1>"
            "<ul><li><a href='#intro'>Introduction</a></li><li><a href='#modules'>Packaged Modules</a></li></ul>"
            "<h2>1. Introduction</h2><p>Every package providing a module must depend on the default interpreter "
            "version.</p><h2>4. Packaged Modules</h2><h3>4.2 Wheels</h3><p>Wheels are never shipped in binary "
            "packages of the archive itself.</p></body></html>")
    made = make_questions(write_files({"policy.html": page}), 10, seed=0)
    assert sorted(q["answer"] for q in made.questions) == [
        "Every package providing a module must depend on the default interpreter version.",
        "Wheels are never shipped in binary packages of the archive itself."]  # not the abstract's meta line


@pytest.mark.parametrize("name", ["CREDITS.md", "THANKS", "MAINTAINERS.txt"])
def test_credits_files_by_other_names_are_not_asked_about(write_files, name):
    """dateutil's contributors list was skipped as AUTHORS.md but asked about as CREDITS.md,
    THANKS.md or MAINTAINERS.md (14 of 20 questions)."""
    from indexer.questions.generate import make_questions

    folder = write_files({name: "# Contributors\n\nThis is a list of the people who wrote the library over the years.\n",
                          "guide.md": "# Guide\n\nThe parser accepts dates written in every common order of fields.\n"})
    made = make_questions(folder, 4, seed=0)
    assert {q["doc_id"] for q in made.questions} == {"guide.md"}
    assert any(s.reason.startswith("not asked about") and s.doc_id == name for s in made.skipped)


def test_masked_addresses_make_a_contact_list(write_files):
    """dateutil's list hides its domains ("- Mike Gilbert <floppym@MASKED>")."""
    from indexer.questions.generate import make_questions

    page = ("# People\n\nThe parser accepts dates written in every common order of fields.\n\n"
            "- Mike Gilbert <floppym@MASKED>\n- Thomas A Caswell <tcaswell@MASKED> (gh: @tacaswell)\n")
    made = make_questions(write_files({"people.md": page}), 10, seed=0)
    assert [q["answer"] for q in made.questions] == ["The parser accepts dates written in every common order of fields."]


def test_plain_text_titles_are_not_asked_about_nor_glued_to_answers(write_files):
    """A stranger's Turkish .txt pages: the title "e-Devlet Şifresi Alma ve Yenileme" and the
    question heading "Şifremi unuttum, ne yapmalıyım?" were answers, and "Şifrenin geçerlilik
    süresi" came glued to the sentence under it. Hard-wrapped prose keeps its first line."""
    from indexer.questions.generate import make_questions

    page = ("e-Devlet Şifresi Alma ve Yenileme\n\n"
            "Şifremi unuttum, ne yapmalıyım?\n\n"
            "Şifrenin geçerlilik süresi\nPTT'den alınan şifre zarfı yedi gün içinde kullanılmalıdır.\n\n"
            "Yeni şifre almak için kimlik kartınızla birlikte herhangi bir PTT şubesine\n"
            "başvurabilir ve aynı gün içinde zarfınızı teslim alabilirsiniz.\n")
    made = make_questions(write_files({"e-devlet.txt": page}), 10, seed=0)
    assert sorted(" ".join(q["answer"].split()) for q in made.questions) == [
        "PTT'den alınan şifre zarfı yedi gün içinde kullanılmalıdır.",
        "Yeni şifre almak için kimlik kartınızla birlikte herhangi bir PTT şubesine başvurabilir ve aynı gün "
        "içinde zarfınızı teslim alabilirsiniz."]
