"""HTML definition lists: a term (`<dt>`) stays with its description (`<dd>`). A stranger's
`/usr/share/doc/base-passwd/users-and-groups.html` built with `auto` (blocks) had four of
its six chunks end on a bare group name ("daemon", "audio", "users") whose description
opened the next chunk, under no heading that named the group."""

from __future__ import annotations

from indexer.chunkers import parse_strategy
from indexer.loaders import make_document
from indexer.loaders.html import html_to_markdown

GROUPS = ["daemon", "audio", "users", "video", "plugdev", "staff", "shadow", "utmp"]


def _page() -> str:
    entries = "".join(
        f"<DT>{g}</DT><DD><P>The {g} group " + "lets its members reach the devices it owns and " * 14
        + f"nothing else; add a user to {g} only when needed.</P></DD>"
        for g in GROUPS
    )
    return f"<html><body><h1>Users and Groups</h1><DL>{entries}</DL></body></html>"


def test_a_term_and_its_description_are_one_block():
    text, _ = html_to_markdown(
        "<dl><dt>audio</dt><dd><p>Access to an audio device.</p><p>More.</p></dd>"
        "<dt>-a</dt><dt>--all</dt><dd>Show all.</dd><dt>lst</dt><dd><ul><li>one</li></ul></dd></dl>"
    )
    assert text.split("\n\n") == [
        "audio\nAccess to an audio device.", "More.", "-a\n--all\nShow all.", "lst", "- one"
    ]


def test_no_chunk_ends_on_a_bare_term():
    doc = make_document("users-and-groups.html", _page(), "html")
    chunks = parse_strategy("blocks").create().chunk(doc)
    assert len(chunks) > 2
    last_lines = [doc.text[c.start : c.end].rstrip().rsplit("\n", 1)[-1] for c in chunks]
    assert not set(last_lines) & set(GROUPS), last_lines


def test_a_new_chunk_format_makes_the_made_up_set_again(write_files, tmp_path, monkeypatch):
    """A made-up set's spans point into the text a loader makes of each file: reused after
    the HTML conversion changed (chunk format 17), 28 of 50 questions on the same unchanged
    files stopped matching ("answer not found in libffi-The-Basics.html") and eval failed."""
    from indexer.questions import reuse

    folder = write_files({"groups.html": _page()})
    cache = tmp_path / "questions"
    path, made = reuse.cached_questions(folder, 5, folder=cache, seed=1)
    assert made is not None and reuse.cached_questions(folder, 5, folder=cache, seed=1) == (path, None)
    monkeypatch.setattr(reuse, "CHUNK_FORMAT", getattr(reuse, "CHUNK_FORMAT", 16) + 1, raising=False)
    again, remade = reuse.cached_questions(folder, 5, folder=cache, seed=1)
    assert again != path and remade is not None


def test_permalink_anchors_are_no_text():
    """Sphinx's `<a class="headerlink">¶</a>` and Texinfo's `copiable-anchor` put "¶" after
    every heading and term: a stranger's heading paths read `Contents¶ › 4.2. Wheels¶` and an
    answer `Data type: ffi_type ¶`. A link to a section with words keeps them."""
    html = ('<html><body><h1>Policy<a class="headerlink" href="#policy" title="Link to this heading">¶</a></h1>'
            '<h2>4.2 Wheels<a href="#wheels">#</a></h2><p>Wheels are not shipped; see <a href="#intro">the '
            'introduction</a>.</p><dl class="def"><dt><span>Data type: <strong>ffi_type</strong>'
            "<a href='#index-ffi' class='copiable-anchor'> &para;</a></span></dt><dd><p>The type.</p></dd></dl>"
            '</body></html>')
    text, _ = html_to_markdown(html)
    assert "¶" not in text and "Wheels#" not in text and "Wheels #" not in text
    assert "# Policy\n" in text and "## 4.2 Wheels\n" in text
    assert "see the introduction." in text
    doc = make_document("policy.html", html, fmt="html")
    assert [s.heading_path for s in doc.sections] == [("Policy",), ("Policy", "4.2 Wheels")]
