"""The units of a search's candidate chunks, read back from their unit maps.

A chunk built by this version carries the units it overlaps (`chunkers.unit_map`): whole
sentences, list items, table rows and runs of code lines, with the text outside the chunk
they need. A chunk built before unit maps existed is cut here from its own text
(sentences, table rows, code runs), each unit labelled with the chunk's heading path;
such units stop at the chunk's edges.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from ...chunkers.unit_map import KINDS, MAP_VERSION, code_runs, embedded_text
from ...text.sentences import iter_sentences
from ...text.tokens import Tokenizer
from ...types import Chunk, Hit

# a chunk's unit map as its record holds it (JSON: units "u", paths "p", header rows "h",
# pieces of the document outside the chunk "x"; `chunkers.unit_map`)
UnitMap = dict[str, Any]


@dataclass(slots=True)
class Unit:
    """One unit of a candidate chunk: an exact slice of its document."""

    doc_id: str
    start: int
    end: int
    kind: str
    label: str  # the heading path of its section
    text: str
    n_tokens: int
    page: int = 0
    line: int = 0  # 1-based line of `start`
    head: tuple[int, int] | None = None  # a table row's header rows
    head_text: str = ""
    head_line: int = 0
    rank: int = 0  # the best rank of a candidate chunk holding it
    score: float = 0.0  # that chunk's search score
    # adjacent units (indexes into the unit list)
    neighbours: list[int] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, int, int]:
        return self.doc_id, self.start, self.end

    def embedded_text(self) -> str:
        """What the unit's vector is made of (as the build embedded it)."""
        return embedded_text(self.label, self.head_text, self.text)


class _View:
    """What a chunk's record holds of its document: its text and the pieces outside it."""

    def __init__(self, chunk: Chunk, extra: list[tuple[int, str]]) -> None:
        self.pieces = sorted([(chunk.start, chunk.text)] + [(int(s), str(t)) for s, t in extra])
        self.chunk = chunk

    def slice(self, start: int, end: int) -> str | None:
        out, pos = [], start
        for s, text in self.pieces:
            e = s + len(text)
            if e <= pos or s >= end:
                continue
            if s > pos:
                return None  # a gap: not held
            out.append(text[pos - s : min(end, e) - s])
            pos = min(end, e)
            if pos >= end:
                break
        return "".join(out) if pos >= end else None

    def line_at(self, offset: int) -> int:
        c = self.chunk
        if offset >= c.start:
            return c.start_line + c.text.count("\n", 0, offset - c.start)
        before = self.slice(offset, c.start)
        return c.start_line - (before.count("\n") if before is not None else 0)


# (document, end of a unit or header) -> the text up to the next unit
Gaps = dict[tuple[str, int], str]


def chunk_units(chunk: Chunk, tokenizer: Tokenizer, gaps: Gaps | None = None) -> list[Unit]:
    """The units of one chunk (from its map, or cut from its text for an older build);
    `gaps` gathers the short text between each unit (or table head) and the next."""
    data = _map(chunk.units)
    if data is None:
        units, view = _from_text(chunk, tokenizer), _View(chunk, [])
    else:
        view = _View(chunk, data.get("x", []))
        units = _from_map(chunk, data, view)
    if gaps is not None:
        _gather_gaps(chunk, units, view, gaps)
    return units


def _gather_gaps(chunk: Chunk, units: list[Unit], view: _View, gaps: Gaps) -> None:
    """Into `gaps`: the blank text (at most 4 characters) between each unit of the chunk
    (or table head) and the next one."""
    starts = sorted(u.start for u in units)
    for end in _ends(units):
        nxt = next((st for st in starts if st >= end), None)
        if nxt is not None and nxt - end <= 4:
            between = view.slice(end, nxt)
            if between is not None and not between.strip():
                gaps[(chunk.doc_id, end)] = between


