"""Passages a made-up question can target: sentences, list items and table rows of prose
documents, minus boilerplate (tables of contents, link lists, licence text, navigation,
code), each with the span a hit must overlap (its section when the section is short,
else its paragraph, table or list).

`passages(doc)` lists a document's candidates in document order; `boilerplate_reason`
says why a whole file is not worth asking about (a licence, an authors list).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..loaders.markdown import Block, blocks_of
from ..text.sentences import split_sentences
from ..text.spans import lstrip_start
from ..types import Document
from .unasked import LICENCE_TEXT, LINK, WORDS, credits_or_licence, not_asked, plain_words

# a section under this many words is the target as a whole (like a question set that names
# the section); a longer one points at the paragraph, table or list holding the answer
SECTION_WORDS = 150
MIN_WORDS = 4  # words with letters in a passage...
MIN_WORDS_ALONE = 2  # ...or in a shorter sentence when the document says nothing longer
MAX_WORDS = 80  # longer "sentences" are run-on text (a paragraph without stops): cut to the words drawn from

_BULLET = re.compile(r"[-*+•]\s")

# headings of sections nobody asks about (matched on the casefolded heading)
_BOILERPLATE_HEADINGS = re.compile(
    r"^\W*(licen[cs]e|lisans|copyright|"
    r"telif( hakkı)?|references|kaynaklar|kaynakça|kaynakca|bibliography|see also|ayrıca bakınız|"
    r"(external |related |useful )?links|(dış |ilgili )?bağlantılar|"
    r"acknowledg(e)?ments?|teşekkür(ler)?|contributors|katkıda bulunanlar|sponsors|footnotes|dipnotlar|notes|"
    r"colophon|reporting bugs|report(ing)? bugs|bug reports|authors?|yazar(lar)?|hata bildirimi)\W*$"
)
# headings of a list of the page itself: only their own section is skipped, since a Sphinx page
# nests its whole text under a "Contents" heading
_CONTENTS_HEADINGS = re.compile(
    r"^\W*(table of contents|contents|toc|index|içindekiler|icindekiler|dizin|navigation|menu|menü|"
    r"site map|sitemap)\W*$"
)
# a GNU manual's navigation line ("Next: Types, Previous: The Basics, Up: Using libffi [Index]")
_NAVIGATION = re.compile(r"^\W*(next|previous|up):\s[^\n]*\[(contents|index)\]\s*$", re.I)
# a file named by its licence's id (`Apache-2.0.txt`, `BSD`, `GPL-3`, `LGPL-2.1`, `MIT`)
_LICENCE_ID = re.compile(
    r"(apache|bsd|[al]?gpl|gfdl|mpl|epl|mit|isc|artistic|unlicense|cc0|cc_by\w*)(_\d\w*)?"
)
# a line that stands for a heading though the document did not mark it as one: wholly bold or
# italic (`**2.3.4 Arrays, Unions, and Enumerations**`), or a section number and a title
# without a sentence's closing stop (`4.2 Results`)
_EMPHASIS_ONLY = re.compile(r"^\s*(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1\s*$", re.S)
TITLE_WORDS = 12  # a numbered line longer than this is a sentence, not a title
_NUMBERED_TITLE = re.compile(r"^\s*(\d+(\.\d+)*\.?|[IVX]+\.)\s+\S[^\n]*(?<![.!?:;…])\s*$")
# a plain-text (org-mode) heading line: stars, a title, no closing stop ("** What is an IOBUF")
_STARRED_TITLE = re.compile(r"^\*{1,6} \S[^\n]*(?<![.!?:;…])$")
_BOILERPLATE_FILES = {
    "license",
    "licence",
    "copying",
    "notice",
    "authors",
    "contributors",
    "copyright",
    "credits",
    "thanks",
    "maintainers",
    "acknowledgements",
    "acknowledgments",
}


@dataclass(frozen=True, slots=True)
class Passage:
    """One candidate answer: `start`/`end` is the answer (an exact slice of the document),
    `target` the span a retrieved chunk must overlap. For a table row, `header` is the
    header row's span (its column names say what the row's cells mean)."""

    doc_id: str
    start: int
    end: int
    kind: str  # sentence | item | row
    section: int  # index into doc.sections
    target: tuple[int, int]
    header: tuple[int, int] | None = None


def boilerplate_reason(doc: Document) -> str:
    """Why a whole document is skipped ("" when it is not): licence and authors files,
    or a document that is mostly licence text."""
    stem = PurePosixPath(doc.doc_id).name.split(".")[0].lower().replace("-", "_")
    if _boilerplate_name(stem):
        return f"{stem.upper()} file"
    return "licence text" if _licence_from_the_top(doc) else ""


def _boilerplate_name(stem: str) -> bool:
    """A licence, copying or authors file by its name."""
    return (
        stem in _BOILERPLATE_FILES
        or stem.startswith(("license_", "licence_", "copying_"))
        or bool(_LICENCE_ID.fullmatch(stem))
    )


def _licence_from_the_top(doc: Document) -> bool:
    """Prose whose first block is licence text, with more of it in the first 1,500
    characters."""
    if doc.format == "code":
        return False
    first = next((b for b in blocks_of(doc) if b.kind != "heading"), None)
    return (
        first is not None
        and bool(LICENCE_TEXT.search(doc.text, first.start, first.end))
        and len(LICENCE_TEXT.findall(doc.text[:1500])) >= 2
    )


def _boilerplate_sections(doc: Document) -> set[int]:
    """Sections under a boilerplate heading (at any level of their path), and those headed
    as a table of contents or navigation themselves."""
    out = set()
    for i, s in enumerate(doc.sections):
        trail = s.trail(doc.title)
        if any(_BOILERPLATE_HEADINGS.match(h.casefold()) for h in trail) or (
            trail and _CONTENTS_HEADINGS.match(trail[-1].casefold())
        ):
            out.add(i)
    return out


def _link_heavy(text: str) -> bool:
    """A line that is mostly links (a link list, navigation, a table of contents)."""
    links = sum(m.end() - m.start() for m in LINK.finditer(text))
    anchors = " ".join(m.group(1) or "" for m in LINK.finditer(text))
    rest = LINK.sub(" ", text)
    return links > 0 and (
        links > 0.5 * len(text.strip())
        or len(WORDS.findall(rest)) < MIN_WORDS
        and len(WORDS.findall(anchors)) < 2 * MIN_WORDS
    )


def _codelike(text: str) -> bool:
    symbols = sum(text.count(c) for c in "{}();=<>[]$\\")
    return symbols > 0.08 * len(text)


def _usable(text: str, min_words: int = MIN_WORDS) -> bool:
    words = plain_words(text)
    if len(words) < min_words or _link_heavy(text) or _codelike(text):
        return False
    letters = sum(ch.isalpha() for ch in text)
    return letters >= 0.5 * len(text.strip())


def _cells(text: str) -> list[str]:
    return [c.strip() for c in text.strip().strip("|").split("|")]


@dataclass
class _Targets:
    """The span a passage's hit must overlap: its section when the section is short (under
    `section_words` words, counted once per section), else the block holding it."""

    doc: Document
    section_words: int
    sizes: dict[int, int] = field(default_factory=dict)

    def of(self, sec: int, block: tuple[int, int]) -> tuple[int, int]:
        if not self.doc.sections:
            return block
        s = self.doc.sections[sec]
        if sec not in self.sizes:
            self.sizes[sec] = len(plain_words(self.doc.text[s.body_start : s.end]))
        if s.level > 0 and self.sizes[sec] <= self.section_words:
            return (s.start, s.end)
        return block


def passages(doc: Document, section_words: int = SECTION_WORDS) -> list[Passage]:
    """A prose document's candidate passages in document order (none for code). A
    sentence under MIN_WORDS words is a fragment beside longer ones, but in a document
    that says nothing longer (`Shipping is free.`) it is what the document says; not on a
    manual's page (with a navigation line, never a target), where it is the page's menu."""
    if doc.format == "code" or not doc.text.strip():
        return []
    reader = _Reader(doc, section_words)
    blocks = list(blocks_of(doc))
    for block, following in zip(blocks, [*blocks[1:], None]):
        reader.read(block, following)
    # a manual's page that says nothing longer is its menu ("- The Basics"), not an answer
    return _unique(doc, reader.out or ([] if reader.paged else reader.short))


class _Reader:
    """A document's blocks read in order into passages (`out`), the sentences under
    MIN_WORDS words (`short`: kept only when nothing longer is found), and whether the
    document is a manual's page with a navigation line (`paged`)."""

    def __init__(self, doc: Document, section_words: int) -> None:
        self.doc = doc
        self.starts = [s.start for s in doc.sections]
        self.skip = _boilerplate_sections(doc)
        self.targets = _Targets(doc, section_words)
        self.out: list[Passage] = []
        self.short: list[Passage] = []
        self.paged = False

    def read(self, block: Block, following: Block | None) -> None:
        doc = self.doc
        if _NAVIGATION.match(doc.text[block.start : block.end]):
            self.paged = True
            return
        sec = max(0, bisect.bisect_right(self.starts, block.start) - 1)
        if not _askable(doc, block, sec, self.skip):
            return
        target = self.targets.of(sec, (block.start, block.end))
        if block.kind == "table":
            self.out.extend(_rows(doc, block, sec, target))
            return
        usable, alone = _sentences(doc, block, sec, target, _lead_in(doc, block, following))
        self.out.extend(usable)
        self.short.extend(alone)


