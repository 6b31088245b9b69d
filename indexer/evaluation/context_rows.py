"""`indexer eval --budget N`: answer-sized context scored against the answer spans.

For every strategy × mode row and every budget, over the questions that name answer
excerpts (`answer`, `answers`): the packed context (`Index.context` on the row's own
search) and, as the baseline, the row's whole chunks in rank order cut at the same
budget. Each is scored by `context_eval.score_context`: strict (every answer inside),
token recall, precision and IoU, and the tokens used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..retrieval import Index
from ..retrieval.context.answer import CANDIDATES, check, scored_units
from ..types import Hit
from .context_eval import ContextScore, score_context, whole_chunks
from .metrics import bootstrap_interval
from .scoring import TokenSpans
from .sets import Question

KINDS = ("packed", "whole")


@dataclass
class ContextCell:
    """One row at one budget: the packed context's scores and whole chunks' (per question)."""

    budget: int
    packed: list[ContextScore] = field(default_factory=list)
    whole: list[ContextScore] = field(default_factory=list)

    def summary(self, kind: str) -> dict[str, Any]:
        scores = self.packed if kind == "packed" else self.whole
        n = len(scores)
        strict = [1.0 if s.strict else 0.0 for s in scores]
        iou = [s.iou for s in scores]
        return {
            "questions": n,
            "strict": int(sum(strict)),
            "strict_ci95": _interval(strict, n, 2),
            "recall": _mean([s.recall for s in scores], 4),
            "precision": _mean([s.precision for s in scores], 4),
            "iou": _mean(iou, 4),
            "iou_ci95": _interval(iou, 1, 4),
            "tokens": _mean([s.tokens for s in scores], 1),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, **{kind: self.summary(kind) for kind in KINDS}}


def _mean(values: Sequence[float], digits: int) -> float:
    """The mean rounded to `digits` (0.0 of nothing)."""
    return round(sum(values) / len(values), digits) if values else 0.0


def _interval(values: list[float], scale: int, digits: int) -> list[float]:
    """The 95% bootstrap interval of the mean, times `scale`, rounded to `digits`."""
    return [round(x * scale, digits) for x in bootstrap_interval(values)]


def check_budgets(budgets: tuple[int, ...]) -> tuple[int, ...]:
    """The budgets sorted, each checked (before any work)."""
    for b in budgets:
        check(b)
    return tuple(sorted(set(budgets)))


def context_cells(
    index: Index,
    q: Question,
    hits: list[Hit],
    budgets: tuple[int, ...],
    spans: TokenSpans,
    cells: list[ContextCell],
) -> None:
    """Score one question's packed context and whole chunks at every budget into `cells`
    (one per budget, in order); `hits` are the row's own ranked hits."""
    answers = [(q.doc_id, s, e) for s, e in q.answer_spans]
    scored = scored_units(index.snapshot(), q.question, hits[:CANDIDATES])
    tokenizer = scored.tokenizer
    for cell, budget in zip(cells, budgets):
        packed = scored.pack(budget)
        handed = [(s.doc_id, s.start, s.end) for s in packed.spans]
        cell.packed.append(score_context(answers, handed, packed.tokens, spans))
        places, used = whole_chunks(hits, budget, tokenizer)
        cell.whole.append(score_context(answers, places, used, spans))
