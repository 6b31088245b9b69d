"""parent: search small, return big (parent-child, small-to-big).

Children are windows of `n` sentence units stepping `n - overlap`, never crossing their
section; each child's header is `Title › Section` and its `parent_id` is its section's
chunk. Parents are the sections exactly as the `headers` strategy cuts them (long
sections become windows). Children go into the searched collection, parents into a
companion collection; search maps children to parents (see indexer.searching).
"""

from __future__ import annotations

import bisect

from ..text.sentences import sentence_units
from ..types import PATH_SEP, Chunk, Document
from .base import Chunker, Param
from .headers import HeadersChunker
from .packing import PROSE, fit


class ParentChunker(Chunker):
    kind = "parent"
    description = "sentence-window children searched, their sections returned"
    params = {
        "n": Param(int, 2, "sentence units per child"),
        "overlap": Param(int, 1, "sentence units shared by consecutive children"),
        "max_tokens": Param(int, 512, "a parent section longer than this is split into windows"),
    }

    def validate(self) -> None:
        self.require(self.n >= 1, f"n ({self.n}) must be at least 1")
        self.require(0 <= self.overlap < self.n, f"overlap ({self.overlap}) must be smaller than n ({self.n})")
        self.require(self.max_tokens >= 8, f"max_tokens ({self.max_tokens}) must be at least 8")

    def _parents(self, doc: Document) -> list[Chunk]:
        key = self.name
        if key not in doc.derived.parents:
            # plain text merges paragraphs up to headers' min_tokens, which must not
            # exceed a small max_tokens (parent:max_tokens=32 would fail at chunk time)
            min_tokens = min(HeadersChunker.params["min_tokens"].default, self.max_tokens)
            headers = HeadersChunker(name=f"{self.name}.parent", tokenizer=self.tokenizer,
                                     max_tokens=self.max_tokens, overlap=0, min_tokens=min_tokens)
            doc.derived.parents[key] = headers.chunk(doc)
        return doc.derived.parents[key]

    def parent_chunks(self, doc: Document) -> list[Chunk]:
        return self._parents(doc)

    def chunk(self, doc: Document) -> list[Chunk]:
        parents = self._parents(doc)
        if not parents:
            return []
        starts = [p.start for p in parents]
        groups: dict[int, list[tuple[int, int, int]]] = {}
        for unit in sentence_units(doc):
            i = max(bisect.bisect_right(starts, unit.start) - 1, 0)
            # a unit crossing a parent boundary (a windowed long section) is clipped to
            # each parent it touches; a unit longer than a parent could be is cut to fit
            while True:
                s, e = max(unit.start, parents[i].start), min(unit.end, parents[i].end)
                if s < e:
                    pieces = fit(self, doc, s, e, self.max_tokens, PROSE)
                    groups.setdefault(i, []).extend(pieces)
                if unit.end <= parents[i].end or i + 1 >= len(parents):
                    break
                i += 1
        out: list[Chunk] = []
        step = self.n - self.overlap
        for i, units in sorted(groups.items()):
            parent = parents[i]
            header = parent.header.split("\n")[0]
            j = 0
            while j < len(units):
                window = units[j : j + self.n]
                size = window[0][2] if len(window) == 1 else self.count(doc.text[window[0][0] : window[-1][1]])
                while len(window) > 1 and size > self.max_tokens:
                    window = window[:-1]  # children stay small: fewer units rather than a big child
                    size = window[0][2] if len(window) == 1 else self.count(doc.text[window[0][0] : window[-1][1]])
                kind = "sentence" if self.n == 1 else "sentences"
                out.append(self.make_chunk(doc, window[0][0], window[-1][1], kind, header,
                                           tuple(parent.heading_path.split(PATH_SEP)), size, parent_id=parent.id))
                if j + len(window) >= len(units):
                    break
                # the next child starts `overlap` units before this one ends (a full window
                # steps n - overlap); a shortened window must not leave units uncovered
                j += max(min(step, len(window) - self.overlap), 1)
        return out
