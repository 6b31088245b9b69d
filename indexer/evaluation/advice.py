"""What made-up questions can tell, and what they cannot (`eval --generate`, `tune
--generate`, serve's Evaluation view).

The rows (strategy/mode, or tune's settings) are ranked by MRR@10; each carries the paired
difference from the best over the same questions (pooled over the seeds of the made-up
sets) with its 95% bootstrap interval. A row whose interval reaches 0 is tied with the
best: the questions cannot tell them apart. A winner is named only when no other row is
tied with it; otherwise the advice lists the tied rows, any of which will do.

The mode comparison carries the bias of made-up questions as a number: their lexical
queries favour BM25 over the embedding by `LEXICAL_BIAS` MRR@10 more than people's
questions do, so their bm25 − embedding gap is read with that much taken off.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..questions.on_demand import CAVEAT
from ..tables import table
from .metrics import paired_differences
from .run import Evaluation
from .sets import MRR_METRIC, Question
from .tune import TuneResult

# How much more made-up questions favour BM25 over the embedding than people's questions
# do: (bm25 - embedding MRR@10, means over strategies) on `--generate`'s default made-up sets
# minus the same on the sets' own questions (use-m3), the mean over seven bench sets of the
# mean over three runs each, and the range of the sets' means. Measured by
#   python -m bench.questions_agreement --stability 3 \
#       --sets tr,en,code,pdf,xquad-tr,xquad-en,code-pypi
# (its "bias" line for "after"; docs/results.md "The BM25 bias as a number").
LEXICAL_BIAS = 0.19
LEXICAL_BIAS_RANGE = (-0.02, 0.41)
BIAS_SETS = 7


@dataclass
class RowAdvice:
    label: str
    mrr: float
    difference: float  # this row's MRR@10 minus the best's, paired over the same questions
    ci95: tuple[float, float]
    tied: bool  # the interval reaches 0: not separable from the best

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.label,
            MRR_METRIC: round(self.mrr, 4),
            "difference": round(self.difference, 4),
            "ci95": [round(self.ci95[0], 4), round(self.ci95[1], 4)],
            "tied": self.tied,
        }


@dataclass
class Advice:
    rows: list[RowAdvice]  # best first
    questions: int
    modes: dict[str, float]  # mode -> mean MRR@10 over its rows (strategy/mode rows only)
    targets: int = (
        0  # the passages they ask about (the units the intervals resample); 0: one a question
    )

    @property
    def best(self) -> str:
        return self.rows[0].label

    @property
    def tied(self) -> list[str]:
        """The best and every row within noise of it."""
        return [r.label for r in self.rows if r.tied]

    @property
    def winner(self) -> str | None:
        """The best row when no other row is tied with it, else None."""
        return self.best if len(self.tied) == 1 else None

    @property
    def mode_gap(self) -> float | None:
        """bm25 − embedding MRR@10 (means over strategies) on these questions."""
        if "bm25" in self.modes and "embedding" in self.modes:
            return self.modes["bm25"] - self.modes["embedding"]
        return None

    def verdict(self) -> str:
        """One line: the winner, or the tied rows and that any of them will do."""
        if self.winner:
            return (
                f"winner on these made-up questions: {self.winner} (MRR@10 {self.rows[0].mrr:.3f}; every other "
                "row is below it beyond noise, paired 95% interval)"
            )
        shown = ", ".join(self.tied[:8]) + (
            f" and {len(self.tied) - 8} more" if len(self.tied) > 8 else ""
        )
        return (
            f"no winner: {len(self.tied)} rows are tied with the best within noise ({shown}); "
            f"these {self.questions} made-up questions cannot tell them apart, any of them will do"
        )

    def bias_line(self) -> str:
        """The mode comparison with the measured bias of made-up questions taken off."""
        gap = self.mode_gap
        measured = (
            f"{LEXICAL_BIAS:.2f} more than people's questions ({LEXICAL_BIAS_RANGE[0]:+.2f} to "
            f"{LEXICAL_BIAS_RANGE[1]:+.2f} on {BIAS_SETS} bench sets)"
        )
        if gap is None:
            return f"made-up questions favour bm25 over the embedding by about {measured} in MRR@10"
        return (
            f"bm25 - embedding here: {gap:+.3f} MRR@10; made-up questions favour bm25 by about {measured}, "
            f"so with people's questions expect about {gap - LEXICAL_BIAS:+.2f}; choose the mode on real "
            "questions"
        )

    def lines(self) -> list[str]:
        return [self.verdict(), self.bias_line()]

    def text(self) -> str:
        """The rows ranked on the made-up questions, each marked tied or not, then `lines`."""
        rows = [
            [
                r.label,
                f"{r.mrr:.3f}",
                "best" if i == 0 else f"{r.difference:+.3f}",
                "" if i == 0 else f"[{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]",
                "tied" if r.tied and i else "",
            ]
            for i, r in enumerate(self.rows)
        ]
        about = (
            f" about {self.targets} passages, resampled by passage"
            if 0 < self.targets < self.questions
            else ""
        )
        title = (
            f"made-up questions: each row against the best, paired over the same {self.questions} questions"
            f"{about} (95% bootstrap interval); an interval reaching 0 is a tie"
        )
        return (
            table(["row", "MRR@10", "- best", "95% interval", "within noise"], rows, title)
            + "\n\n"
            + "\n".join(self.lines())
        )

    def to_dict(self) -> dict[str, Any]:
        gap = self.mode_gap
        return {
            "questions": self.questions,
            "passages": self.targets or self.questions,
            "best": self.best,
            "winner": self.winner,
            "tied": self.tied,
            "rows": [r.to_dict() for r in self.rows],
            "verdict": self.verdict(),
            "modes": {m: round(v, 4) for m, v in self.modes.items()},
            "bm25_minus_embedding": None if gap is None else round(gap, 4),
            "lexical_bias": LEXICAL_BIAS,
            "lexical_bias_range": list(LEXICAL_BIAS_RANGE),
            "bm25_minus_embedding_corrected": None if gap is None else round(gap - LEXICAL_BIAS, 4),
            "caveat": CAVEAT,  # what to trust them for (the CLI's `note:` line)
        }


def advice_of(ev: Evaluation) -> Advice:
    """The advice on an evaluation's strategy/mode rows (`strategy (embedder)/mode` when
    several embedders were evaluated)."""
    several = len({r.embedder for r in ev.rows}) > 1
    per_question = {
        (f"{r.strategy} ({r.embedder})/{r.mode}" if several else r.label): r.per_question(
            MRR_METRIC
        )
        for r in ev.rows
    }
    return advise(per_question, clusters=targets_of(ev.questions, per_question))


def tune_advice(result: TuneResult) -> Advice:
    """The advice on `tune`'s settings (every candidate, in-sample), modes from their options."""
    per_question = {c.label: c.values(MRR_METRIC) for c in result.candidates}
    return advise(
        per_question,
        {c.label: c.options.mode for c in result.candidates},
        clusters=targets_of(result.questions, per_question),
    )


