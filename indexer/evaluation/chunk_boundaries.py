"""Boundary quality: where a strategy's cuts fall in the structure the loaders know.

Every chunk edge — its end, and its start — is checked against the document's structure:

| kind | structure (from) |
|---|---|
| word | word characters on both sides of the edge (`text.words`) |
| sentence | a prose sentence, heading or list-item sentence (`chunkers.units.sentence_units`) |
| table, row | a Markdown table and each of its rows, the header row with its `---` line (`loaders.markdown`) |
| code | a fenced or indented code block in Markdown |
| item | a top-level list item |
| function | a function or method of source code (the tree-sitter outline, `loaders.symbols`) |

An edge is *inside* a structure when it falls strictly between its first and last
character; an edge on either side of it is a clean cut. The share of edges inside each
kind says how often a strategy cuts one (cutting inside a word must never happen). And
every table, code block, list item and function is *kept whole* when one chunk contains
all of it.

    stats = BoundaryStats("blocks")
    stats.add(doc, chunks)          # per document, as chunks are made
    stats.end_share("table")        # share of chunk ends inside a table
    stats.whole("table")            # (tables kept whole, tables)
"""

from __future__ import annotations

import bisect
import os
import weakref
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..chunkers import StrategySpec

from ..chunkers.units import sentence_units
from ..loaders.markdown import blocks_of
from ..settings import DEFAULT_MAX_FILE_SIZE, Settings
from ..text.words import inside_word
from ..types import Chunk, Document

# what an edge can fall inside
KINDS = (
    "word",
    "sentence",
    "table",
    "row",
    "code",
    "item",
    "function",
)
WHOLE = ("table", "code", "item", "function")  # what can be kept whole
_SENTENCE_UNITS = {"sentence", "heading", "item"}
_SPANS_OF = {"table": "table", "code": "code", "list": "item"}


@dataclass(frozen=True)
class Structure:
    """A document's structure: per kind, the spans a cut must not fall inside (sorted,
    never overlapping: a function nested in another is part of the outer one) and the
    spans that should be kept whole (nested functions count on their own)."""

    text: str
    spans: dict[str, list[tuple[int, int]]]
    wholes: dict[str, list[tuple[int, int]]]

    def inside(self, kind: str, pos: int) -> bool:
        """Is offset `pos` (a cut between pos-1 and pos) strictly inside a structure of this kind?"""
        if kind == "word":
            return inside_word(self.text, pos)
        spans = self.spans[kind]
        i = bisect.bisect_left(spans, (pos,)) - 1  # the last span starting before pos
        return i >= 0 and pos < spans[i][1]


_cache: weakref.WeakKeyDictionary[Document, Structure] = weakref.WeakKeyDictionary()


def structure_of(doc: Document) -> Structure:
    """The spans of a document's tables, rows, code blocks, list items, sentences and
    functions (worked out once per document)."""
    cached = _cache.get(doc)
    if cached is not None:
        return cached
    spans: dict[str, list[tuple[int, int]]] = {kind: [] for kind in KINDS if kind != "word"}
    if doc.format == "code":
        spans["function"] = _functions(doc)
    else:
        _add_prose(doc, spans)
    spans = {k: sorted(v) for k, v in spans.items()}
    wholes = {k: spans[k] for k in WHOLE}
    spans["function"] = _outermost(spans["function"])
    structure = _cache[doc] = Structure(doc.text, spans, wholes)
    return structure


def _add_prose(doc: Document, spans: dict[str, list[tuple[int, int]]]) -> None:
    """A prose document's tables, rows, code blocks, list items and sentences, into `spans`."""
    for block in blocks_of(doc):
        kind = _SPANS_OF.get(block.kind)
        if kind == "item":
            spans["item"].extend(block.parts or ((block.start, block.end),))
        elif kind:
            spans[kind].append((block.start, block.end))
        if block.kind == "table":
            spans["row"].extend(block.parts)
    units = sentence_units(doc)
    spans["sentence"] = [(u.start, u.end) for u in units if u.kind in _SENTENCE_UNITS]


def _functions(doc: Document) -> list[tuple[int, int]]:
    """Spans of every function and method; a function nested in another counts as part
    of the outer one for cuts (spans never overlap), and on its own for `whole`."""
    from ..loaders.symbols import outline, walk

    tree = outline(doc)
    if tree is None:
        return []
    return [
        (d.start, d.end) for d in walk(tree.definitions) if d.category in ("function", "method")
    ]


