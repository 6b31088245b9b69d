"""The evaluator: run a question set against stored collections and score every
strategy × mode the way the seed's chunk-bench did — and more honestly.

A retrieved chunk is a *hit* when it overlaps the expected section (or symbol) span, or
belongs to one of the expected documents of a whole-document target, and a *strict hit*
when it contains the whole expected answer. Recall@k, MRR@10 and nDCG@10 come with 95%
bootstrap intervals; ctxTok@k and sections@k say what the recall costs.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..chunkers import collection_name
from ..errors import StaleIndex, UsageError
from ..loaders import Discovery, load_documents
from ..retrieval import MODES, Index, SearchOptions
from ..retrieval.collections import every_built
from ..retrieval.context.answer import CANDIDATES
from ..retrieval.searching.scope import matcher
from ..settings import Settings, settings_for
from ..store import Store
from .compare import compare_pairs
from .context_rows import ContextCell, check_budgets, context_cells
from .coverage import covered
from .metrics import (
    MRR_DEPTH,
    NDCG_DEPTH,
    bootstrap_interval,
    mrr,
    paired_difference,
    recall_at,
    reciprocal_rank,
)
from .opening import corpus_root, open_indexes
from .scoring import QuestionResult, TokenSpans, score_question
from .sets import MRR_METRIC, NDCG_METRIC, Question, load_questions, resolve


@dataclass(kw_only=True)
class Row:
    strategy: str
    mode: str
    embedder: str
    chunks: int
    avg_tokens: float
    ks: list[int]
    ctx_k: int
    results: list[QuestionResult]
    seconds: float
    budget: int | None = None
    build_seconds: float = 0.0
    context: list[ContextCell] = field(default_factory=list)  # `--budget`: one per budget

    @property
    def label(self) -> str:
        return f"{self.strategy}/{self.mode}"

    @property
    def n(self) -> int:
        return len(self.results)

    def recall(self, k: int, strict: bool = False) -> int:
        return recall_at([r.first_strict if strict else r.first_hit for r in self.results], k)

    @property
    def mrr(self) -> float:
        return mrr([r.first_hit for r in self.results])

    @property
    def ndcg(self) -> float:
        return sum(r.ndcg for r in self.results) / self.n if self.n else 0.0

    def per_question(self, metric: str) -> list[float]:
        """Per-question values of a metric (`recall@5`, `mrr@10`, `ndcg@10`, `strict@1`), for intervals and pairs."""
        if metric in ("mrr", MRR_METRIC):
            return [reciprocal_rank(r.first_hit) for r in self.results]
        if metric in ("ndcg", NDCG_METRIC):
            return [r.ndcg for r in self.results]
        name, _, depth = metric.partition("@")
        k = int(depth)
        ranks = [r.first_strict if name == "strict" else r.first_hit for r in self.results]
        return within(ranks, k)

    def interval(self, metric: str) -> tuple[float, float]:
        return bootstrap_interval(self.per_question(metric))

    @property
    def ctx_tokens(self) -> float:
        return sum(r.ctx_tokens for r in self.results) / self.n if self.n else 0.0

    @property
    def sections(self) -> float:
        return sum(r.sections for r in self.results) / self.n if self.n else 0.0

    def span_means(self) -> tuple[float, float, float] | None:
        spans = [r.span for r in self.results if r.span is not None]
        if not spans:
            return None
        recall, precision, iou = (sum(s[i] for s in spans) / len(spans) for i in range(3))
        return recall, precision, iou

    def budget_recall(self) -> int:
        return sum(1 for r in self.results if r.budget_hit is not None)

    def budget_mrr(self) -> float:
        return mrr([r.budget_hit for r in self.results])

    def to_dict(self, questions: list[Question]) -> dict[str, Any]:
        data: dict[str, Any] = {
            "strategy": self.strategy,
            "mode": self.mode,
            "embedder": self.embedder,
            "chunks": self.chunks,
            "avg_tokens": round(self.avg_tokens, 1),
            "questions": self.n,
            MRR_METRIC: round(self.mrr, 4),
            f"{MRR_METRIC}_ci95": [round(x, 4) for x in self.interval(MRR_METRIC)],
            NDCG_METRIC: round(self.ndcg, 4),
            f"{NDCG_METRIC}_ci95": [round(x, 4) for x in self.interval(NDCG_METRIC)],
            f"ctx_tokens@{self.ctx_k}": round(self.ctx_tokens, 1),
            f"sections@{self.ctx_k}": round(self.sections, 2),
            "seconds": round(self.seconds, 3),
            "build_seconds": self.build_seconds,
        }
        data.update(self._recalls())
        span = self.span_means()
        if span:
            data[f"span@{self.ctx_k}"] = {
                "recall": round(span[0], 4),
                "precision": round(span[1], 4),
                "iou": round(span[2], 4),
            }
        if self.budget:
            data["budget"] = {
                "tokens": self.budget,
                "recall": self.budget_recall(),
                MRR_METRIC: round(self.budget_mrr(), 4),
            }
        if self.context:
            data["context"] = [cell.to_dict() for cell in self.context]
        data["per_question"] = self._per_question(questions)
        return data

    def _recalls(self) -> dict[str, Any]:
        """recall@k (with its interval, in questions) and strict@k for each k."""
        data: dict[str, Any] = {}
        for k in self.ks:
            data[f"recall@{k}"] = self.recall(k)
            data[f"recall@{k}_ci95"] = [round(x * self.n, 2) for x in self.interval(f"recall@{k}")]
            data[f"strict@{k}"] = self.recall(k, strict=True)
        return data

    def _per_question(self, questions: list[Question]) -> list[dict[str, Any]]:
        tags = {q.id: q.tags for q in questions}
        return [
            {
                "id": r.id,
                "tags": tags.get(r.id, []),
                "first_hit": r.first_hit,
                "first_strict": r.first_strict,
                NDCG_METRIC: round(r.ndcg, 4),
                "ctx_tokens": r.ctx_tokens,
                "retrieved": r.retrieved,
            }
            for r in self.results
        ]


def within(ranks: list[int | None], k: int) -> list[float]:
    """1.0 for each rank at most k, else 0.0 (None: not found)."""
    return [1.0 if rank is not None and rank <= k else 0.0 for rank in ranks]


@dataclass
class Evaluation:
    questions: list[Question]
    rows: list[Row]
    ks: list[int]
    ctx_k: int
    source: str
    # collection -> files changed since its build
    stale: dict[str, list[str]] = field(default_factory=dict)
    # collection -> ids of the questions left out: about documents it does not hold (`coverage`)
    left_out: dict[str, list[str]] = field(default_factory=dict)
    # ids of the questions about documents the search's path globs leave out (`--path`)
    outside_paths: list[str] = field(default_factory=list)

    def by_tag(self) -> dict[str, list[Question]]:
        tags: dict[str, list[Question]] = {}
        for q in self.questions:
            for t in q.tags:
                tags.setdefault(t, []).append(q)
        return dict(sorted(tags.items()))

    def compare(
        self, a: str, b: str, metrics: tuple[str, ...] | None = None
    ) -> list[dict[str, Any]]:
        """Paired differences (a - b) with 95% bootstrap intervals. `a`/`b` name rows as
        `strategy/mode`; a bare mode compares that mode across every strategy, a bare
        strategy compares it across every mode."""
        metrics = metrics or tuple(f"recall@{k}" for k in self.ks) + (MRR_METRIC, NDCG_METRIC)
        out = []
        for row_a, row_b in self._pairs(a, b):
            for metric in metrics:
                va, vb = row_a.per_question(metric), row_b.per_question(metric)
                mean, (lo, hi) = paired_difference(va, vb)
                out.append(
                    {
                        "a": row_a.label,
                        "b": row_b.label,
                        "metric": metric,
                        "a_value": sum(va) / len(va),
                        "b_value": sum(vb) / len(vb),
                        "difference": mean,
                        "ci95": (lo, hi),
                        "noise": lo <= 0 <= hi,
                    }
                )
        return out

    def _pairs(self, a: str, b: str) -> list[tuple[Row, Row]]:
        rows = {r.label: r for r in self.rows}
        strategies = list(dict.fromkeys(r.strategy for r in self.rows))
        modes = list(dict.fromkeys(r.mode for r in self.rows))
        return [
            (rows[x], rows[y])
            for x, y in compare_pairs(a, b, strategies, modes)
            if x in rows and y in rows
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": len(self.questions),
            "ks": self.ks,
            "source": self.source,
            "rows": [r.to_dict(self.questions) for r in self.rows],
        }


def evaluate(
    questions_path: str | os.PathLike[str],
    strategies: list[str],
    modes: tuple[str, ...] = MODES,
    ks: tuple[int, ...] = (1, 5),
    *,
    settings: Settings | None = None,
    built_with: tuple[str | None, ...] = (None,),
    corpus: str | os.PathLike[str] | None = None,
    budget: int | tuple[int, ...] | None = None,
    options: SearchOptions | None = None,
    require_fresh: bool = False,
    compare: tuple[tuple[str, str], ...] = (),
    progress: Callable[[Row], None] | None = None,
) -> Evaluation:
    """Score every strategy × mode (× embedder) on a question set against stored
    collections: for each embedder of `built_with`, the collections built with it (None:
    the one each strategy is read with, `collections.choose`); no `strategies`: every
    strategy built (`collections.every_built`). Collections built from
    other versions of the documents than the ones the questions are resolved against are
    listed in `stale` (`require_fresh` fails).
    Questions about documents a collection does not hold are left out of every row
    (`left_out`; `coverage.covered`: an error when a collection holds none of them).
    `budget` (one or several token budgets): hits in rank order up to the first, and
    answer-sized context at each scored against the answer spans (`context_rows`).
    `compare`: the (a, b) pairs the caller will ask `Evaluation.compare` for, checked
    before anything runs."""
    cutoffs, budgets = _checked_options(strategies, modes, ks, budget, compare)
    questions = load_questions(questions_path)
    settings = settings_for(settings)
    store = Store(settings)
    strategies = strategies or every_built(store, built_with)  # none named: every one built
    indexes = open_indexes(store, strategies, built_with)
    root = Path(corpus) if corpus else corpus_root(Path(questions_path), questions, indexes)
    found, docs_iter = load_documents([root])
    docs = {d.doc_id: d for d in docs_iter}
    resolve(questions, docs)
    questions, outside = inside_paths(questions, options, questions_path)
    questions, left_out = covered(questions_path, questions, indexes, root, require_fresh)
    stale = _stale(store, indexes, found, root)
    if stale and require_fresh:
        raise _stale_error(stale, root, indexes)
    plan = _RowPlan(
        cutoffs, budgets, options or SearchOptions(), TokenSpans(docs, settings.tiktoken_dir)
    )
    rows = _scored(plan, indexes, modes, questions, progress)
    evaluation = Evaluation(
        questions, rows, cutoffs, ctx_k=plan.ctx_k, source=str(root), stale=stale, left_out=left_out
    )
    evaluation.outside_paths = outside
    return evaluation


def inside_paths(
    questions: list[Question], options: SearchOptions | None, path: str | os.PathLike[str]
) -> tuple[list[Question], list[str]]:
    """The questions about documents the options' path globs match (all without globs),
    and the ids of the others; a usage error when none is left."""
    globs = options.paths if options is not None else None
    if not globs:
        return questions, []
    match = matcher(globs)
    inside = [q for q in questions if _about_any(q, match)]
    if not inside:
        raise UsageError(
            f"no question of {path} is about a document --path {' '.join(globs)} matches"
        )
    ids = {q.id for q in inside}
    return inside, [q.id for q in questions if q.id not in ids]


def _about_any(question: Question, match: Callable[[str], bool]) -> bool:
    """Whether the question is about a document `match` accepts."""
    return any(match(d) for d in (question.documents or [question.doc_id]))


def _scored(
    plan: _RowPlan,
    indexes: list[Index],
    modes: tuple[str, ...],
    questions: list[Question],
    progress: Callable[[Row], None] | None,
) -> list[Row]:
    """A row per collection × mode, each told to `progress` as it is scored."""
    rows = []
    for index in indexes:
        for mode in modes:
            rows.append(plan.row(index, mode, questions))
            if progress:
                progress(rows[-1])
    return rows


def _checked_options(
    strategies: list[str],
    modes: tuple[str, ...],
    ks: tuple[int, ...],
    budget: int | tuple[int, ...] | None,
    compare: tuple[tuple[str, str], ...],
) -> tuple[list[int], tuple[int, ...]]:
    """The -k values and the budgets sorted, each checked with the modes and the
    --compare pairs before any work."""
    cutoffs = sorted(set(ks))
    if not cutoffs or cutoffs[0] < 1:
        raise UsageError("-k values must be at least 1")
    for mode in modes:
        if mode not in MODES:
            raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    budgets = check_budgets((budget,) if isinstance(budget, int) else tuple(budget or ()))
    for a, b in compare:
        names = list(dict.fromkeys(collection_name(s) for s in strategies))
        compare_pairs(a, b, names, list(modes))
    return cutoffs, budgets


def _stale_error(stale: dict[str, list[str]], root: Path, indexes: list[Index]) -> StaleIndex:
    """The error of `--require-fresh` when a collection is stale (the first named); the
    rebuild it advises reads the folders the collection was built from."""
    name, files = next(iter(stale.items()))
    more = " ..." if len(files) > 3 else ""
    index = next(i for i in indexes if _stale_name(i) == name)
    command = index.store.rebuild_command(index.entry)
    return StaleIndex(
        f"{name} was built from other versions of {len(files)} file(s) than {root} holds now "
        f"({', '.join(files[:3])}{more}); rebuild it: {command}"
    )


@dataclass
class _RowPlan:
    """How each row is scored: the -k values, the budgets, the search options and the
    token spans of the documents."""

    ks: list[int]
    budgets: tuple[int, ...]
    options: SearchOptions
    spans: TokenSpans

    @property
    def ctx_k(self) -> int:
        return 5 if 5 in self.ks else self.ks[-1]

    @property
    def budget(self) -> int | None:
        return self.budgets[0] if self.budgets else None

    @property
    def depth(self) -> int:
        """How many hits each search returns: enough for every metric and budget."""
        return max(
            self.ks[-1],
            self.ctx_k,
            MRR_DEPTH,
            NDCG_DEPTH,
            30 if self.budget else 0,
            CANDIDATES if self.budgets else 0,
        )

    def row(self, index: Index, mode: str, questions: list[Question]) -> Row:
        """One strategy × mode row: every question searched and scored."""
        opts = SearchOptions(**{**self.options.__dict__, "mode": mode, "k": self.depth})
        t0 = time.perf_counter()
        results = []
        cells = [ContextCell(b) for b in self.budgets]
        for q in questions:
            hits = index.search(q.question, opts)
            results.append(score_question(q, hits, self.ctx_k, self.budget, self.spans))
            if cells and q.answer_spans:
                context_cells(index, q, hits, budgets=self.budgets, spans=self.spans, cells=cells)
        entry = index.entry
        return Row(
            strategy=entry.strategy,
            mode=mode,
            embedder=entry.embedder,
            chunks=entry.chunks,
            avg_tokens=entry.avg_tokens,
            ks=self.ks,
            ctx_k=self.ctx_k,
            results=results,
            seconds=time.perf_counter() - t0,
            budget=self.budget,
            build_seconds=entry.build_seconds,
            context=cells,
        )


def _stale(
    store: Store, indexes: list[Index], found: Discovery, root: Path
) -> dict[str, list[str]]:
    """Per collection built from this folder (or from folders of it, under their names),
    the files whose content differs from what it was built from."""
    from ..indexing.manifest import stale_files

    out = {}
    for index in indexes:
        files = stale_files(store, index.entry, found.files, root)
        if files:
            out[_stale_name(index)] = files
    return out


def _stale_name(index: Index) -> str:
    return f"{index.entry.strategy} ({index.entry.embedder})"
