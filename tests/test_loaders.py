import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from indexer.loaders import discover, load_documents, make_document
from indexer.loaders.decoding import decode
from indexer.loaders.html import html_to_markdown
from indexer.loaders.markdown import blocks_of
from indexer.loaders.paths import PathFilter
from indexer.loaders.skips import SkipFile

MD = "# Kargo ve Teslimat\n\nGiriş.\n\n## Standart Kargo\n\nMetin.\n\n### Alt\n\nDaha.\n"


def load_all(root, **kw):
    found, docs = load_documents([root], **kw)
    docs = list(docs)
    return found, {d.doc_id: d for d in docs}


def test_markdown_document_has_title_sections_and_spans():
    doc = make_document("a/kargo.md", MD)
    assert doc.title == "Kargo ve Teslimat"
    paths = [s.path for s in doc.sections]
    assert paths == [
        "Kargo ve Teslimat",
        "Kargo ve Teslimat › Standart Kargo",
        "Kargo ve Teslimat › Standart Kargo › Alt",
    ]
    assert doc.text[doc.sections[1].start : doc.sections[1].end] == "## Standart Kargo\n\nMetin."
    assert doc.line_of(doc.sections[2].start) == 9


def test_document_without_h1_uses_file_stem_and_headings_inside_code_are_not_sections():
    doc = make_document("docs/iade-kosullari.md", "## A\n\n```\n# not a heading\n```\n\n## B\n\nx\n")
    assert doc.title == "iade-kosullari"
    assert [s.path for s in doc.sections] == ["iade-kosullari › A", "iade-kosullari › B"]


def test_text_before_first_heading_is_a_section_of_its_own():
    doc = make_document("x.md", "Preamble line.\n\n# Title\n\nBody\n")
    assert [(s.path, s.level) for s in doc.sections] == [("Title", 0), ("Title", 1)]


def test_rst_underlined_titles_become_sections():
    doc = make_document("guide.rst", "Guide\n=====\n\nIntro.\n\nInstall\n-------\n\nRun it.\n", "text")
    assert doc.title == "Guide"
    assert [s.path for s in doc.sections] == ["Guide", "Guide › Install"]


MAN_PAGE = """LS(1)                            User Commands                           LS(1)

NAME
       ls - list directory contents

SYNOPSIS
       ls [OPTION]... [FILE]...

DESCRIPTION
       List  information  about the FILEs (the current directory by default).

       -a, --all
              do not ignore entries starting with .

   Exit status:
       0      if OK,

SEE ALSO
       dircolors(1)

GNU coreutils 9.1               September 2022                          LS(1)
"""


def test_a_man_page_rendered_to_text_has_its_sections():
    """A stranger's `man ls | col -b` pages had one section each: every chunk's header was
    the file name, and an answer began "DESCRIPTION GNU tar is ..."."""
    doc = make_document("man/ls.txt", MAN_PAGE, "text")
    assert doc.title == "ls - list directory contents"  # its NAME line (issue 51, G14)
    assert [s.path for s in doc.sections] == [doc.title] + [f"{doc.title} › {p}" for p in (
        "DESCRIPTION", "DESCRIPTION › Exit status:", "SEE ALSO")]
    description = doc.sections[1]
    assert doc.text[description.start:description.body_start] == "DESCRIPTION"


@pytest.mark.parametrize("text", [
    "NOTE\n    Indented once.\n\nPlain prose at the margin, a line.\nAnother line.\nAnd one more.\n",
    "Just one capital section\n\nWARNING\n       Indented text.\n       More of it.\n       Still.\n",
])
def test_capitals_over_indented_text_are_no_sections_outside_a_man_page(text):
    doc = make_document("notes.txt", text, "text")
    assert [s.level for s in doc.sections] == [0]


def test_html_headings_tables_lists_and_code_survive_extraction():
    html = """<html><head><title>Yardım</title><style>p{color:red}</style></head><body>
    <nav>Menü</nav><h1>Kargo</h1><p>Giriş &amp; bilgi, <b>5.000 TL</b>.</p>
    <h2>Süreler</h2><table><tr><th>Bölge</th><th>Standart</th></tr>
    <tr><td>Köyler</td><td>3-5 iş günü</td></tr></table>
    <ul><li>bir</li><li>iki</li></ul><pre class="language-json">{"a": 1}</pre>
    <h4>Küçük başlık</h4><p>son</p><script>alert(1)</script></body></html>"""
    text, title = html_to_markdown(html)
    assert title == "Yardım"
    assert "alert" not in text and "color" not in text
    assert "| Köyler | 3-5 iş günü |" in text
    assert "- bir\n- iki" in text
    assert '```json\n{"a": 1}\n```' in text
    doc = make_document("k.html", html, "html")
    assert doc.title == "Kargo"
    # <h4> is not a section: only h1-h3 are
    assert [s.path for s in doc.sections] == ["Kargo", "Kargo", "Kargo › Süreler"]


