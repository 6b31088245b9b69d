"""`indexer eval --budget N`: answer-sized context scored against the answer spans.

For every strategy × mode row and every budget, over the questions that name answer
excerpts (`answer`, `answers`): the packed context (`Index.context` on the row's own
search) and, as the baseline, the row's whole chunks in rank order cut at the same
budget. Each is scored by `context_eval.score_context`: strict (every answer inside),
token recall, precision and IoU, and the tokens used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..retrieval.context import CANDIDATES, check, scored_units
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
            "questions": n, "strict": int(sum(strict)),
            "strict_ci95": [round(x * n, 2) for x in bootstrap_interval(strict)],
            "recall": round(sum(s.recall for s in scores) / n, 4) if n else 0.0,
            "precision": round(sum(s.precision for s in scores) / n, 4) if n else 0.0,
            "iou": round(sum(iou) / n, 4) if n else 0.0,
            "iou_ci95": [round(x, 4) for x in bootstrap_interval(iou)],
            "tokens": round(sum(s.tokens for s in scores) / n, 1) if n else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, **{kind: self.summary(kind) for kind in KINDS}}


def check_budgets(budgets: tuple[int, ...]) -> tuple[int, ...]:
    """The budgets sorted, each checked (before any work)."""
    for b in budgets:
        check(b)
    return tuple(sorted(set(budgets)))


def answered(questions: list[Question]) -> list[Question]:
    """The questions a context can be scored on: those with answer spans."""
    return [q for q in questions if q.answer_spans]


def context_cells(index, q: Question, hits: list[Hit], budgets: tuple[int, ...], spans: TokenSpans,
                  cells: list[ContextCell]) -> None:
    """Score one question's packed context and whole chunks at every budget into `cells`
    (one per budget, in order); `hits` are the row's own ranked hits."""
    answers = [(q.doc_id, s, e) for s, e in q.answer_spans]
    scored = scored_units(index, q.question, hits[:CANDIDATES])
    tokenizer = scored.tokenizer
    for cell, budget in zip(cells, budgets):
        packed = scored.pack(budget)
        handed = [(s.doc_id, s.start, s.end) for s in packed.spans]
        cell.packed.append(score_context(answers, handed, packed.tokens, spans))
        places, used = whole_chunks(hits, budget, tokenizer)
        cell.whole.append(score_context(answers, places, used, spans))
