"""HTML to Markdown-shaped text with the standard library's HTML parser.

The extracted text is what gets chunked (spans point into it): `<h1>`–`<h3>` become
Markdown headings and so the section structure; `<h4>`–`<h6>` become bold lines; lists,
tables and `<pre>` blocks keep their shape (list items, pipe tables, fenced code) so the
structure-aware strategies see them; scripts, styles and other invisible content are
dropped.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas"}
_BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "form",
    "figure", "figcaption", "dl", "dt", "dd", "address", "details", "summary", "fieldset",
    "body", "html",
}
_WS = re.compile(r"\s+")


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.skip_depth = 0
        self.title = ""
        self.in_title = False
        self.pre_depth = 0
        self.pre_lang = ""
        self.pre_text: list[str] = []
        self.lists: list[list] = []  # [kind, counter]
        self.quote_depth = 0
        self.heading: int = 0
        self.table: list[list[str]] | None = None
        self.table_header_rows = 0
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.row_is_header = False
        self.prev_item = False

    # -- helpers -----------------------------------------------------------------------
    def _flush_inline(self) -> None:
        text = _WS.sub(" ", "".join(self.inline)).strip()
        self.inline = []
        if not text:
            return
        if self.heading:
            level = self.heading
            text = "#" * level + " " + text if level <= 3 else f"**{text}**"
        elif self.lists:
            kind, counter = self.lists[-1]
            marker = f"{counter}." if kind == "ol" else "-"
            text = "  " * (len(self.lists) - 1) + marker + " " + text
        elif text[0] in "#>":
            text = "\\" + text
        if self.quote_depth:
            text = "> " * self.quote_depth + text
        if self.lists and self.prev_item and self.blocks:
            self.blocks[-1] += "\n" + text  # keep a list tight: one block, one item per line
        else:
            self.blocks.append(text)
        self.prev_item = bool(self.lists) and not self.heading

    def _emit(self, text: str) -> None:
        self._flush_inline()
        self.blocks.append(text)
        self.prev_item = False

    # -- parser callbacks --------------------------------------------------------------
    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title = True
            return
        if tag in _SKIP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if self.pre_depth:
            if tag == "pre":
                self.pre_depth += 1
            elif tag == "br":
                self.pre_text.append("\n")
            return
        if self.cell is not None:
            if tag == "br":
                self.cell.append(" ")
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._flush_inline()
            self.heading = int(tag[1])
        elif tag == "pre":
            self._flush_inline()
            self.pre_depth = 1
            self.pre_text = []
            cls = dict(attrs).get("class") or ""
            match = re.search(r"(?:language|lang)-([\w+-]+)", cls)
            self.pre_lang = match.group(1) if match else ""
        elif tag in ("ul", "ol"):
            self._flush_inline()
            self.lists.append([tag, 0])
        elif tag == "li":
            self._flush_inline()
            if self.lists:
                self.lists[-1][1] += 1
        elif tag == "blockquote":
            self._flush_inline()
            self.quote_depth += 1
        elif tag == "table":
            self._flush_inline()
            self.table = []
            self.table_header_rows = 0
        elif tag == "tr" and self.table is not None:
            self.row = []
            self.row_is_header = False
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
            self.row_is_header = self.row_is_header or tag == "th"
        elif tag == "br":
            self.inline.append("\n")
            self._flush_inline()
        elif tag == "hr":
            self._emit("---")
        elif tag in _BLOCK:
            self._flush_inline()
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.inline.append(alt)

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
            return
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if self.pre_depth:
            if tag == "pre":
                self.pre_depth -= 1
                if not self.pre_depth:
                    code = "".join(self.pre_text).strip("\n")
                    fence = "```" if "```" not in code else "~~~~"
                    self._emit(f"{fence}{self.pre_lang}\n{code}\n{fence}")
            return
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(_WS.sub(" ", "".join(self.cell)).strip().replace("|", "\\|"))
            self.cell = None
        elif tag == "tr" and self.row is not None and self.table is not None:
            if self.row:
                self.table.append(self.row)
                if self.row_is_header and len(self.table) == self.table_header_rows + 1:
                    self.table_header_rows += 1
            self.row = None
        elif tag == "table" and self.table is not None:
            rows, self.table = self.table, None
            if rows:
                self._emit(_pipe_table(rows))
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._flush_inline()
            self.heading = 0
        elif tag in ("ul", "ol"):
            self._flush_inline()
            if self.lists:
                self.lists.pop()
        elif tag == "li":
            self._flush_inline()
        elif tag == "blockquote":
            self._flush_inline()
            self.quote_depth = max(0, self.quote_depth - 1)
        elif tag in _BLOCK:
            self._flush_inline()

    def handle_data(self, data):
        if self.in_title:
            self.title += data
            return
        if self.skip_depth:
            return
        if self.pre_depth:
            self.pre_text.append(data)
        elif self.cell is not None:
            self.cell.append(data)
        else:
            self.inline.append(data)

    def close(self):
        super().close()
        self._flush_inline()


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
