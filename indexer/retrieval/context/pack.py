"""Packing: the most likely units under a token budget, merged into exact spans.

Units are taken by probability (`context.score`) until the budget is spent or the units
taken hold `mass` of the probability (the rest is unlikely to answer: an answer-sized
context stops there); a unit under FLOOR of the best unit's probability is not handed over
even when the budget has room (filler, where the likely units were too big to fit), unless
the budget is to be filled (`mass` 1). A table row brings its table's header rows. Taken units that are
adjacent in their document become one span (the whitespace between them included, so a
span is an exact slice); spans are grouped under their label (document and heading
path), groups in the order of their best unit, spans within a group in document order.

What is handed over is `Context.text()`: each group's label line, then its spans,
`…` between spans that are not adjacent. Its length in the tool's tokenizer is counted
exactly and never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...text.tokens import Tokenizer
from ...types import pages_label
from .units import Gaps, Unit

GAP = "\n…\n"  # between two spans of one group that are not adjacent
# measured on tr, en, xquad-tr, xquad-en (bench/context.py): strict recall as before (one
# XQuAD-tr question fewer at 200 tokens), IoU up at every budget, 1-9% fewer tokens
FLOOR = 0.005
SEP = "\n\n"  # between groups


@dataclass(slots=True)
class Span:
    """An exact slice of a document: `text == document[start:end]`."""

    doc_id: str
    start: int
    end: int
    start_line: int
    end_line: int
    start_page: int
    end_page: int
    label: str
    text: str
    score: float  # the best probability of a unit in it
    n_tokens: int
    kinds: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Context:
    """An answer-sized context: spans under a budget, and what they cost."""

    query: str
    budget: int
    spans: list[Span]
    tokens: int  # of `text()`, labels and separators included
    label_tokens: int  # what the label lines cost of it
    candidates: int  # chunks the units came from
    units: int  # units those chunks held
    scoring: str  # "bm25+embedding", or "bm25" where the units have no vectors
    strategy: str = ""
    whole_tokens: int = 0  # what the top `whole_k` whole chunks of a plain search cost
    whole_k: int = 0
    note: str = ""  # why the units were scored by BM25 alone, or why their vectors cost more

    def text(self) -> str:
        return render(self.spans)

    def empty_note(self, option: str) -> str:
        """Why there are no spans ("" when there are): no candidate, or none fits the
        budget with its label line (`option` names how the caller raises the budget)."""
        if self.spans:
            return ""
        if not self.candidates:
            return "no results"
        return (
            f"no span fits in {self.budget} tokens with its label line "
            f"([file] heading path); raise {option}"
        )

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "spans"}
        data["spans"] = [s.to_dict() for s in self.spans]
        return data


def label_line(span: Span) -> str:
    pages = pages_label(span.start_page, span.end_page)
    return f"[{span.doc_id}{' ' + pages if pages else ''}] {span.label}"


def render(spans: list[Span]) -> str:
    """The spans as one text: a label line above each group's spans."""
    out: list[str] = []
    label = None
    last_end = None
    for span in spans:
        key = (span.doc_id, span.label)
        if key != label:
            if out:
                out.append(SEP)
            out.append(label_line(span) + "\n")
            label = key
        elif last_end is not None:
            out.append(GAP)
        out.append(span.text)
        last_end = span.end
    return "".join(out)


def pack(
    units: list[Unit],
    probs: np.ndarray,
    budget: int,
    tokenizer: Tokenizer,
    mass: float = 1.0,
    gaps: Gaps | None = None,
    first: Sequence[int] = (),
) -> tuple[list[Span], int]:
    """The spans to hand over, and how many tokens their label lines cost. `gaps` holds
    the text between adjacent units (keyed by document and the first unit's end). `first`:
    units handed over before any other, in that order, as long as they fit (the definition
    an exact symbol lookup names); the rest go by probability."""
    taking = _Taking(units, budget, tokenizer)
    taking.in_order(first)
    taking.by_probability(probs, mass)
    taken = taking.taken
    chosen = [units[i] for i in sorted(taken)] + list(taking.heads.values())
    spans = _spans(chosen, _taken_scores(units, probs, taken), gaps or {}, tokenizer)
    return _within(_ordered(spans), budget, tokenizer)


