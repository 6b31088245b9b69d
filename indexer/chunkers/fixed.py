"""fixed: windows of `size` tokens stepping `size - overlap`, blind to structure.

The baseline every other strategy is measured against. With `table_header`, a window
that starts inside a Markdown table gets the table's header row in its `header` (so the
row `| İlçe ve köyler | 3-5 iş günü | Yok |` is indexed and shown with its column
names) while `text` stays an exact slice.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

import numpy as np

from ..loaders.markdown import blocks_of
from ..text.headrows import first_line, repeated_header
from ..text.spans import strip_span
from ..types import Chunk, Document
from .base import Chunker, Param, section_path
from .packing import last_word_edge, next_start


class FixedChunker(Chunker):
    kind = "fixed"
    description = "token windows of `size` with `overlap`, blind to structure"
    params = {
        "size": Param(int, 128, "window size in tokens"),
        "overlap": Param(int, 0, "tokens shared by consecutive windows"),
        "table_header": Param(
            bool, False, "repeat a table's header row in the header of windows that start inside it"
        ),
    }
    # the parameters, set from `params` by Chunker.__init__
    size: int
    overlap: int
    table_header: bool

    def validate(self) -> None:
        self.require(self.size >= 1, f"size ({self.size}) must be at least 1")
        self.require(self.overlap >= 0, f"overlap ({self.overlap}) must not be negative")
        self.require(
            self.overlap < self.size,
            f"overlap ({self.overlap}) must be smaller than size ({self.size})",
        )

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        bounds = self.bounds(doc)  # numpy: only two entries per window are read
        n = len(bounds) - 1
        if n <= 0:
            return
        text = doc.text
        line_starts = doc.line_starts
        tables = self._tables(doc) if self.table_header else []
        table_starts = [t[0] for t in tables]
        last = (-1, -1)
        new = self.new_chunk
        for i, j in self._token_windows(text, bounds, n):
            s, e = strip_span(text, int(bounds[i]), int(bounds[j]))
            if s < e and (s, e) != last:
                last = (s, e)
                yield new(
                    doc,
                    s,
                    e,
                    kind="window",
                    header=_table_header(tables, table_starts, s),
                    path=section_path(doc, s),
                    n_tokens=j - i,
                    start_line=bisect.bisect_right(line_starts, s),
                    end_line=bisect.bisect_right(line_starts, e - 1),
                )

    def _token_windows(self, text: str, bounds: np.ndarray, n: int) -> Iterator[tuple[int, int]]:
        """Each window's first and end token: window i covers tokens [i, i + size), its end
        moved back to the last token boundary between words (a word longer than the window
        is cut); the next one starts `overlap` tokens before it ends, moved back likewise,
        and ends later than it (else it starts where that one ended); the last reaches the end."""
        size, overlap = self.size, self.overlap

        def end_of(start: int) -> int:
            j = min(start + size, n)
            return (last_word_edge(text, bounds, j, start) or j) if j < n else j

        i = prev = 0
        while True:
            j = end_of(i)
            if j <= prev:
                i, j = prev, end_of(prev)
            yield i, j
            if j >= n:
                return
            i, prev = next_start(text, bounds, i, j, overlap), j

    @staticmethod
    def _tables(doc: Document) -> list[tuple[int, int, str]]:
        """(start, end, header row text) of each table."""
        if doc.format not in ("markdown", "html"):
            return []
        out = []
        for block in blocks_of(doc):
            if block.kind == "table" and block.parts:
                head_start, head_end = block.parts[0]
                row = first_line(doc.text, head_start, head_end)
                out.append((block.start, block.end, repeated_header(row)))
        return out


def _table_header(tables: list[tuple[int, int, str]], starts: list[int], offset: int) -> str:
    """The header row of the table an offset falls inside (after its start), "" if none."""
    t = bisect.bisect_right(starts, offset) - 1
    if t >= 0 and tables[t][0] < offset < tables[t][1]:
        return tables[t][2]
    return ""
