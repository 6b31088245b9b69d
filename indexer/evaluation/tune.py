"""`indexer tune`: choose a collection's search settings on the user's own questions.

Every candidate setting — BM25 alone, the embedding alone, the default adaptive fusion and
its variants, weighted fusions, RRF — is scored on every question (each side is searched
once per question; settings only re-rank). The gain is measured by cross-validation: the
questions are split into folds, a setting is chosen on all folds but one and scored on
the one left out, so the reported numbers come from questions the choice did not see.
The winner on all questions is what `--save` stores on the collection.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..loaders import load_documents
from ..search import Index, SearchOptions
from ..settings import Settings, settings_for
from ..store import Store
from .metrics import MRR_DEPTH, paired_difference, reciprocal_rank
from .questions import MRR_METRIC, Question, load_questions, resolve
from .run import _corpus_root, _open_all, _score, _TokenSpans


def candidates() -> list[dict[str, Any]]:
    """The settings tried, simplest first (ties go to the earlier one)."""
    grid: list[dict[str, Any]] = [{"mode": "bm25"}, {"mode": "embedding"}, {"mode": "hybrid", "fusion": "adaptive"}]
    for alpha_range in ((0.1, 0.8), (0.3, 0.8), (0.1, 0.9), (0.5, 0.9)):
        for coverage_range in ((0.3, 0.6), (0.3, 0.7), (0.2, 0.5)):
            grid.append({"mode": "hybrid", "fusion": "adaptive", "alpha_range": alpha_range,
                         "coverage_range": coverage_range})
    grid += [{"mode": "hybrid", "fusion": "weighted", "alpha": a / 10} for a in range(1, 10)]
    grid += [{"mode": "hybrid", "fusion": "rrf", "rrf_k": k, "weights": w}
             for k in (2, 10, 60) for w in ((1.0, 1.0), (1.0, 2.0), (2.0, 1.0))]
    return grid


@dataclass
class Candidate:
    strategy: str
    embedder: str
    options: SearchOptions  # resolved for the collection
    ranks: list[int | None] = field(default_factory=list)  # first hit per question
    ctx_tokens: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.strategy}: {self.options.describe()}"

    def values(self, metric: str) -> list[float]:
        if metric == MRR_METRIC:
            return [reciprocal_rank(r) for r in self.ranks]
        k = int(metric.split("@")[1])
        return [1.0 if r is not None and r <= k else 0.0 for r in self.ranks]

    def mean(self, metric: str, rows: list[int] | None = None) -> float:
        values = self.values(metric)
        rows = range(len(values)) if rows is None else rows
        picked = [values[i] for i in rows]
        return sum(picked) / len(picked) if picked else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "embedder": self.embedder, "setting": self.options.describe(),
                "settings": self.options.settings(), MRR_METRIC: round(self.mean(MRR_METRIC), 4),
                "recall@1": round(self.mean("recall@1"), 4), "recall@5": round(self.mean("recall@5"), 4),
                "ctx_tokens@5": round(sum(self.ctx_tokens) / max(len(self.ctx_tokens), 1), 1)}


@dataclass
class TuneResult:
    questions: list[Question]
    candidates: list[Candidate]
    folds: int
    held_out: dict[str, list[float]]  # metric -> per-question values of the tuned choice on unseen folds
    chosen: list[str]  # the label chosen in each fold
    winners: dict[str, Candidate]  # strategy -> its best candidate on all questions
    best: Candidate  # the best candidate on all questions (over every strategy)
    baselines: dict[str, Candidate]  # "bm25", "embedding", "default" of the winning strategy
    saved: list[str] = field(default_factory=list)  # collections whose defaults were saved

    def versus(self, name: str, metric: str = MRR_METRIC) -> tuple[float, tuple[float, float]]:
        """The cross-validated gain of tuning over a baseline, with its 95% interval."""
        return paired_difference(self.held_out[metric], self.baselines[name].values(metric))

    def to_dict(self) -> dict[str, Any]:
        n = len(self.questions)
        out = {"questions": n, "folds": self.folds, "chosen_per_fold": self.chosen, "best": self.best.to_dict(),
               "winners": {s: c.to_dict() for s, c in self.winners.items()}, "saved": self.saved,
               "cross_validated": {m: round(sum(v) / n, 4) for m, v in self.held_out.items()}}
        for name in self.baselines:
            mean, (lo, hi) = self.versus(name)
            out[f"gain_vs_{name}"] = {"metric": MRR_METRIC, "difference": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)]}
        return out


METRICS = (MRR_METRIC, "recall@1", "recall@5")


def tune(
    questions_path: str | os.PathLike,
    strategies: list[str],
    *,
    settings: Settings | None = None,
    db: str | os.PathLike | None = None,
    chroma_url: str | None = None,
    embedder: str | None = None,
    ollama_host: str | None = None,
    corpus: str | os.PathLike | None = None,
    folds: int = 5,
    save: bool = False,
    seed: int = 13,
    progress=None,
) -> TuneResult:
    """Score every candidate setting on every strategy, cross-validate the choice, and
    (with `save`) store each strategy's winner as its collection's default search."""
    questions = load_questions(questions_path)
    if folds < 2:
        raise UsageError(f"--folds must be at least 2, not {folds}")
    if len(questions) < folds:
        raise UsageError(f"{len(questions)} questions cannot be split into {folds} folds; use fewer --folds")
    settings = settings_for(settings, db=db, chroma_url=chroma_url, ollama_host=ollama_host)
    store = Store(settings)
    if save:  # say it before the work, not after
        store.require_writable("saving search settings")
    indexes = _open_all(store, strategies, (embedder,), settings)
    root = Path(corpus) if corpus else _corpus_root(Path(questions_path), questions, indexes)
    _, docs = load_documents([root])
    docs = {d.doc_id: d for d in docs}
    resolve(questions, docs)
    spans = _TokenSpans(docs)
    scored: list[Candidate] = []
    for index in indexes:
        scored += _score_all(index, questions, spans, progress)
    order = _folds(len(questions), folds, seed)
    held_out: dict[str, list[float]] = {m: [0.0] * len(questions) for m in METRICS}
    chosen = []
    for fold in range(folds):
        train = [i for i, f in enumerate(order) if f != fold]
        test = [i for i, f in enumerate(order) if f == fold]
        pick = _best(scored, train)
        chosen.append(pick.label)
        for metric in METRICS:
            values = pick.values(metric)
            for i in test:
                held_out[metric][i] = values[i]
    best = _best(scored)
    winners = {index.entry.strategy: _best([c for c in scored if c.strategy == index.entry.strategy])
               for index in indexes}
    mine = [c for c in scored if c.strategy == best.strategy]
    baselines = {"bm25": mine[0], "embedding": mine[1], "default": mine[2]}
    result = TuneResult(questions, scored, folds, held_out, chosen, winners, best, baselines)
    if save:
        for index in indexes:
            winner = winners[index.entry.strategy]
            store.save_search(index.entry.strategy, index.entry.embedder, winner.options.settings())
            result.saved.append(f"{index.entry.strategy} ({index.entry.embedder})")
    return result


def _score_all(index: Index, questions: list[Question], spans: _TokenSpans, progress) -> list[Candidate]:
    settings = []
    seen = set()
    for raw in candidates():
        options = SearchOptions(k=MRR_DEPTH, **raw).resolved(None, index.entry.embedder)
        key = repr(sorted(options.settings().items()))
        if key not in seen:
            seen.add(key)
            settings.append(options)
    out = [Candidate(index.entry.strategy, index.entry.embedder, options) for options in settings]
    for n, q in enumerate(questions, start=1):
        for cand in out:
            hits = index.search(q.question, cand.options)  # both sides are searched once per question
            result = _score(q, hits, 5, None, spans)
            cand.ranks.append(result.first_hit)
            cand.ctx_tokens.append(result.ctx_tokens)
        if progress and (n % 50 == 0 or n == len(questions)):
            progress(f"{index.entry.strategy}: {n}/{len(questions)} questions × {len(out)} settings")
    return out


def _folds(n: int, folds: int, seed: int) -> list[int]:
    """A fold number per question: a seeded shuffle dealt round-robin (deterministic)."""
    rows = list(range(n))
    random.Random(seed).shuffle(rows)
    order = [0] * n
    for position, row in enumerate(rows):
        order[row] = position % folds
    return order


def _best(scored: list[Candidate], rows: list[int] | None = None) -> Candidate:
    """The highest MRR@10 on `rows` (recall@1 breaks ties, then the simpler setting)."""
    return max(scored, key=lambda c: (round(c.mean(MRR_METRIC, rows), 9), round(c.mean("recall@1", rows), 9),
                                      -scored.index(c)))
