"""parent: search small, return big (parent-child, small-to-big).

Children are windows of `n` sentence units stepping `n - overlap`, never crossing their
section; each child's header is `Title › Section` and its `parent_id` is its section's
chunk. Parents are the sections exactly as the `headers` strategy cuts them (long
sections become windows). Children go into the searched collection, parents into a
companion collection; search maps children to parents (see indexer.searching).

Token counts come from one tokenization of the document (`packing.doc_counts`): a
child's `n_tokens` is within a token or two of its text's own count, and exact when it
is near `max_tokens`, so no child's text is over the limit.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator
from typing import NamedTuple

from ..text.spans import strip_span
from ..types import Chunk, Document
from .base import Chunker, Param
from .headers import HeadersChunker
from .packing import MARGIN, PROSE, doc_counts, fit
from .units import sentence_units


class ParentSpan(NamedTuple):
    """A parent section as its children need it: span, id, header line, heading path."""

    start: int
    end: int
    id: str
    header: str
    heading_path: str


class ParentChunker(Chunker):
    kind = "parent"
    description = "sentence-window children searched, their sections returned"
    params = {
        "n": Param(int, 2, "sentence units per child"),
        "overlap": Param(int, 1, "sentence units shared by consecutive children"),
        "max_tokens": Param(int, 512, "a parent section longer than this is split into windows"),
    }
    # the parameters, set from `params` by Chunker.__init__
    n: int
    overlap: int
    max_tokens: int

    def validate(self) -> None:
        self.require(self.n >= 1, f"n ({self.n}) must be at least 1")
        self.require(
            0 <= self.overlap < self.n,
            f"overlap ({self.overlap}) must be smaller than n ({self.n})",
        )
        self.require(self.max_tokens >= 8, f"max_tokens ({self.max_tokens}) must be at least 8")

    def _headers(self) -> HeadersChunker:
        # plain text merges paragraphs up to headers' min_tokens, which must not exceed a
        # small max_tokens (parent:max_tokens=32 would fail at chunk time)
        min_tokens = min(HeadersChunker.params["min_tokens"].default, self.max_tokens)
        return HeadersChunker(
            name=f"{self.name}.parent",
            tokenizer=self.tokenizer,
            max_tokens=self.max_tokens,
            overlap=0,
            min_tokens=min_tokens,
        )

    def _parents(self, doc: Document) -> list[ParentSpan]:
        """Where each parent lies and what its children copy from it (no text: a 50 MB
        file's sections would be a second copy of the document)."""
        if self.name not in doc.derived.parents:
            for _ in self.iter_parent_chunks(doc):
                pass
        return doc.derived.parents[self.name]

    def parent_chunks(self, doc: Document) -> list[Chunk]:
        return list(self.iter_parent_chunks(doc))

    def iter_parent_chunks(self, doc: Document) -> Iterator[Chunk]:
        spans: list[ParentSpan] = []
        for c in self._headers().iter_chunks(doc):
            spans.append(ParentSpan(c.start, c.end, c.id, c.header.split("\n")[0], c.heading_path))
            yield c
        doc.derived.parents[self.name] = spans

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        parents = self._parents(doc)
        if not parents:
            return
        kind = "sentence" if self.n == 1 else "sentences"
        for i, units in self._units_by_parent(doc, parents):
            parent = parents[i]
            for s, e, size in self._children(doc, units):
                yield self.new_chunk(
                    doc,
                    s,
                    e,
                    kind=kind,
                    header=parent.header,
                    path=parent.heading_path,
                    n_tokens=size,
                    start_line=doc.line_of(s),
                    end_line=doc.line_of(max(s, e - 1)),
                    parent_id=parent.id,
                )

    def _units_by_parent(
        self, doc: Document, parents: list[ParentSpan]
    ) -> Iterator[tuple[int, list[tuple[int, int, int]]]]:
        """Sentence units grouped by the parent they fall in, as (parent index, [(start,
        end, tokens)]), parent by parent in document order.

        A unit crossing a parent boundary (a windowed long section) is clipped to each
        parent it touches; a unit longer than a parent could be is cut to fit. Tokens are
        counted on the document's tokens (one tokenization shared by every unit), and
        exactly for a unit near the limit. Spans are kept in flat arrays (a 50 MB file
        has half a million sentences)."""
        span_starts, span_ends, owner = self._unit_spans(doc, parents)
        counts = doc_counts(self, doc, span_starts, span_ends)
        current = -1
        group: list[tuple[int, int, int]] = []
        for k, n in enumerate(counts):
            i, s, e = owner[k], span_starts[k], span_ends[k]
            if i != current:
                if group:
                    yield current, group
                current, group = i, []
            if n + MARGIN <= self.max_tokens:
                group.append((s, e, n))
            else:
                group.extend(fit(self, doc, s, end=e, limit=self.max_tokens, levels=PROSE))
        if group:
            yield current, group

    @staticmethod
    def _unit_spans(
        doc: Document, parents: list[ParentSpan]
    ) -> tuple[array[int], array[int], array[int]]:
        """The sentence units as flat arrays of starts, ends and parent indexes, a unit
        crossing a parent boundary clipped to each parent it touches."""
        starts = [p.start for p in parents]
        span_starts, span_ends, owner = array("q"), array("q"), array("q")
        for unit in sentence_units(doc):
            i = max(bisect.bisect_right(starts, unit.start) - 1, 0)
            for s, e, j in _clipped(doc.text, unit.start, unit.end, parents, i):
                span_starts.append(s)
                span_ends.append(e)
                owner.append(j)
        return span_starts, span_ends, owner

    def _children(
        self, doc: Document, units: list[tuple[int, int, int]]
    ) -> list[tuple[int, int, int]]:
        """Windows of n units stepping n - overlap, as (start, end, tokens); a window over
        max_tokens drops units from its end (children stay small)."""
        out = []
        step = self.n - self.overlap
        ends = [u[1] for u in units]
        estimates = doc_counts(
            self, doc, [u[0] for u in units], ends[self.n - 1 :] + ends[-1:] * (self.n - 1)
        )
        j = 0
        while j < len(units):
            window = units[j : j + self.n]
            size = window[0][2] if len(window) == 1 else estimates[j]
            if len(window) > 1 and size + MARGIN > self.max_tokens:
                window, size = self._shrink(doc, window)
            out.append((window[0][0], window[-1][1], size))
            if j + len(window) >= len(units):
                break
            # the next child starts `overlap` units before this one ends (a full window
            # steps n - overlap); a shortened window must not leave units uncovered
            j += max(min(step, len(window) - self.overlap), 1)
        return out

    def _shrink(
        self, doc: Document, window: list[tuple[int, int, int]]
    ) -> tuple[list[tuple[int, int, int]], int]:
        """A window near max_tokens counted exactly, and units dropped from its end while it
        is over (fewer units rather than a big child): the window and its tokens."""
        size = self.count(doc.text[window[0][0] : window[-1][1]])
        while len(window) > 1 and size > self.max_tokens:
            window = window[:-1]
            size = (
                window[0][2]
                if len(window) == 1
                else self.count(doc.text[window[0][0] : window[-1][1]])
            )
        return window, size


def _clipped(
    text: str, start: int, end: int, parents: list[ParentSpan], i: int
) -> Iterator[tuple[int, int, int]]:
    """A unit's span in parent i, or, when it crosses a boundary (a windowed long
    section), its non-blank parts in each parent it touches: (start, end, parent index)."""
    if end <= parents[i].end and start >= parents[i].start:
        yield start, end, i
        return
    while True:
        s, e = strip_span(text, max(start, parents[i].start), min(end, parents[i].end))
        if s < e:
            yield s, e, i
        if end <= parents[i].end or i + 1 >= len(parents):
            return
        i += 1
