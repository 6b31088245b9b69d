"""`indexer tune`: choose a collection's search settings on the user's own questions.

Every candidate setting — BM25 alone, the embedding alone, the default adaptive fusion and
its variants, weighted fusions, RRF — is scored on every question (each side is searched
once per question; settings only re-rank). The gain is measured by cross-validation: the
questions are split into folds, a setting is chosen on all folds but one and scored on
the one left out, so the reported numbers come from questions the choice did not see.
The winner on all questions is what `--save` stores on the collection — only when the
cross-validation shows it better than the collection's current default (the 95% interval of
the held-out gain lies above zero); otherwise the default is kept and the result says why.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import UsageError
from ..loaders import load_documents
from ..retrieval import Index, ResolvedOptions, SearchOptions
from ..retrieval import resolve as resolve_options
from ..settings import Settings, settings_for
from ..store import Store
from .coverage import covered, dropped
from .metrics import MRR_DEPTH, paired_difference, reciprocal_rank
from .opening import corpus_root, open_indexes
from .scoring import TokenSpans, score_question
from .sets import MRR_METRIC, NDCG_METRIC, Question, load_questions, resolve


def candidates() -> list[dict[str, Any]]:
    """The settings tried, simplest first (ties go to the earlier one)."""
    grid: list[dict[str, Any]] = [
        {"mode": "bm25"},
        {"mode": "embedding"},
        {"mode": "hybrid", "fusion": "adaptive"},
    ]
    for alpha_range in ((0.1, 0.8), (0.3, 0.8), (0.1, 0.9), (0.5, 0.9)):
        for coverage_range in ((0.3, 0.6), (0.3, 0.7), (0.2, 0.5)):
            grid.append(
                {
                    "mode": "hybrid",
                    "fusion": "adaptive",
                    "alpha_range": alpha_range,
                    "coverage_range": coverage_range,
                }
            )
    grid += [{"mode": "hybrid", "fusion": "weighted", "alpha": a / 10} for a in range(1, 10)]
    grid += [
        {"mode": "hybrid", "fusion": "rrf", "rrf_k": k, "weights": w}
        for k in (2, 10, 60)
        for w in ((1.0, 1.0), (1.0, 2.0), (2.0, 1.0))
    ]
    return grid


@dataclass
class Trial:
    strategy: str
    embedder: str
    options: ResolvedOptions  # resolved for the collection
    ranks: list[int | None] = field(default_factory=list)  # first hit per question
    # nDCG@10 per question (reported; MRR@10 chooses)
    ndcg: list[float] = field(default_factory=list)
    ctx_tokens: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.strategy}: {self.options.describe()}"

    def values(self, metric: str) -> list[float]:
        if metric == MRR_METRIC:
            return [reciprocal_rank(r) for r in self.ranks]
        if metric == NDCG_METRIC:
            return list(self.ndcg)
        k = int(metric.split("@")[1])
        return [1.0 if r is not None and r <= k else 0.0 for r in self.ranks]

    def mean(self, metric: str, rows: list[int] | None = None) -> float:
        values = self.values(metric)
        picked = values if rows is None else [values[i] for i in rows]
        return sum(picked) / len(picked) if picked else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "embedder": self.embedder,
            "setting": self.options.describe(),
            "settings": self.options.settings(),
            MRR_METRIC: round(self.mean(MRR_METRIC), 4),
            NDCG_METRIC: round(self.mean(NDCG_METRIC), 4),
            "recall@1": round(self.mean("recall@1"), 4),
            "recall@5": round(self.mean("recall@5"), 4),
            "ctx_tokens@5": round(sum(self.ctx_tokens) / max(len(self.ctx_tokens), 1), 1),
        }


@dataclass
class TuneResult:
    questions: list[Question]
    candidates: list[Trial]
    folds: int
    # metric -> per-question values of the tuned choice on unseen folds
    held_out: dict[str, list[float]]
    chosen: list[str]  # the label chosen in each fold
    winners: dict[str, Trial]  # strategy -> its best candidate on all questions
    best: Trial  # the best candidate on all questions (over every strategy)
    baselines: dict[str, Trial]  # "bm25", "embedding", "default" of the winning strategy
    # per collection: save the tuned setting or keep
    decisions: list[Decision] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)  # collections whose defaults were saved
    # collection -> ids of the questions left out: about documents it does not hold (`coverage`)
    left_out: dict[str, list[str]] = field(default_factory=dict)

    def versus(self, name: str, metric: str = MRR_METRIC) -> tuple[float, tuple[float, float]]:
        """The cross-validated gain of tuning over a baseline, with its 95% interval."""
        return paired_difference(self.held_out[metric], self.baselines[name].values(metric))

    def to_dict(self) -> dict[str, Any]:
        n = len(self.questions)
        out = {
            "questions": n,
            "folds": self.folds,
            "chosen_per_fold": self.chosen,
            "best": self.best.to_dict(),
            "winners": {s: c.to_dict() for s, c in self.winners.items()},
            "saved": self.saved,
            "kept": [d.collection for d in self.decisions if not d.saved],
            "decisions": [d.to_dict() for d in self.decisions],
            "left_out": dropped(self.left_out),
            "cross_validated": {m: round(sum(v) / n, 4) for m, v in self.held_out.items()},
        }
        for name in self.baselines:
            mean, (lo, hi) = self.versus(name)
            out[f"gain_vs_{name}"] = {
                "metric": MRR_METRIC,
                "difference": round(mean, 4),
                "ci95": [round(lo, 4), round(hi, 4)],
            }
        return out


METRICS = (MRR_METRIC, NDCG_METRIC, "recall@1", "recall@5")


def verdict(lo: float, hi: float) -> str:
    """What a paired 95% interval says: `better` above zero, `worse` below, else noise."""
    return "better" if lo > 0 else "worse" if hi < 0 else "noise (interval spans 0)"


@dataclass
class Decision:
    """Whether `--save` stores a collection's tuned setting: only when its cross-validated
    gain over the collection's current default search has an interval above zero. A
    default that several benchmark sets chose is not replaced on a difference the
    user's own questions cannot tell from noise, and never by a setting they call worse."""

    current: Trial  # the collection's default search now (a saved tuned one, or the library's)
    tuned: Trial  # the collection's best setting on all questions
    gain: float  # MRR@10 of its own cross-validated choice minus the current default's
    ci95: tuple[float, float]
    tuned_before: bool  # the current default was saved by an earlier tune
    saved: bool = False
    margin: float = 0.0  # what the interval must clear (made-up questions: their lean to BM25)

    @property
    def collection(self) -> str:
        return f"{self.tuned.strategy} ({self.tuned.embedder})"

    @property
    def same(self) -> bool:
        return self.tuned.options.settings() == self.current.options.settings()

    @property
    def verdict(self) -> str:
        return "same setting" if self.same else verdict(*self.ci95)

    @property
    def save(self) -> bool:
        """Whether the tuned setting should become the default."""
        return not self.same and self.ci95[0] > self.margin

    def reason(self) -> str:
        default = f"{'tuned' if self.tuned_before else 'default'} search ({self.current.options.describe()})"
        if self.same:
            return f"its {default} is already the best setting on these questions"
        lo, hi = self.ci95
        measured = (
            f"{self.tuned.options.describe()} vs its {default}: MRR@10 {self.gain:+.3f} "
            f"[{lo:+.3f}, {hi:+.3f}] cross-validated, {self.verdict}"
        )
        if self.save:
            return measured
        if self.margin:
            return measured + (
                f"; on made-up questions a setting is saved only when its interval lies above "
                f"{self.margin:+.2f}, their measured lean towards BM25"
            )
        return measured + "; a setting is saved only when its interval lies above 0"

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "strategy": self.tuned.strategy,
            "embedder": self.tuned.embedder,
            "current": self.current.options.describe(),
            "current_is_tuned": self.tuned_before,
            "tuned": self.tuned.options.describe(),
            "metric": MRR_METRIC,
            "difference": round(self.gain, 4),
            "ci95": [round(self.ci95[0], 4), round(self.ci95[1], 4)],
            "margin": self.margin,
            "verdict": self.verdict,
            "action": ("saved" if self.saved else "would save") if self.save else "kept",
            "reason": self.reason(),
        }