def test_a_pre_in_a_one_cell_layout_table_keeps_its_lines():
    """DocBook's HTML (fontconfig's fonts-conf, many /usr/share/doc pages) frames every
    synopsis and listing in a one-cell table: it stays a fenced block, its lines kept (it
    was one 464-token table row that no --budget could hold)."""
    html = """<h2>Synopsis</h2><TABLE BORDER="0" BGCOLOR="#E0E0E0"><TR><TD><PRE
    CLASS="PROGRAMLISTING">  Property        Type    Description
  family          String  Font family names
  hintstyle       Int     Automatic hinting style</PRE></TD></TR></TABLE>
    <p>After.</p><table><tr><td>cell <pre>a  b</pre></td><td>other</td></tr></table>"""
    text, _ = html_to_markdown(html)
    assert (
        "```\n  Property        Type    Description\n  family          String  Font family names\n"
        "  hintstyle       Int     Automatic hinting style\n```\n\nAfter." in text
    ), text
    assert "| cell a b | other |" in text  # a real table with a <pre> in a cell stays a table


def test_include_exclude_and_skipped_folders(write_files, tmp_path):
    root = write_files(
        {
            "a.md": "# A\n\nx",
            "sub/b.md": "# B\n\ny",
            "sub/deep/c.txt": "z",
            "node_modules/pkg/readme.md": "# no",
            ".git/notes.md": "# no",
            ".venv/x.md": "# no",
            "drafts/d.md": "# no",
            "image.png": b"\x89PNG\r\n\x1a\n\x00\x00",
        }
    )
    found = discover([root], exclude=("drafts/",))
    assert sorted(f.doc_id for f in found.files) == ["a.md", "sub/b.md", "sub/deep/c.txt"]
    assert found.unsupported == {".png": 1}
    found = discover([root], include=("**/*.md",), exclude=("drafts",))
    assert sorted(f.doc_id for f in found.files) == ["a.md", "sub/b.md"]
    found = discover([root], include=("*.txt",))
    assert [f.doc_id for f in found.files] == ["sub/deep/c.txt"]


def test_indexerignore_file_and_the_index_folder_are_skipped(write_files):
    root = write_files({"keep.md": "# K\n\nx", "en/skip.md": "# S\n\ny", ".indexerignore": "# comment\nen/\n"})
    (root / "idx").mkdir()
    (root / "idx" / "inside.md").write_text("# I\n\nz")
    found = discover([root], skip_dirs=(root / "idx",))
    assert [f.doc_id for f in found.files] == ["keep.md"]


def test_hidden_files_and_folders_are_skipped_with_a_note(write_files):
    root = write_files({
        "a.md": "# A\n\nx", ".hidden.md": "# H\n\ny", ".notes/n.md": "# N\n\nz", "sub/.draft.md": "# D\n\nw",
        ".github/CONTRIBUTING.md": "# C\n\nv", ".env": "SECRET=1", ".gitignore": "*.pyc",  # not indexable anyway
        ".git/HEAD.md": "# no", ".venv/x.md": "# no", ".cache/y.md": "# no", ".mypy_cache/z.md": "# no",
    })
    found = discover([root])
    assert [f.doc_id for f in found.files] == ["a.md"]
    assert {s.doc_id: s.reason for s in found.skipped} == {
        ".github": "hidden folder (index it with --include '.github/')",
        ".hidden.md": "hidden file (index it with --include '.hidden.md')",
        ".notes": "hidden folder (index it with --include '.notes/')",
        "sub/.draft.md": "hidden file (index it with --include 'sub/.draft.md')",
    }  # version control, virtual environments and tool caches: silently
    # the hint works, and a pattern naming a hidden path brings it in without narrowing the rest
    found = discover([root], include=(".hidden.md", ".notes/", "sub/.draft.md"))
    assert sorted(f.doc_id for f in found.files) == [".hidden.md", ".notes/n.md", "a.md", "sub/.draft.md"]
    assert [s.doc_id for s in found.skipped] == [".github"]
    assert sorted(f.doc_id for f in discover([root], include=(".*",)).files) == [
        ".github/CONTRIBUTING.md", ".hidden.md", ".notes/n.md", "a.md", "sub/.draft.md"]
    # other include patterns still narrow; exclusions still win; a hidden file named on the command line is read
    assert sorted(f.doc_id for f in discover([root], include=("sub/**", ".notes/")).files) == [".notes/n.md"]
    assert [f.doc_id for f in discover([root], include=(".*",), exclude=(".notes/", "**/.draft.md", ".github")).files] \
        == [".hidden.md", "a.md"]
    assert [f.doc_id for f in discover([root / ".hidden.md"]).files] == [".hidden.md"]
    filt = PathFilter([".notes/"], [])
    assert filt.wanted(".notes/n.md") and filt.wanted("a.md") and not filt.wanted(".hidden.md")


