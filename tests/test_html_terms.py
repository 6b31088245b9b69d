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
