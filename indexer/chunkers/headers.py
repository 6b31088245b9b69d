"""headers: one chunk per section, its heading path in `header`.

Markdown and HTML sections run from a heading to the next heading of any level; a
heading with no text of its own joins the section after it. A section over `max_tokens`
becomes token windows with `overlap`, each keeping the section's header. Plain text is
cut into paragraphs merged up to `min_tokens`; source code into line groups. A section's
size is counted on the document's tokens (`packing.span_tokens`), exactly near the limit.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator

from ..loaders.markdown import blocks_of
from ..types import Chunk, Document, Section
from .base import Chunker, Param, header_of
from .packing import PROSE, fit, lines, pack, span_tokens, windows


class HeadersChunker(Chunker):
    kind = "headers"
    description = "one chunk per heading section; long sections become overlapping windows"
    params = {
        "max_tokens": Param(int, 512, "a longer section is split into windows"),
        "overlap": Param(int, 64, "tokens shared by the windows of a long section"),
        "min_tokens": Param(int, 64, "plain text: merge paragraphs up to this size"),
    }
    # the parameters, set from `params` by Chunker.__init__
    max_tokens: int
    overlap: int
    min_tokens: int

    def validate(self) -> None:
        self.require(self.max_tokens >= 8, f"max_tokens ({self.max_tokens}) must be at least 8")
        self.require(self.overlap >= 0, f"overlap ({self.overlap}) must not be negative")
        self.require(
            self.overlap < self.max_tokens,
            f"overlap ({self.overlap}) must be smaller than max_tokens ({self.max_tokens})",
        )
        self.require(
            0 <= self.min_tokens <= self.max_tokens,
            f"min_tokens ({self.min_tokens}) must be between 0 and max_tokens ({self.max_tokens})",
        )

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        if doc.format == "code":
            yield from self._code(doc)
            return
        for path, start, end in self._merged_sections(doc):
            header = header_of(path)
            if doc.format == "text":
                for s, e, n in self._paragraph_groups(doc, start, end):
                    yield self.make_chunk(
                        doc, s, e, kind="section", header=header, heading_path=path, n_tokens=n
                    )
                continue
            n = span_tokens(self, doc, start, end, self.max_tokens)
            if n <= self.max_tokens:
                yield self.make_chunk(
                    doc, start, end, kind="section", header=header, heading_path=path, n_tokens=n
                )
            else:
                # windows whose own text is within max_tokens (see packing.windows)
                for s, e, k in windows(
                    self, doc, start, end, self.max_tokens, overlap=self.overlap
                ):
                    yield self.make_chunk(
                        doc, s, e, kind="window", header=header, heading_path=path, n_tokens=k
                    )

    @staticmethod
    def _merged_sections(doc: Document) -> list[tuple[tuple[str, ...], int, int]]:
        """Sections as (heading path, start, end); a heading-only section joins the next."""
        out = []
        pending: Section | None = None
        for i, sec in enumerate(doc.sections):
            start = pending.start if pending else sec.start
            empty_body = not doc.text[sec.body_start : sec.end].strip()
            if empty_body and sec.level > 0 and i + 1 < len(doc.sections):
                pending = pending or sec
                continue
            out.append((sec.heading_path, start, sec.end))
            pending = None
        return out

    def _paragraph_groups(self, doc: Document, start: int, end: int) -> list[tuple[int, int, int]]:
        """Paragraphs merged until each group reaches min_tokens, never over max_tokens."""
        pieces = []
        blocks = blocks_of(doc)
        # blocks are in order and do not overlap: start at the first one ending after `start`
        first = bisect.bisect_right(blocks, start, key=lambda b: b.end)
        for block in itertools.islice(blocks, first, None):
            if block.start >= end:
                break
            if block.end <= start:
                continue
            pieces.extend(
                fit(
                    self,
                    doc,
                    max(block.start, start),
                    end=min(block.end, end),
                    limit=self.max_tokens,
                    levels=PROSE,
                )
            )
        out: list[tuple[int, int, int]] = []
        group: list[tuple[int, int, int]] = []
        total = 0
        for piece in pieces:
            if group and total + piece[2] > self.max_tokens:
                out.extend(pack(self, doc, group, self.max_tokens))
                group, total = [], 0
            group.append(piece)
            total += piece[2] + 1
            if total >= self.min_tokens:
                out.extend(pack(self, doc, group, self.max_tokens))
                group, total = [], 0
        if group:
            out.extend(pack(self, doc, group, self.max_tokens))
        return out

    def _code(self, doc: Document) -> list[Chunk]:
        """Source code (until a code-aware strategy handles it): groups of whole lines."""
        header = doc.doc_id
        return [
            self.make_chunk(
                doc, s, e, kind="lines", header=header, heading_path=(doc.title,), n_tokens=n
            )
            for s, e, n in fit(
                self, doc, 0, end=len(doc.text), limit=self.max_tokens, levels=(lines,)
            )
        ]