def tune(
    questions_path: str | os.PathLike[str],
    strategies: list[str],
    *,
    settings: Settings | None = None,
    built_with: str | None = None,
    corpus: str | os.PathLike[str] | None = None,
    folds: int = 5,
    save: bool = False,
    seed: int = 13,
    progress: Callable[[str], None] | None = None,
    margin: float = 0.0,
) -> TuneResult:
    """Score every candidate setting on every strategy (the collections built with
    `built_with`, None: the one each is read with), cross-validate the choice, and
    (with `save`) store each strategy's winner as its collection's default search where
    the cross-validation shows it better than the current default (`decisions` says,
    per collection, what was saved or kept and why). `margin`: the gain a setting's
    interval must clear to be saved (questions made up from the documents favour BM25 by
    about `advice.LEXICAL_BIAS`: `tune --generate` passes it)."""
    questions = load_questions(questions_path)
    _check_folds(questions, folds)
    settings = settings_for(settings)
    store = Store(settings)
    if save:  # say it before the work, not after
        store.builds.require_writable("saving search settings")
    indexes = open_indexes(store, strategies, (built_with,))
    root = Path(corpus) if corpus else corpus_root(Path(questions_path), questions, indexes)
    _, stream = load_documents([root])
    docs = {d.doc_id: d for d in stream}
    resolve(questions, docs)
    questions, left_out = covered(questions_path, questions, indexes, root)
    _check_folds(questions, folds)
    spans = TokenSpans(docs)
    scored: list[Trial] = []
    for index in indexes:
        scored += _score_all(index, questions, spans, progress)
    order = assign_folds(len(questions), folds, seed)
    held_out, chosen = _cross_validate(scored, order, folds)
    best = _best(scored)
    winners = {index.entry.strategy: _best(_of(scored, index.entry.strategy)) for index in indexes}
    mine = _of(scored, best.strategy)
    baselines = {"bm25": mine[0], "embedding": mine[1], "default": mine[2]}
    result = TuneResult(
        questions,
        scored,
        folds,
        held_out=held_out,
        chosen=chosen,
        winners=winners,
        best=best,
        baselines=baselines,
        left_out=left_out,
    )
    for index in indexes:
        strategy = index.entry.strategy
        result.decisions.append(
            _decide(
                index,
                _of(scored, strategy),
                winners[strategy],
                order=order,
                folds=folds,
                margin=margin,
            )
        )
    if save:
        _save(store, result)
    return result