class _Taking:
    """The units taken so far and what they cost: each unit its tokens and a separator, the
    first unit of a section its label line, a table row its header row once."""

    def __init__(self, units: list[Unit], budget: int, tokenizer: Tokenizer) -> None:
        self.units, self.budget, self.tokenizer = units, budget, tokenizer
        self.taken: set[int] = set()
        self.heads: dict[tuple[str, int, int], Unit] = {}
        self.labels: set[tuple[str, str]] = set()
        self.label_cost: dict[tuple[str, str], int] = {}
        self.used = 0

    def in_order(self, first: Sequence[int]) -> None:
        """Take these units in this order, as long as they fit."""
        for i in first:
            if not self.take(i):
                break

    def by_probability(self, probs: np.ndarray, mass: float) -> None:
        """Then the most likely units until what is taken holds `mass` of the probability;
        below mass 1, none under FLOOR of the best (no filler where a likely one did not fit)."""
        floor = FLOOR * float(probs.max()) if mass < 1 and len(probs) else 0.0
        held = float(probs[list(self.taken)].sum()) if self.taken else 0.0
        for i in np.argsort(-probs, kind="stable"):
            if held >= mass or probs[i] < floor:
                break
            if int(i) not in self.taken and self.take(int(i)):
                held += float(probs[i])

    def take(self, i: int) -> bool:
        """Take unit `i` if it fits the budget left; whether it did."""
        u = self.units[i]
        group = (u.doc_id, u.label)
        cost = u.n_tokens + 2
        if group not in self.labels:
            if group not in self.label_cost:
                label = f"[{u.doc_id}] {u.label}\n"
                self.label_cost[group] = self.tokenizer.count(label) + 2
            cost += self.label_cost[group]
        head = _head_unit(u)
        if head is not None and head.key not in self.heads:
            cost += self.tokenizer.count(head.text) + 2
        if self.used + cost > self.budget:
            return False
        self.taken.add(i)
        self.used += cost
        self.labels.add(group)
        if head is not None:
            self.heads.setdefault(head.key, head)
        return True


def _taken_scores(
    units: list[Unit], probs: np.ndarray, taken: set[int]
) -> dict[tuple[str, int, int], float]:
    """The probability of each unit taken, by its key; a header row is worth what its best
    row taken is."""
    scores = {units[i].key: float(probs[i]) for i in taken}
    for i in taken:
        row_head = units[i].head
        if row_head is not None:
            key = (units[i].doc_id, row_head[0], row_head[1])
            scores[key] = max(scores.get(key, 0.0), scores[units[i].key])
    return scores


def _head_unit(u: Unit) -> Unit | None:
    if u.head is None or not u.head_text:
        return None
    return Unit(
        u.doc_id, u.head[0], u.head[1], "head", u.label, u.head_text, 0, u.page, u.head_line
    )


def _spans(
    units: list[Unit], probs: dict[tuple[str, int, int], float], gaps: Gaps, tokenizer: Tokenizer
) -> list[Span]:
    """Adjacent units of one document merged (the text between them from `gaps`)."""
    units = sorted({u.key: u for u in units}.values(), key=lambda u: u.key)
    out: list[Span] = []
    for u in units:
        between = _between(out[-1], u, gaps) if out else None
        if between is not None:
            _extend(out[-1], between, u, probs.get(u.key, 0.0))
            continue
        out.append(
            Span(
                u.doc_id,
                u.start,
                u.end,
                u.line,
                u.line + u.text.count("\n"),
                u.page,
                u.page,
                u.label,
                u.text,
                probs.get(u.key, 0.0),
                0,
                [u.kind],
            )
        )
    for span in out:
        span.n_tokens = tokenizer.count(span.text)
    return out


def _between(last: Span, u: Unit, gaps: Gaps) -> str | None:
    """The whitespace joining a span to the next unit, None when they are not adjacent."""
    if last.doc_id != u.doc_id:
        return None
    between = gaps.get((u.doc_id, last.end))
    return between if between is not None and last.end + len(between) == u.start else None


def _extend(span: Span, between: str, u: Unit, prob: float) -> None:
    """The next unit joined to a span (the whitespace between them kept)."""
    span.text += between + u.text
    span.end = u.end
    span.end_line = u.line + u.text.count("\n")
    span.end_page = max(span.end_page, u.page)
    span.score = max(span.score, prob)
    span.kinds.append(u.kind)


def _ordered(spans: list[Span]) -> list[Span]:
    """Groups (document, label) by their best span; spans of a group in document order."""
    best: dict[tuple[str, str], float] = {}
    for s in spans:
        key = (s.doc_id, s.label)
        best[key] = max(best.get(key, 0.0), s.score)
    return sorted(spans, key=lambda s: (-best[(s.doc_id, s.label)], s.doc_id, s.label, s.start))


def _within(spans: list[Span], budget: int, tokenizer: Tokenizer) -> tuple[list[Span], int]:
    """Drop the least likely span until the rendered text fits the budget exactly."""
    while spans:
        total = tokenizer.count(render(spans))
        if total <= budget:
            break
        worst = min(range(len(spans)), key=lambda i: (spans[i].score, -spans[i].start))
        spans = spans[:worst] + spans[worst + 1 :]
    labels = {(s.doc_id, s.label): label_line(s) for s in spans}
    return spans, sum(tokenizer.count(line + "\n") for line in labels.values())