def _askable(doc: Document, block: Block, sec: int, skip: set[int]) -> bool:
    """A block that may hold passages: not a heading, code, HTML or a rule, not under a
    boilerplate heading, no licence or copyright footer, not a line standing for a heading
    and not a paper's credits."""
    if block.kind in ("heading", "code", "html", "rule") or sec in skip:
        return False
    text = doc.text[block.start : block.end]
    if block.kind == "paragraph" and (heading_like(text) or _starred_titles(text)):
        return False
    return not credits_or_licence(text)


def _lead_in(doc: Document, block: Block, following: Block | None) -> bool:
    """A paragraph whose last sentence ends in a colon right before a code block, a list or
    a table ("After you have prepared your changes, run:", "The following options are
    accepted:"): that sentence introduces what follows and says nothing of its own. Plain
    text marks none of them, so there it is any paragraph indented deeper or starting with
    a bullet (a man page's "... can be found at:" over its indented address)."""
    text = doc.text[block.start : block.end].strip()
    return (
        block.kind == "paragraph"
        and following is not None
        and (
            following.kind in ("code", "list", "table", "quote")
            or (doc.format == "text" and _set_off(doc.text, block, following))
        )
        and text.endswith(":")
    )


def _set_off(text: str, block: Block, following: Block) -> bool:
    """A plain-text paragraph that reads as code or a list under `block`: its first line
    indented deeper, or starting with a bullet. A `block` whose first line is a term over
    an indented description (a man page's "-type c" over "File is of type c:") is an
    entry, not a lead-in."""
    first = _indent(text, block.start)
    second = text.find("\n", block.start, block.end) + 1
    if second and _indent(text, lstrip_start(text, second, block.end)) > first:
        return False
    return _indent(text, following.start) > first or bool(_BULLET.match(text, following.start))