def test_size_caps_must_be_positive(write_files):
    from indexer.errors import UsageError

    root = write_files({"a.md": "# A\n\nx"})
    for caps in ({"max_file_size": 0}, {"max_file_size": -5}, {"max_pdf_pages": 0}):
        with pytest.raises(UsageError, match=r"^max_(file_size|pdf_pages) must be positive, not (0|-5)$"):
            discover([root], **caps)


def test_a_heading_attribute_list_stays_out_of_heading_paths():
    """mkdocs / Python-Markdown attr_list and Pandoc header attributes are markup: the
    heading path loses them, the section's text (an exact slice) keeps them."""
    text = ("# Kılavuz { #kilavuz }\n\nGiriş.\n\n## Kurulum {: #setup .tab data-x=\"a b\" }\n\nAdımlar.\n\n"
            "### Ayarlar {-}\n\nDeğerler.\n\n## Sözlük {placeholder} { .wide }\n\nTerimler.\n\n## Use {name}\n\nx\n")
    doc = make_document("k.md", text)
    assert doc.title == "Kılavuz"
    assert [s.path for s in doc.sections] == ["Kılavuz", "Kılavuz › Kurulum", "Kılavuz › Kurulum › Ayarlar",
                                              "Kılavuz › Sözlük {placeholder}", "Kılavuz › Use {name}"]
    for section in doc.sections:
        assert doc.text[section.start:section.end].startswith("#")
    assert "{: #setup .tab" in doc.text[doc.sections[1].start:doc.sections[1].end]


def test_newlines_are_read_as_python_reads_text_and_the_file_says_which_it_had(tmp_path):
    from indexer.loaders import SourceFile, load_file
    from indexer.loaders.decoding import newline_style

    body = "# Başlık\n\nBir satır.\nİki satır.\n"
    cases = {"lf.md": body.encode(), "crlf.md": body.replace("\n", "\r\n").encode(),
             "cr.md": body.replace("\n", "\r").encode(), "mixed.md": b"# A\r\n\nb\rc\n",
             "bom-crlf.md": b"\xef\xbb\xbf" + body.replace("\n", "\r\n").encode()}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        doc = load_file(SourceFile(tmp_path / name, name, len(data), "markdown"))
        with open(tmp_path / name, encoding="utf-8-sig") as fh:  # universal newlines
            assert doc.text == fh.read(), name
        assert doc.newline == name.split(".")[0].removeprefix("bom-"), name
    assert newline_style("no newline at all") == "lf"


def test_gitignore_style_patterns(tmp_path):
    def keep(include=(), exclude=()):
        filt = PathFilter(include, exclude)
        return lambda rel: filt.wanted(rel)

    assert keep(["*.md"])("a/b/c.md") and not keep(["*.md"])("a/b/c.txt")
    assert not keep(["docs/*.md"])("docs/x/y.md")
    assert keep(["docs/**/*.md"])("docs/x/y.md") and keep(["docs/**/*.md"])("docs/y.md")
    assert not keep(exclude=["build/"])("build/x/y.txt") and PathFilter((), ["build/"]).excluded_dir("build")
    assert not keep(exclude=["draft[0-9].md"])("a/draft3.md") and keep(exclude=["draft[0-9].md"])("a/draftx.md")
    # `!` takes a file back from a broader exclusion (in .indexerignore as on the command line)
    for name, text in {"a.md": "# A\n\nx", "b.md": "# B\n\ny", "keep.md": "# K\n\nz"}.items():
        (tmp_path / name).write_text(text)
    (tmp_path / ".indexerignore").write_text("*.md\n!keep.md\n")
    assert [f.doc_id for f in discover([tmp_path]).files] == ["keep.md"]


