"""The Markdown-shaped text a loader extracts, written block by block: headings,
paragraphs, list items, pipe tables with their header row, fenced code; and the marks
that say where each location (a slide, a sheet's row, a notebook cell) starts in it.

Blocks are separated by a blank line, so the Markdown parser sees each as written; a
table cell or heading is kept on one line (a `|` in a cell is escaped)."""

from __future__ import annotations

import re

from ..types import Mark

_WS = re.compile(r"\s+")
_TICKS = re.compile(r"`{3,}")


def one_line(text: str) -> str:
    """Text with its runs of whitespace (newlines included) as one space."""
    return _WS.sub(" ", text).strip()


def cell_text(text: str) -> str:
    """A table cell's text: one line, its pipes escaped."""
    return one_line(text).replace("|", "\\|")


def table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


class TextBuilder:
    """Blocks of text and their marks, joined with a blank line between blocks."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.marks: list[Mark] = []

    def mark(self, label: str) -> None:
        """The text from here on lies at `label` ("": nowhere in particular)."""
        if self.marks and self.marks[-1].start == self.size:
            self.marks.pop()  # nothing was written under the previous mark
        if (self.marks[-1].label if self.marks else "") != label:
            self.marks.append(Mark(self.size, label))

    def _write(self, text: str) -> None:
        if self.parts:
            self.parts.append("\n\n")
            self.size += 2
        self.parts.append(text)
        self.size += len(text)

    def block(self, text: str) -> None:
        """A paragraph (or any block) as it is, without its outer blank lines."""
        text = text.strip("\n").rstrip()
        if text.strip():
            self._write(text)

    def heading(self, level: int, text: str) -> None:
        title = one_line(text)
        if title:
            self._write("#" * max(1, min(level, 6)) + " " + title)

    def items(self, items: list[tuple[int, str]]) -> None:
        """A list: (depth, text) items, one a line."""
        lines = [f"{'  ' * depth}- {one_line(text)}" for depth, text in items if text.strip()]
        if lines:
            self._write("\n".join(lines))

    def code(self, source: str, language: str = "") -> None:
        """A fenced code block, its fence longer than any run of backticks inside."""
        if not source.strip():
            return
        longest = max((len(m.group()) for m in _TICKS.finditer(source)), default=2)
        fence = "`" * max(3, longest + 1)
        self._write(f"{fence}{language}\n{source.rstrip()}\n{fence}")

    def table(self, rows: list[list[str]], labels: list[str] | None = None) -> int:
        """A pipe table: the first row its header; `labels[i]`, when given, marks row i.
        The length of its header row line (0: no table)."""
        width = max((len(r) for r in rows), default=0)
        if not width:
            return 0
        cells = [[cell_text(c) for c in r] + [""] * (width - len(r)) for r in rows]
        lines = [table_row(cells[0]), table_row(["---"] * width)]
        if labels:
            self.mark(labels[0])
        self._write("\n".join(lines))
        for i, row in enumerate(cells[1:], 1):
            self.parts.append("\n")
            self.size += 1
            if labels:
                self.mark(labels[i])
            line = table_row(row)
            self.parts.append(line)
            self.size += len(line)
        return len(lines[0])

    def text(self) -> str:
        return "".join(self.parts) + "\n" if self.parts else ""