def _indent(text: str, pos: int) -> int:
    """The column `pos` starts at on its line (tabs to the next multiple of 8)."""
    line_start = text.rfind("\n", 0, pos) + 1
    return len(text[line_start:pos].expandtabs())


def _after_title(text: str, start: int, end: int) -> int:
    """Where a plain-text paragraph's sentences start: after its first line when that line is
    a title (TITLE_WORDS words or fewer, no closing stop or comma, a question heading too; over
    more lines, short beside the next, which starts a sentence)."""
    nl = text.find("\n", start, end)
    line = text[start : end if nl < 0 else nl].strip()
    if not _could_be_title(line):
        return start
    if nl < 0:  # a paragraph of one line: a question heading, a title-cased line, or a few words
        return end if _one_line_title(line) else start
    following = text[nl + 1 : end].split("\n", 1)[0].strip()
    return nl + 1 if _titles(line, following) else start


def _could_be_title(line: str) -> bool:
    """A line short enough, not ending a sentence or a clause, not a list item."""
    return (
        bool(line)
        and len(line.split()) <= TITLE_WORDS
        and line[-1] not in ".!:;,…"
        and line[0] not in "-*+•"
    )


def _one_line_title(line: str) -> bool:
    """A paragraph of one line that is a title: a question, a few words, or title-cased."""
    words = line.split()
    capitalised = sum(w[:1].isupper() or w[:1].isdigit() for w in words)
    return (
        line.endswith("?") or len(words) <= 4 or (len(words) <= 8 and 2 * capitalised >= len(words))
    )


def _titles(line: str, following: str) -> bool:
    """The first line titles the next one: the next starts a sentence (capital or digit) and
    the first is short beside it (a hard-wrapped sentence's first line is as long as the
    next, which goes on in lower case)."""
    starts = following[:1].isupper() or following[:1].isdigit()
    return starts and len(line) <= 0.6 * len(following)