def test_decoding_rules():
    assert decode("ğüşİ".encode("utf-8")) == ("ğüşİ", None)
    assert decode(b"\xef\xbb\xbfhello") == ("hello", None)
    assert decode("çay".encode("utf-16"))[0] == "çay"
    text, warning = decode("Teslimat süresi ağır".encode("cp1254"))
    assert text == "Teslimat süresi ağır" and "Windows-1254" in warning
    with pytest.raises(SkipFile, match="binary"):
        decode(b"ELF\x00\x01\x02")
    # UTF-16 saved without a byte-order mark (a stranger's u16.md was "binary"), either order
    for name in ("utf-16-le", "utf-16-be"):
        text, warning = decode("Kargo süresi: iki gün.\n".encode(name))
        assert text == "Kargo süresi: iki gün.\n"
        assert warning == f"{name.upper()} without a byte-order mark; read as {name.upper()}"
    with pytest.raises(SkipFile, match="binary"):  # NULs, but not in every other byte
        decode(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00")
    with pytest.raises(SkipFile, match="not valid UTF-8 nor Windows-1254"):
        decode(b"abc \x81\x8d\x90 def")


def _bad_input_folder(write_files) -> Path:
    big = "# Büyük\n\n" + "kelime " * 200_000
    root = write_files(
        {
            "good.md": "# İyi\n\nBu dosya düzgün.",
            "isim boşluklu ğüş 🙂.md": "# Emoji adı\n\nİçerik.",
            "binary.md": b"\x00\x01\x02\x03binary",
            "invalid-utf8.md": b"abc \x81\x8d\x90 def",
            "utf16.txt": "UTF-16 metin: ğüş".encode("utf-16"),
            "cp1254.md": "# Eski\n\nTürkçe karakterler: ğışçöü".encode("cp1254"),
            "empty.md": "",
            "blank.txt": "  \n\t\n",
            "big.md": big,
            "page.html": "<html><body><script>x()</script></body></html>",
        }
    )
    os.symlink(root, root / "loop")  # a folder symlink back to the root
    os.symlink("self-link.md", root / "self-link.md")  # a symlink to itself
    outside = Path(tempfile.mkdtemp()) / "outside.md"
    outside.write_text("# Dışarıda\n\nsecret")
    os.symlink(outside, root / "outside-link.md")
    os.symlink(root / "good.md", root / "inside-link.md")
    return root


def test_bad_input_folder_is_indexed_without_crashing(write_files):
    root = _bad_input_folder(write_files)
    found, docs = load_all(root, max_file_size=1024 * 1024)
    reasons = {s.doc_id: s.reason for s in found.skipped}
    assert set(docs) == {"good.md", "isim boşluklu ğüş 🙂.md", "utf16.txt", "cp1254.md"}
    assert docs["cp1254.md"].text.endswith("ğışçöü")
    assert docs["utf16.txt"].text == "UTF-16 metin: ğüş"
    assert [w.doc_id for w in found.warnings] == ["cp1254.md"]
    assert "binary" in reasons["binary.md"]
    assert "not valid UTF-8" in reasons["invalid-utf8.md"]
    assert "empty" in reasons["empty.md"] and "empty" in reasons["blank.txt"]
    assert "size cap" in reasons["big.md"] and "--max-file-size" in reasons["big.md"]
    assert "without visible text" in reasons["page.html"]
    assert "loop" in reasons["self-link.md"]
    assert "outside" in reasons["outside-link.md"]
    assert reasons["inside-link.md"] == "symlink to good.md, indexed there"  # indexed once
    assert "loop" in reasons["loop"] or "already indexed" in reasons["loop"]


def test_unreadable_file_is_skipped_with_its_reason(tmp_path):
    """Root reads any file, so when the tests run as root the check runs as `nobody`."""
    root = Path(tempfile.mkdtemp())
    os.chmod(root, 0o755)
    (root / "ok.md").write_text("# OK\n\nfine")
    secret = root / "secret.md"
    secret.write_text("# Gizli\n\nno")
    os.chmod(secret, 0o000)
    code = (
        "from indexer.loaders import load_documents;"
        f"f, d = load_documents([{str(root)!r}]); ids = [x.doc_id for x in d];"
        "print(ids, [(s.doc_id, s.reason) for s in f.skipped])"
    )
    cmd = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        if not Path("/usr/bin/setpriv").exists():
            pytest.skip("running as root without setpriv: cannot make a file unreadable")
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent), HOME=str(root))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root)
    assert out.returncode == 0, out.stderr
    assert "['ok.md']" in out.stdout
    assert "('secret.md', 'unreadable (permission denied); fix its permissions or exclude it')" in out.stdout


# ---------------------------------------------------------------- heading paths (issue 35, item 10)

TWO_H1 = "# One\n\nFirst.\n\n## Under one\n\nMore.\n\n# Two\n\nSecond.\n\n## Under two\n\nLast.\n"
TWO_H1_PATHS = ["One", "One › Under one", "Two", "Two › Under two"]