def targets_of(
    questions: Sequence[Question], per_question: Mapping[str, Sequence[float]]
) -> list[tuple[str, Any]] | None:
    """Each question's passage (its document and answer, else its span or its id): pooled
    made-up sets can ask about the same passage once per seed, and those questions are one
    piece of evidence, not three. None when the rows do not hold one value per question."""
    if any(len(v) != len(questions) for v in per_question.values()):
        return None
    return [(q.doc_id, q.answer or q.span or q.id) for q in questions]


def advise(
    per_question: Mapping[str, Sequence[float]],
    modes: Mapping[str, str | None] | None = None,
    clusters: Sequence[Hashable] | None = None,
) -> Advice:
    """The advice from each row's per-question MRR@10, the lists paired question by
    question. `modes` gives each row's search mode (default: what follows the last `/` of
    a `strategy/mode` label) for the mode comparison; `clusters` a key per question
    (`targets_of`): the intervals resample whole clusters."""
    if not per_question:
        raise ValueError("no rows to advise on")
    means = {k: sum(v) / len(v) if v else 0.0 for k, v in per_question.items()}
    order = sorted(means, key=lambda k: -means[k])  # stable: ties keep the caller's order
    best = per_question[order[0]]
    paired = paired_differences({k: per_question[k] for k in order[1:]}, best, clusters=clusters)
    rows = [RowAdvice(order[0], means[order[0]], 0.0, (0.0, 0.0), True)]
    rows += [
        RowAdvice(k, means[k], paired[k][0], paired[k][1], paired[k][1][1] >= 0) for k in order[1:]
    ]
    targets = len(set(clusters)) if clusters else len(best)
    return Advice(rows, len(best), _mode_means(means, modes), targets)


def _mode_means(
    means: dict[str, float], modes: Mapping[str, str | None] | None
) -> dict[str, float]:
    """mode -> the mean of its rows' means (rows without a mode left out)."""
    by_mode: dict[str, list[float]] = {}
    for label, value in means.items():
        mode = modes.get(label) if modes is not None else _label_mode(label)
        if mode:
            by_mode.setdefault(mode, []).append(value)
    return {m: sum(v) / len(v) for m, v in by_mode.items()}


def _label_mode(label: str) -> str | None:
    """The mode of a `strategy/mode` label (None without a `/`)."""
    return label.rsplit("/", 1)[1] if "/" in label else None