def _starred_titles(text: str) -> bool:
    """Lines that are all plain-text (org-mode) headings: `* Windows` over `** How to build
    an installer for Windows`."""
    return all(_STARRED_TITLE.match(line.strip()) for line in text.strip().splitlines())


def heading_like(text: str) -> bool:
    """One line that stands for a heading the document did not mark: wholly emphasised, or
    a section number and a title without a closing stop."""
    line = text.strip()
    if "\n" in line:
        return False
    if _EMPHASIS_ONLY.match(line):
        return True
    title = line.rstrip("\"'”’»)]")
    return (
        len(title.split()) <= TITLE_WORDS
        and not re.search(r"[.!?…]\s", title)
        and bool(_NUMBERED_TITLE.match(title))
    )


def _rows(doc: Document, block: Block, sec: int, target: tuple[int, int]) -> list[Passage]:
    """A table's rows with at least two cells and enough words (with the column names)."""
    if len(block.parts) < 2:
        return []
    text = doc.text
    header = block.parts[0]
    header_line = text[header[0] : header[1]].split("\n")[0]
    names = [c for c in _cells(header_line) if c]
    name_words = len(plain_words(" ".join(names)))
    header_span = (header[0], header[0] + len(header_line))
    return [
        Passage(doc.doc_id, s, e, kind="row", section=sec, target=target, header=header_span)
        for s, e in block.parts[1:]
        if _row_worth(text[s:e], name_words)
    ]


def _row_worth(row: str, name_words: int) -> bool:
    """A table row worth a question: two cells or more, with enough words beside the
    column names' `name_words`."""
    cells = [c for c in _cells(row) if c]
    words = plain_words(" ".join(cells))
    return len(cells) >= 2 and len(words) + name_words >= MIN_WORDS and bool(words)


def _sentences(
    doc: Document, block: Block, sec: int, target: tuple[int, int], lead_in: bool = False
) -> tuple[list[Passage], list[Passage]]:
    """A block's passages of MIN_WORDS words or more, and those of MIN_WORDS_ALONE or more
    (what a document says when it says nothing longer); with `lead_in`, not its last."""
    usable: list[Passage] = []
    alone: list[Passage] = []
    pieces = _pieces(doc.text, block, doc.format == "text")
    for s, e, kind in pieces[:-1] if lead_in else pieces:
        text = doc.text[s:e]
        if not_asked(text):
            continue
        if _usable(doc.text[s:e]):
            usable.append(Passage(doc.doc_id, s, e, kind=kind, section=sec, target=target))
        elif _usable(doc.text[s:e], MIN_WORDS_ALONE):
            alone.append(Passage(doc.doc_id, s, e, kind=kind, section=sec, target=target))
    return usable, alone


def _pieces(text: str, block: Block, plain: bool = False) -> list[tuple[int, int, str]]:
    """A list's items (each line's sentences) or a paragraph's sentences: (start, end, kind).
    In plain text (`plain`) a paragraph's first line that reads as a title ("Şifrenin
    geçerlilik süresi" over its text, "Şifremi unuttum, ne yapmalıyım?" alone) is none."""
    if block.kind != "list":
        start = _after_title(text, block.start, block.end) if plain else block.start
        return [(s, e, "sentence") for s, e in split_sentences(text, start, block.end)]
    items = block.parts or ((block.start, block.end),)
    return [
        (s, e, "item")
        for a, b in items
        for line in _item_lines(text, a, b)
        for s, e in split_sentences(text, *line)
    ]


_ITEM_START = re.compile(r"\s*([-*+•]|\d{1,9}[.)])\s")


def _item_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """An item's lines, each line that opens a (nested) item with those that continue it: a
    hard-wrapped item ("- `set_key` only modified the affected file instead of\n  parsing
    and re-writing file") is one piece, not a fragment per line."""
    out: list[tuple[int, int]] = []
    for m in re.finditer(r"[^\n]+", text[start:end]):
        s, e = m.start() + start, m.end() + start
        if out and not _ITEM_START.match(text, s) and text[s:e].strip():
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _unique(doc: Document, found: list[Passage]) -> list[Passage]:
    """Drop passages whose text occurs more than once in the document (a repeated
    sentence is no known item: the question could not say which one it means)."""
    seen: dict[str, int] = {}
    for p in found:
        key = " ".join(doc.text[p.start : p.end].split()).casefold()
        seen[key] = seen.get(key, 0) + 1
    return [p for p in found if seen[" ".join(doc.text[p.start : p.end].split()).casefold()] == 1]
