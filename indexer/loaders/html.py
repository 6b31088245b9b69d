"""HTML to Markdown-shaped text with the standard library's HTML parser.

The extracted text is what gets chunked (spans point into it): `<h1>`–`<h3>` become
Markdown headings and so the section structure; `<h4>`–`<h6>` become bold lines; lists,
tables and `<pre>` blocks keep their shape (list items, pipe tables, fenced code) so the
structure-aware strategies see them; scripts, styles and other invisible content are
dropped. An inline SVG keeps the words of its `<text>` elements, in the order the page
draws them (SQLite's syntax diagrams: `VACUUM schema-name INTO filename`); a superscript
follows a `^` (`2^31-1`, `O(N^2)`), but for an ordinal's letters (`1st`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

from .markdown import text_line

_SKIP = {"script", "style", "noscript", "template", "iframe", "object", "canvas"}
_SVG_LINE = {"x", "y", "dy"}  # a <tspan> placed by these starts a line of its <text>
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "nav",
    "form",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "address",
    "details",
    "summary",
    "fieldset",
    "body",
    "html",
}
_WS = re.compile(r"\s+")
_Attrs = list[tuple[str, str | None]]


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.skip_depth = 0
        self.title = ""
        self.in_title = False
        # inside a heading's permalink anchor (Sphinx's "¶"), or any <a href="#...">, where a
        # lone "¶" or "#" is one too: its text is dropped
        self.permalink = False
        self.local_link = False
        self.pre_depth = 0
        self.pre_lang = ""
        self.pre_text: list[str] = []
        self.lists: list[list] = []  # [kind, counter, the item has a line already]
        self.svg_depth = 0  # inside an inline <svg>: only the words of its <text> show
        self.svg_text = 0
        self.sups: list[tuple[list[str], int]] = []  # each open <sup>: its text's list, start
        self.quote_depth = 0
        self.heading: int = 0
        self.table: list[list[str]] | None = None
        self.table_header_rows = 0
        self.table_pres: list[tuple[str, str]] = []  # (text, fenced block) of its cells' <pre>s
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.row_is_header = False
        self.prev_item = False
        self.term = False  # the last block is a <dt>'s term: the next text joins it

    # -- helpers -----------------------------------------------------------------------
    def _flush_inline(self) -> None:
        text = _WS.sub(" ", "".join(self.inline)).strip()
        self.inline = []
        if not text:
            return
        text = self._marked(text)
        if self.lists and self.prev_item and self.blocks:
            self.blocks[-1] += "\n" + text  # keep a list tight: one block, one item per line
        elif self.term and not self.lists and not self.heading and self.blocks:
            self.blocks[-1] += "\n" + text  # a term and its description: one block
        else:
            self.blocks.append(text)
        self.prev_item = bool(self.lists) and not self.heading
        self.term = False

    def _marked(self, text: str) -> str:
        """A line of text with its Markdown marks: heading, list item, quote (a line
        that would read as a mark is escaped)."""
        if self.heading:
            level = self.heading
            text = "#" * level + " " + text if level <= 3 else f"**{text}**"
        elif self.lists:
            text = "  " * (len(self.lists) - 1) + self._item_mark() + text
        else:
            text = text_line(text)
        if self.quote_depth:
            text = "> " * self.quote_depth + text
        return text

    def _item_mark(self) -> str:
        """A list item's marker (`1. `, `- `) before its first line; before the lines after
        it (a second paragraph of the item) as many spaces, so it is not numbered again."""
        item = self.lists[-1]
        marker = f"{item[1]}. " if item[0] == "ol" else "- "
        first, item[2] = not item[2], True
        return marker if first else " " * len(marker)

    def _emit(self, text: str) -> None:
        self._flush_inline()
        self.blocks.append(text)
        self.prev_item = self.term = False

    def _end_term(self, tag: str) -> None:
        """A `<dt>`'s text stays with the description after it (`<dd>`): a chunk that ends
        on a bare term ("audio") leaves its description to a chunk that does not name it."""
        had_text = bool("".join(self.inline).strip())
        self._flush_inline()
        self.term = had_text or self.term

    # -- parser callbacks --------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg" or self.svg_depth:
            self._start_in_svg(tag, attrs)
            return
        if tag == "a":
            self.permalink, self.local_link = _is_permalink(attrs), _is_local_link(attrs)
        if tag == "title":
            self.in_title = True
        elif tag in _SKIP:
            self.skip_depth += 1
        elif not self.skip_depth:
            self._start_shown(tag, attrs)

    def _start_shown(self, tag: str, attrs: _Attrs) -> None:
        """An opening tag outside skipped content."""
        if self.pre_depth:
            self._start_in_pre(tag)
        elif self.cell is not None:
            self._start_in_cell(tag, attrs)
        else:
            handler = _STARTS.get(tag)
            if handler is not None:
                handler(self, tag, attrs)
            elif tag in _BLOCK:
                self._flush_inline()

    def _start_in_cell(self, tag: str, attrs: _Attrs) -> None:
        """An opening tag inside a table cell: its text is one line."""
        if tag == "br":
            self._target().append(" ")
        elif tag == "pre":
            self._start_pre(tag, attrs)
        elif tag == "sup":
            self._start_sup(tag, attrs)

    def _start_in_svg(self, tag: str, attrs: _Attrs) -> None:
        """An SVG element: a `<text>` shows words, and a `<tspan>` placed on a line of its
        own is a word apart."""
        self.svg_depth += tag == "svg"
        self.svg_text += tag == "text"
        if tag == "tspan" and any(k in _SVG_LINE for k, _ in attrs):
            self.handle_data(" ")

    def _end_in_svg(self, tag: str) -> None:
        """The end of an SVG element: a space after the words of each of its texts."""
        if tag == "text" and self.svg_text:
            self.handle_data(" ")
            self.svg_text -= 1
        self.svg_depth -= tag == "svg"

    def _start_sup(self, tag: str, attrs: _Attrs) -> None:
        target = self._target()
        self.sups.append((target, len(target)))

    def _end_sup(self, tag: str) -> None:
        """`2<sup>31</sup>` is `2^31`, not `231`, and `O(N<sup>2</sup>)` is `O(N^2)`; after
        no word (a footnote's `↩<sup>2</sup>`) and in an ordinal (`1<sup>st</sup>`) nothing
        is added."""
        if not self.sups:
            return
        target, at = self.sups.pop()
        before, sup = "".join(target[:at]), "".join(target[at:]).strip()
        after_word = bool(before) and (before[-1].isalnum() or before[-1] in ")]")
        if after_word and sup and not (before[-1].isdigit() and sup.isalpha()):
            target.insert(at, "^")

    def _target(self) -> list[str]:
        """Where the text read now goes: the open table cell's, else the line's."""
        return self.cell if self.cell is not None else self.inline

    def _start_in_pre(self, tag: str) -> None:
        if tag == "pre":
            self.pre_depth += 1
        elif tag == "br":
            self.pre_text.append("\n")

    def _start_heading(self, tag: str, attrs: _Attrs) -> None:
        self._flush_inline()
        self.heading = int(tag[1])

    def _start_pre(self, tag: str, attrs: _Attrs) -> None:
        self._flush_inline()
        self.pre_depth = 1
        self.pre_text = []
        cls = dict(attrs).get("class") or ""
        match = re.search(r"(?:language|lang)-([\w+-]+)", cls)
        self.pre_lang = match.group(1) if match else ""

    def _start_list(self, tag: str, attrs: _Attrs) -> None:
        self._flush_inline()
        self.lists.append([tag, 0, False])

    def _start_item(self, tag: str, attrs: _Attrs) -> None:
        self._flush_inline()
        if self.lists:
            self.lists[-1][1] += 1
            self.lists[-1][2] = False

    def _start_quote(self, tag: str, attrs: _Attrs) -> None:
        self._flush_inline()
        self.quote_depth += 1

    def _start_table(self, tag: str, attrs: _Attrs) -> None:
        self._flush_inline()
        self.table = []
        self.table_header_rows = 0
        self.table_pres = []

    def _start_row(self, tag: str, attrs: _Attrs) -> None:
        if self.table is not None:
            self.row = []
            self.row_is_header = False

    def _start_cell(self, tag: str, attrs: _Attrs) -> None:
        if self.row is not None:
            self.cell = []
            self.row_is_header = self.row_is_header or tag == "th"

    def _start_break(self, tag: str, attrs: _Attrs) -> None:
        self.inline.append("\n")
        self._flush_inline()

    def _start_rule(self, tag: str, attrs: _Attrs) -> None:
        self._emit("---")

    def _start_image(self, tag: str, attrs: _Attrs) -> None:
        alt = dict(attrs).get("alt")
        if alt:
            self.inline.append(alt)

    def handle_endtag(self, tag: str) -> None:
        if self.svg_depth:
            self._end_in_svg(tag)
        else:
            self._end(tag)

    def _end(self, tag: str) -> None:
        if tag == "a":
            self.permalink = self.local_link = False
        if tag == "title":
            self.in_title = False
        elif tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif self.skip_depth:
            return
        elif self.pre_depth:
            if tag == "pre":
                self._end_pre()
        else:
            handler = _ENDS.get(tag)
            if handler is not None:
                handler(self, tag)
            elif tag in _BLOCK:
                self._flush_inline()

    def _end_pre(self) -> None:
        self.pre_depth -= 1
        if not self.pre_depth:
            code = "".join(self.pre_text).strip("\n")
            fence = "```" if "```" not in code else "~~~~"
            fenced = f"{fence}{self.pre_lang}\n{code}\n{fence}"
            if self.cell is None:
                self._emit(fenced)
            else:  # the cell's text, unless the table turns out to be a frame (_end_table)
                self.cell.append(code)
                self.table_pres.append((code, fenced))

    def _end_cell(self, tag: str) -> None:
        if self.cell is not None and self.row is not None:
            self.row.append(_cell_text("".join(self.cell)))
            self.cell = None

    def _end_row(self, tag: str) -> None:
        if self.row is None or self.table is None:
            return
        if self.row:
            self.table.append(self.row)
            if self.row_is_header and len(self.table) == self.table_header_rows + 1:
                self.table_header_rows += 1
        self.row = None

    def _end_table(self, tag: str) -> None:
        if self.table is not None:
            rows, self.table = self.table, None
            pres, self.table_pres = self.table_pres, []
            if len(pres) == 1 and rows == [[_cell_text(pres[0][0])]]:
                # one cell holding only a <pre>: a frame around a listing (DocBook's HTML)
                self._emit(pres[0][1])
            elif rows:
                self._emit(_pipe_table(rows))

    def _end_heading(self, tag: str) -> None:
        self._flush_inline()
        self.heading = 0

    def _end_list(self, tag: str) -> None:
        self._flush_inline()
        if self.lists:
            self.lists.pop()

    def _end_item(self, tag: str) -> None:
        self._flush_inline()

    def _end_quote(self, tag: str) -> None:
        self._flush_inline()
        self.quote_depth = max(0, self.quote_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif not self._hidden(data):
            self._add_text(data)

    def _hidden(self, data: str) -> bool:
        """Whether text read now is no text of the page: skipped content, a permalink, an
        SVG's shapes, styles and tooltips."""
        return bool(
            self.skip_depth
            or self.permalink
            or (self.local_link and data.strip() in _PERMALINK_TEXT)
            or (self.svg_depth and not self.svg_text)
        )

    def _add_text(self, data: str) -> None:
        if self.pre_depth:
            self.pre_text.append(data)
        elif self.cell is not None:
            self.cell.append(data)
        else:
            self.inline.append(data)

    def close(self) -> None:
        super().close()
        self._flush_inline()


# a heading's or a term's own link, shown as "¶" or "#" (Sphinx `headerlink`, Texinfo
# `copiable-link`, MkDocs and others `anchor`/`permalink`): not text of the page
_PERMALINK_CLASSES = {
    "headerlink",
    "copiable-link",
    "copiable-anchor",
    "anchor",
    "anchorjs-link",
    "permalink",
    "anchor-link",
}
_PERMALINK_TEXT = {"¶", "#", "§", "🔗"}  # what a link to its own place on the page shows


def _is_permalink(attrs: list[tuple[str, str | None]]) -> bool:
    classes = next((v or "" for k, v in attrs if k == "class"), "").split()
    return any(c in _PERMALINK_CLASSES for c in classes)


def _is_local_link(attrs: list[tuple[str, str | None]]) -> bool:
    return next((v or "" for k, v in attrs if k == "href"), "").startswith("#")


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# what an opening / closing tag does (outside skipped content and <pre>); any other block
# tag ends the line of text before it
_STARTS: dict[str, Callable[[_Converter, str, _Attrs], None]] = {
    **dict.fromkeys(_HEADINGS, _Converter._start_heading),
    "pre": _Converter._start_pre,
    "ul": _Converter._start_list,
    "ol": _Converter._start_list,
    "li": _Converter._start_item,
    "blockquote": _Converter._start_quote,
    "table": _Converter._start_table,
    "tr": _Converter._start_row,
    "td": _Converter._start_cell,
    "th": _Converter._start_cell,
    "br": _Converter._start_break,
    "hr": _Converter._start_rule,
    "img": _Converter._start_image,
    "sup": _Converter._start_sup,
}
_ENDS: dict[str, Callable[[_Converter, str], None]] = {
    "td": _Converter._end_cell,
    "th": _Converter._end_cell,
    "tr": _Converter._end_row,
    "table": _Converter._end_table,
    **dict.fromkeys(_HEADINGS, _Converter._end_heading),
    "ul": _Converter._end_list,
    "ol": _Converter._end_list,
    "li": _Converter._end_item,
    "blockquote": _Converter._end_quote,
    "dt": _Converter._end_term,
    "sup": _Converter._end_sup,
}


def _cell_text(text: str) -> str:
    """A table cell's text on one line, its pipes escaped."""
    return _WS.sub(" ", text).strip().replace("|", "\\|")


def _pipe_table(rows: list[list[str]]) -> str:
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def html_to_markdown(html: str) -> tuple[str, str]:
    """Extracted text (Markdown-shaped) and the `<title>` of an HTML page."""
    conv = _Converter()
    conv.feed(html)
    conv.close()
    return "\n\n".join(conv.blocks), _WS.sub(" ", conv.title).strip()