def _ends(units: list[Unit]) -> list[int]:
    """Where the units and their table heads end, in order."""
    return sorted({u.end for u in units} | {u.head[1] for u in units if u.head})


def _from_map(chunk: Chunk, data: UnitMap, view: _View) -> list[Unit]:
    paths, heads = data["p"], data.get("h", [])
    out = []
    for rs, re_, kind, path, n, page, head in data["u"]:
        start, end = chunk.start + rs, chunk.start + re_
        text = view.slice(start, end)
        if text is None:
            continue
        span = (int(heads[head][0]), int(heads[head][1])) if head >= 0 else None
        head_text = (view.slice(*span) or "") if span else ""
        out.append(
            Unit(
                chunk.doc_id,
                start,
                end,
                KINDS[kind],
                paths[path],
                text,
                n,
                page,
                view.line_at(start),
                span,
                head_text,
                view.line_at(span[0]) if span else 0,
            )
        )
    return out


def _map(raw: str) -> UnitMap | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) and data.get("v") == MAP_VERSION else None


def _from_text(chunk: Chunk, tokenizer: Tokenizer) -> list[Unit]:
    text = chunk.text
    if chunk.language:
        spans = list(code_runs(text, 0, len(text)))
        kinds = ["code"] * len(spans)
    else:
        spans, kinds = [], []
        pos = 0
        for line in text.split("\n"):
            end = pos + len(line)
            if line.lstrip().startswith("|"):
                spans.append((pos, end))
                kinds.append("row")
            elif line.strip() and not line.lstrip().startswith("#"):
                for s, e in iter_sentences(text, pos, end):
                    spans.append((s, e))
                    kinds.append("sentence")
            pos = end + 1
    view = _View(chunk, [])
    return [
        Unit(
            chunk.doc_id,
            chunk.start + s,
            chunk.start + e,
            kind,
            chunk.heading_path,
            text[s:e],
            tokenizer.count(text[s:e]),
            chunk.start_page,
            view.line_at(chunk.start + s),
        )
        for (s, e), kind in zip(spans, kinds)
    ]


def candidate_units(hits: list[Hit], tokenizer: Tokenizer, gaps: Gaps | None = None) -> list[Unit]:
    """Every unit of the candidate chunks once, in document order, each with the best
    rank and score of a chunk holding it and its adjacent units (the same paragraph,
    list or table: only whitespace without a blank line between them)."""
    best: dict[tuple[str, int, int], Unit] = {}
    for hit in hits:
        for unit in chunk_units(hit.chunk, tokenizer, gaps):
            kept = best.get(unit.key)
            if kept is None:
                unit.rank, unit.score = hit.rank, _finite(hit.score)
                best[unit.key] = unit
            elif hit.rank < kept.rank:
                kept.rank, kept.score = hit.rank, _finite(hit.score)
    units = sorted(best.values(), key=lambda u: u.key)
    units = _without_overlaps(units)
    for i in range(1, len(units)):
        a, b = units[i - 1], units[i]
        if a.doc_id == b.doc_id and b.start >= a.end and _joined(a, b):
            a.neighbours.append(i)
            b.neighbours.append(i - 1)
    return units


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0


def _without_overlaps(units: list[Unit]) -> list[Unit]:
    """Units of older builds cut from overlapping windows can overlap: keep the first."""
    out: list[Unit] = []
    for u in units:
        if out and out[-1].doc_id == u.doc_id and u.start < out[-1].end:
            continue
        out.append(u)
    return out


def _joined(a: Unit, b: Unit) -> bool:
    """Adjacent in the document: b starts right after a, with at most one line break
    between them (a blank line parts paragraphs)."""
    return b.start - a.end <= 4 and b.line - (a.line + a.text.count("\n")) <= 1


def section_groups(units: list[Unit]) -> list[list[int]]:
    """Indexes of the units sharing a document and heading path."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, u in enumerate(units):
        groups.setdefault((u.doc_id, u.label), []).append(i)
    return list(groups.values())