def _check_folds(questions: list[Question], folds: int) -> None:
    if folds < 2:
        raise UsageError(f"--folds must be at least 2, not {folds}")
    if len(questions) < folds:
        raise UsageError(
            f"{len(questions)} questions cannot be split into {folds} folds; use fewer --folds"
        )


def _of(scored: list[Trial], strategy: str) -> list[Trial]:
    """The candidates of one strategy."""
    return [c for c in scored if c.strategy == strategy]


def _save(store: Store, result: TuneResult) -> None:
    """Store each winner the decisions say to save as its collection's default search."""
    for decision in result.decisions:
        if decision.save:
            tuned = decision.tuned
            store.catalogue.save_search(tuned.strategy, tuned.embedder, tuned.options.settings())
            decision.saved = True
            result.saved.append(decision.collection)


def _cross_validate(
    scored: list[Trial], order: list[int], folds: int
) -> tuple[dict[str, list[float]], list[str]]:
    """Each question scored by the setting chosen on the folds without it: per-metric
    held-out values, and the label chosen in each fold."""
    held_out: dict[str, list[float]] = {m: [0.0] * len(order) for m in METRICS}
    chosen = []
    for fold in range(folds):
        train = [i for i, f in enumerate(order) if f != fold]
        pick = _best(scored, train)
        chosen.append(pick.label)
        for metric in METRICS:
            values = pick.values(metric)
            for i, f in enumerate(order):
                if f == fold:
                    held_out[metric][i] = values[i]
    return held_out, chosen


def _decide(
    index: Index,
    mine: list[Trial],
    winner: Trial,
    order: list[int],
    folds: int,
    margin: float = 0.0,
) -> Decision:
    """The collection's own cross-validated choice against its current default search."""
    current = _key(index.options(SearchOptions(k=MRR_DEPTH)))
    default = next(c for c in mine if _key(c.options) == current)
    held_out, _ = _cross_validate(mine, order, folds)
    gain, ci95 = paired_difference(held_out[MRR_METRIC], default.values(MRR_METRIC))
    return Decision(default, winner, gain, ci95, tuned_before=bool(index.saved), margin=margin)


def _key(options: ResolvedOptions) -> str:
    return repr(sorted(options.settings().items()))


def _settings(index: Index) -> list[ResolvedOptions]:
    """The grid's settings resolved for a collection, then its current default, each once.
    The current default is always scored (a setting saved by hand or by an older grid may
    not be among the candidates), last so that ties go to the grid."""
    current = index.options(SearchOptions(k=MRR_DEPTH))
    fusion = index.snapshot().parts.fusion
    grid = [
        resolve_options(SearchOptions(k=MRR_DEPTH, **raw), None, index.entry.embedder, fusion)
        for raw in candidates()
    ]
    settings: list[ResolvedOptions] = []
    seen: set[str] = set()
    for options in grid + [current]:
        key = _key(options)
        if key not in seen:
            seen.add(key)
            settings.append(options)
    return settings


def _score_all(
    index: Index,
    questions: list[Question],
    spans: TokenSpans,
    progress: Callable[[str], None] | None,
) -> list[Trial]:
    out = [Trial(index.entry.strategy, index.entry.embedder, o) for o in _settings(index)]
    for n, q in enumerate(questions, start=1):
        for cand in out:
            # both sides are searched once per question
            hits = index.search(q.question, cand.options)
            result = score_question(q, hits, 5, None, spans)
            cand.ranks.append(result.first_hit)
            cand.ndcg.append(result.ndcg)
            cand.ctx_tokens.append(result.ctx_tokens)
        if progress and (n % 50 == 0 or n == len(questions)):
            progress(
                f"{index.entry.strategy}: {n}/{len(questions)} questions × {len(out)} settings"
            )
    return out


def assign_folds(n: int, folds: int, seed: int) -> list[int]:
    """A fold number per question: a seeded shuffle dealt round-robin (deterministic)."""
    rows = list(range(n))
    random.Random(seed).shuffle(rows)
    order = [0] * n
    for position, row in enumerate(rows):
        order[row] = position % folds
    return order


def _best(scored: list[Trial], rows: list[int] | None = None) -> Trial:
    """The highest MRR@10 on `rows` (recall@1 breaks ties, then the simpler setting)."""
    return max(
        scored,
        key=lambda c: (
            round(c.mean(MRR_METRIC, rows), 9),
            round(c.mean("recall@1", rows), 9),
            -scored.index(c),
        ),
    )