def _outermost(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans without the ones inside another (nested functions)."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s < out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
            continue
        out.append((s, e))
    return out


def _kept_whole(spans: list[tuple[int, int]], chunks: list[Chunk]) -> int:
    """How many spans lie entirely within one chunk."""
    ordered = sorted((c.start, c.end) for c in chunks)
    starts = [s for s, _ in ordered]
    reach, furthest = [], -1
    for _, e in ordered:
        furthest = max(furthest, e)
        reach.append(furthest)  # the furthest end of the chunks starting up to here
    kept = 0
    for s, e in spans if ordered else ():
        i = bisect.bisect_right(starts, s) - 1
        kept += i >= 0 and reach[i] >= e
    return kept


@dataclass
class BoundaryStats:
    """Boundary quality of one strategy's chunks, summed over documents."""

    strategy: str = ""
    documents: int = 0
    chunks: int = 0
    ends: Counter[str] = field(default_factory=Counter)  # kind -> chunk ends inside one
    starts: Counter[str] = field(default_factory=Counter)  # kind -> chunk starts inside one
    kept: Counter[str] = field(default_factory=Counter)  # kind -> structures kept whole
    present: Counter[str] = field(default_factory=Counter)  # kind -> structures in the documents

    def add(self, doc: Document, chunks: list[Chunk]) -> None:
        """Count one document's chunks (all of them, in any order)."""
        structure = structure_of(doc)
        self.documents += 1
        self.chunks += len(chunks)
        for kind in KINDS:
            self.ends[kind] += sum(structure.inside(kind, c.end) for c in chunks)
            self.starts[kind] += sum(structure.inside(kind, c.start) for c in chunks)
        for kind in WHOLE:
            self.present[kind] += len(structure.wholes[kind])
            self.kept[kind] += _kept_whole(structure.wholes[kind], chunks)

    def end_share(self, kind: str) -> float:
        return self.ends[kind] / self.chunks if self.chunks else 0.0

    def start_share(self, kind: str) -> float:
        return self.starts[kind] / self.chunks if self.chunks else 0.0

    def whole(self, kind: str) -> tuple[int, int]:
        """(kept whole, present) for a kind of structure."""
        return self.kept[kind], self.present[kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "documents": self.documents,
            "chunks": self.chunks,
            "ends_inside": {k: round(self.end_share(k), 4) for k in KINDS},
            "starts_inside": {k: round(self.start_share(k), 4) for k in KINDS},
            "kept_whole": {k: {"kept": self.kept[k], "of": self.present[k]} for k in WHOLE},
        }


def measure(docs: Iterable[Document], chunks: Iterable[Chunk], strategy: str = "") -> BoundaryStats:
    """Boundary quality of chunks (any order, several documents) against their documents;
    chunks of documents not given are left out."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    stats = BoundaryStats(strategy)
    for doc in docs:
        stats.add(doc, by_doc.get(doc.doc_id, []))
    return stats


def boundaries(
    paths: Iterable[str | os.PathLike[str]],
    strategies: Iterable[str | StrategySpec],
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    encoding: str | None = None,
    *,
    settings: Settings | None = None,
) -> dict[str, BoundaryStats]:
    """Chunk a corpus (as `indexer.chunk` does; same options) and measure every
    strategy's boundary quality: {strategy name: BoundaryStats}."""
    from ..indexing.pipeline import iter_chunks

    _, stats, stream = iter_chunks(
        list(paths),
        list(strategies),
        include=include,
        exclude=exclude,
        max_file_size=max_file_size,
        encoding=encoding,
        settings=settings,
    )
    out = {name: BoundaryStats(name) for name in stats}
    for name, doc, chunks in stream:
        out[name].add(doc, chunks)
    return out


# -- for people: the columns `indexer chunk` and `indexer eval --boundaries` print -------------
_INSIDE = {
    "word": "inWord",
    "sentence": "inSent",
    "table": "inTable",
    "row": "inRow",
    "code": "inCode",
    "item": "inItem",
    "function": "inFunc",
}
_WHOLE = {"table": "tables", "code": "code", "item": "items", "function": "funcs"}
LEGEND = (
    "in*: share of chunk ends inside a word, sentence, table, table row, code block, list item, function; "
    "tables/code/items/funcs: kept whole by one chunk"
)


def columns(stats: list[BoundaryStats]) -> tuple[list[str], list[list[str]]]:
    """Column headers and, per strategy, its cells: the share of chunk ends inside each
    kind of structure the documents have (words and sentences always), then the
    structures kept whole as kept/all."""

    def has(kind: str) -> bool:
        return kind in ("word", "sentence") or any(
            st.present["table" if kind == "row" else kind] for st in stats
        )

    inside = [k for k in KINDS if has(k)]
    whole = [k for k in WHOLE if has(k)]
    headers = [_INSIDE[k] for k in inside] + [_WHOLE[k] for k in whole]
    return headers, [_cells(st, inside, whole) for st in stats]


def _cells(st: BoundaryStats, inside: list[str], whole: list[str]) -> list[str]:
    """One strategy's cells: the share of chunk ends inside each kind, then kept/all."""
    shares = [_percent(st.end_share(k)) for k in inside]
    return shares + [f"{st.kept[k]}/{st.present[k]}" for k in whole]


def _percent(share: float) -> str:
    if share == 0:
        return "0%"
    return f"{share:.0%}" if share >= 0.095 else f"{share:.1%}"
