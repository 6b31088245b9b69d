"""fixed: windows of `size` tokens stepping `size - overlap`, blind to structure.

The baseline every other strategy is measured against. With `table_header`, a window
that starts inside a Markdown table gets the table's header row in its `header` (so the
row `| İlçe ve köyler | 3-5 iş günü | Yok |` is indexed and shown with its column
names) while `text` stays an exact slice.
"""

from __future__ import annotations

import bisect

from ..loaders.markdown import blocks_of
from ..types import Chunk, Document
from .base import Chunker, Param, strip_span


class FixedChunker(Chunker):
    kind = "fixed"
    description = "token windows of `size` with `overlap`, blind to structure"
    params = {
        "size": Param(int, 128, "window size in tokens"),
        "overlap": Param(int, 0, "tokens shared by consecutive windows"),
        "table_header": Param(bool, False, "repeat a table's header row in the header of windows that start inside it"),
    }

    def validate(self) -> None:
        self.require(self.size >= 1, f"size ({self.size}) must be at least 1")
        self.require(self.overlap >= 0, f"overlap ({self.overlap}) must not be negative")
        self.require(self.overlap < self.size, f"overlap ({self.overlap}) must be smaller than size ({self.size})")

    def chunk(self, doc: Document) -> list[Chunk]:
        bounds = self.bounds(doc).tolist()
        n = len(bounds) - 1
        text = doc.text
        tables = self._tables(doc) if self.table_header else []
        table_starts = [t[0] for t in tables]
        out: list[Chunk] = []
        step = self.size - self.overlap
        for i in range(0, n, step):
            j = min(i + self.size, n)
            s, e = strip_span(text, bounds[i], bounds[j])
            if s < e:
                header = ""
                if tables:
                    k = bisect.bisect_right(table_starts, s) - 1
                    if k >= 0:
                        t_start, t_end, header_row = tables[k]
                        if t_start < s < t_end:
                            header = header_row
                out.append(self.make_chunk(doc, s, e, "window", header=header, n_tokens=j - i))
            if j == n:
                break
        return out

    @staticmethod
    def _tables(doc: Document) -> list[tuple[int, int, str]]:
        """(start, end, header row text) of each table."""
        if doc.format not in ("markdown", "html"):
            return []
        out = []
        for block in blocks_of(doc):
            if block.kind == "table" and block.parts:
                head_start, head_end = block.parts[0]
                out.append((block.start, block.end, doc.text[head_start:head_end].split("\n", 1)[0]))
        return out