def test_a_later_h1_is_a_sibling_of_the_first_not_under_it():
    doc = make_document("notes.md", TWO_H1)
    assert doc.title == "One"
    assert [s.path for s in doc.sections] == TWO_H1_PATHS


def test_a_title_that_is_no_heading_heads_every_path():
    """A title of its own (a PDF's metadata, an HTML <title> with no <h1>, the file name)
    stays in front of every path."""
    doc = make_document("notes.md", TWO_H1, title="Field Notes")
    assert [s.path for s in doc.sections] == ["Field Notes › " + p for p in TWO_H1_PATHS]
    doc = make_document("notes.md", TWO_H1.replace("# ", "## "))
    assert [s.path for s in doc.sections] == ["notes › One", "notes › One › Under one", "notes › Two",
                                              "notes › Two › Under two"]


def test_html_h1s_are_siblings():
    html = ("<html><head><title>Site</title></head><body><h1>One</h1><p>First.</p><h2>Under one</h2><p>More.</p>"
            "<h1>Two</h1><p>Second.</p><h2>Under two</h2><p>Last.</p></body></html>")
    doc = make_document("page.html", html, "html")
    assert [s.path for s in doc.sections] == TWO_H1_PATHS


def test_pdf_chapters_are_siblings_in_heading_paths_and_chunk_headers(tmp_path):
    """A PDF without a metadata title takes its first chapter's heading as its title;
    the chapters after it are not under it (a 2,000-page manual had every header start
    with chapter 1's title)."""
    from indexer.chunkers import parse_strategy
    from tests.pdf_documents import Sheet

    root = tmp_path / "pdf"
    root.mkdir()
    sheet = Sheet(root / "kilavuz.pdf")
    for chapter, section in (("Kurulum", "Gereksinimler"), ("Yedekleme", "Disk alanı"), ("Güncelleme", "Sürümler")):
        sheet.text(72, 90, chapter, 18, bold=True)
        sheet.text(72, 120, "Bu bölüm " + chapter.lower() + " işini adım adım anlatır ve örnekler verir.")
        sheet.text(72, 150, section, 13, bold=True)
        sheet.text(72, 175, "Bu kısım " + section.lower() + " konusunu ayrıntılarıyla açıklar.")
        sheet.page()
    sheet.save()
    [doc] = load_documents([root])[1]
    assert doc.title == "Kurulum"
    assert [s.path for s in doc.sections] == [
        "Kurulum", "Kurulum › Gereksinimler", "Yedekleme", "Yedekleme › Disk alanı", "Güncelleme", "Güncelleme › Sürümler",
    ]
    headers = [c.header.split("\n")[0] for c in parse_strategy("headers").create().chunk(doc)]
    assert headers[2:] == ["Yedekleme", "Yedekleme › Disk alanı", "Güncelleme", "Güncelleme › Sürümler"]
    blocks = parse_strategy("blocks:target=400,hard_max=512").create().chunk(doc)
    assert len(blocks) == 1 and "sections: Gereksinimler; Yedekleme; Yedekleme › Disk alanı" in blocks[0].header


def test_yaml_front_matter_is_one_block_and_no_heading(tmp_path):
    """typer's SKILL.md had the header `sections: name: typer description: ...` (the closing
    `---` underlined the lines above it as a heading), and a model card's `# For reference
    ...` comment became the document's title. A `---` rule with prose after it stays a rule."""
    (tmp_path / "SKILL.md").write_text("---\nname: typer\ndescription: Typer best practices\n---\n\n# Typer\n\n"
                                       "Use Annotated for every parameter.\n", encoding="utf-8")
    (tmp_path / "card.md").write_text("---\n# For reference on model card metadata, see the spec\nlicense: mit\n"
                                      "---\n\n# Model card\n\nTrained on public data only.\n", encoding="utf-8")
    (tmp_path / "rule.md").write_text("---\n\nA note before the title.\n\nIntroduction\n---\n\nBody text.\n",
                                      encoding="utf-8")
    docs = {d.doc_id: d for d in load_documents([tmp_path])[1]}
    assert docs["SKILL.md"].title == "Typer" and docs["card.md"].title == "Model card"
    for name in ("SKILL.md", "card.md"):
        assert {h for s in docs[name].sections for h in s.heading_path} == {docs[name].title}
        first = blocks_of(docs[name])[0]
        assert first.kind == "code" and docs[name].text[first.start:first.end].endswith("\n---")
    assert docs["rule.md"].sections[-1].heading_path[-1] == "Introduction"  # a setext heading stays one
