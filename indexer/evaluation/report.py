"""Evaluation reports: the seed's table for people, CSV for spreadsheets, and a plot of
recall against context cost; with `--boundaries`, where each collection's cuts fall."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..tables import table as render
from .chunk_boundaries import KINDS, LEGEND, WHOLE, BoundaryStats, columns
from .coverage import dropped
from .metrics import mrr
from .plots import Axes, Point, html_page, matplotlib_figure, svg
from .run import Evaluation, Row
from .sets import MRR_METRIC, NDCG_METRIC

MRR_LABEL = MRR_METRIC.upper()  # MRR@10
NDCG_LABEL = "nDCG" + NDCG_METRIC[4:]  # nDCG@10
RATE_METRICS = (MRR_METRIC, NDCG_METRIC)  # means of per-question scores, not counts of questions


def _label(row: Row, several_embedders: bool) -> str:
    return f"{row.strategy} ({row.embedder})" if several_embedders else row.strategy


def table(ev: Evaluation) -> str:
    """The main table: one row per strategy × mode (× embedder)."""
    several = len({r.embedder for r in ev.rows}) > 1
    kc = ev.ctx_k
    headers = [
        "strategy",
        "mode",
        "chunks",
        "avgTok",
        *(f"recall@{k}" for k in ev.ks),
        MRR_LABEL,
        NDCG_LABEL,
        *(f"strict@{k}" for k in ev.ks),
        f"ctxTok@{kc}",
        f"sections@{kc}",
        "time",
        *(["build"] if several else []),
    ]
    answers = any(q.answer for q in ev.questions)  # no answer, no strict hit: a dash, not 0/n
    return render(headers, [_table_row(r, ev, several, answers) for r in ev.rows])


def _table_row(r: Row, ev: Evaluation, several: bool, answers: bool) -> list[object]:
    n = len(ev.questions)
    strict = [f"{r.recall(k, strict=True)}/{n}" if answers else "-" for k in ev.ks]
    return [
        _label(r, several),
        r.mode,
        r.chunks,
        f"{r.avg_tokens:.0f}",
        *(f"{r.recall(k)}/{n}" for k in ev.ks),
        f"{r.mrr:.3f}",
        f"{r.ndcg:.3f}",
        *strict,
        f"{r.ctx_tokens:.0f}",
        f"{r.sections:.1f}",
        f"{r.seconds:.1f}s",
        *([f"{r.build_seconds:.1f}s"] if several else []),
    ]


def intervals(ev: Evaluation) -> str:
    """95% bootstrap intervals: how much of a difference between rows is noise."""
    several = len({r.embedder for r in ev.rows}) > 1
    n = len(ev.questions)
    rows = []
    for r in ev.rows:
        cells = []
        for k in ev.ks:
            lo, hi = r.interval(f"recall@{k}")
            cells.append(f"{lo * n:.0f}-{hi * n:.0f}")
        for metric in RATE_METRICS:
            lo, hi = r.interval(metric)
            cells.append(f"{lo:.3f}-{hi:.3f}")
        rows.append([_label(r, several), r.mode, *cells])
    headers = [
        "strategy",
        "mode",
        *(f"recall@{k} 95%" for k in ev.ks),
        f"{MRR_LABEL} 95%",
        f"{NDCG_LABEL} 95%",
    ]
    return render(
        headers,
        rows,
        f"95% bootstrap intervals over {n} questions (one question = {100 / n:.1f} points)",
    )


def extras(ev: Evaluation) -> str:
    """Span-level metrics and equal-budget results, when they apply."""
    several = len({r.embedder for r in ev.rows}) > 1
    parts = [_span_table(ev, several), _budget_table(ev, several)]
    if any(r.context for r in ev.rows):
        parts.append(context_table(ev, several))
    return "\n\n".join(p for p in parts if p)


def _span_table(ev: Evaluation, several: bool) -> str:
    """Token-level overlap with the answer span ("" when no row measured it)."""
    spans = [(r, r.span_means()) for r in ev.rows]
    rows = [
        [_label(r, several), r.mode, f"{s[0]:.3f}", f"{s[1]:.3f}", f"{s[2]:.3f}"]
        for r, s in spans
        if s
    ]
    if not rows:
        return ""
    return render(
        ["strategy", "mode", "recall", "precision", "IoU"],
        rows,
        f"token-level overlap of the top {ev.ctx_k} with the answer span (mean over questions)",
    )


def _budget_table(ev: Evaluation, several: bool) -> str:
    """Hits in rank order up to the first budget ("" without one)."""
    budget = next((r.budget for r in ev.rows if r.budget), None)
    if budget is None:
        return ""
    n = len(ev.questions)
    rows = [
        [
            _label(r, several),
            r.mode,
            f"{r.budget_recall()}/{n}",
            f"{r.budget_mrr():.3f}",
            f"{sum(q.budget_tokens for q in r.results) / n:.0f}",
        ]
        for r in ev.rows
    ]
    return render(
        ["strategy", "mode", "recall", MRR_LABEL, "tokens"],
        rows,
        f"equal budget: hits taken in rank order up to {budget} context tokens "
        "(the first hit always counts, whole)",
    )


def context_table(ev: Evaluation, several: bool) -> str:
    """`--budget`: answer-sized context against whole chunks cut at the same budget."""
    rows = []
    for r in ev.rows:
        for cell in r.context:
            p, w = cell.summary("packed"), cell.summary("whole")
            n = p["questions"]
            if not n:
                continue
            rows.append(
                [
                    _label(r, several),
                    r.mode,
                    cell.budget,
                    f"{p['strict']}/{n}",
                    f"{p['recall']:.3f}",
                    f"{p['iou']:.3f}",
                    f"{p['tokens']:.0f}",
                    f"{w['strict']}/{n}",
                    f"{w['recall']:.3f}",
                    f"{w['iou']:.3f}",
                    f"{w['tokens']:.0f}",
                ]
            )
    if not rows:
        return (
            "answer-sized context (--budget): no question names an answer excerpt to score it against "
            '(give questions an "answer" or "answers")'
        )
    return render(
        [
            "strategy",
            "mode",
            "budget",
            "packed strict",
            "recall",
            "IoU",
            "tokens",
            "whole strict",
            "recall",
            "IoU",
            "tokens",
        ],
        rows,
        "answer-sized context (indexer query --budget) against whole chunks cut at the same budget: "
        "strict = the whole answer inside; recall, IoU over answer tokens",
    )


def by_tag(ev: Evaluation) -> str:
    """Recall@k (the largest k) and MRR@10 per question tag: one row per strategy × mode."""
    k = ev.ks[-1]
    tags = ev.by_tag()
    if not tags:
        return "no tags in this question set"
    several = len({r.embedder for r in ev.rows}) > 1
    index = {q.id: i for i, q in enumerate(ev.questions)}
    rows: list[list[object]] = [["", "", *(f"n={len(qs)}" for qs in tags.values())]]
    for r in ev.rows:
        cells = [_tag_cell(r, [index[q.id] for q in qs], k) for qs in tags.values()]
        rows.append([_label(r, several), r.mode, *cells])
    return render(["strategy", "mode", *tags], rows, f"recall@{k} and {MRR_LABEL} by question tag")


def _tag_cell(r: Row, positions: list[int], k: int) -> str:
    """A row's hits within k and MRR over the questions at `positions`: `3/4 0.75`."""
    ranks = [r.results[i].first_hit for i in positions]
    hits = sum(1 for rank in ranks if rank is not None and rank <= k)
    return f"{hits}/{len(positions)} {mrr(ranks):.2f}"


def comparison(ev: Evaluation, a: str, b: str) -> str:
    rows = []
    n = len(ev.questions)
    for c in ev.compare(a, b):
        scale = n if c["metric"] not in RATE_METRICS else 1
        fmt = (lambda v: f"{v * scale:.0f}") if scale != 1 else (lambda v: f"{v:.3f}")
        dfmt = (lambda v: f"{v * scale:+.1f}") if scale != 1 else (lambda v: f"{v:+.3f}")
        lo, hi = c["ci95"]
        verdict = (
            "noise (interval spans 0)"
            if c["noise"]
            else ("A better" if c["difference"] > 0 else "B better")
        )
        rows.append(
            [
                c["a"],
                c["b"],
                c["metric"],
                fmt(c["a_value"]),
                fmt(c["b_value"]),
                dfmt(c["difference"]),
                f"[{dfmt(lo)}, {dfmt(hi)}]",
                verdict,
            ]
        )
    return render(
        ["A", "B", "metric", "A", "B", "A-B", "95% interval", "verdict"],
        rows,
        f"paired difference over the same {n} questions, 95% bootstrap interval",
    )


# (strategy, embedder) -> boundary quality of its chunks
Quality = dict[tuple[str, str], BoundaryStats]


def boundaries(ev: Evaluation, quality: Quality) -> str:
    """Where each evaluated collection's stored chunks cut (one row per collection)."""
    several = len({r.embedder for r in ev.rows}) > 1
    keys = list(dict.fromkeys((r.strategy, r.embedder) for r in ev.rows))
    headers, cells = columns([quality[k] for k in keys])
    rows = [
        [f"{s} ({e})" if several else s, quality[(s, e)].chunks, *c]
        for (s, e), c in zip(keys, cells)
    ]
    return (
        render(["strategy", "chunks", *headers], rows, "boundary quality of the stored chunks")
        + "\n"
        + LEGEND
    )


def json_rows(
    ev: Evaluation, compare: Iterable[tuple[str, str]] = (), quality: Quality | None = None
) -> list[dict[str, Any]]:
    """JSON lines for `eval --json`: one object per row (with per-question results), then
    one per paired comparison, then (--boundaries) one per collection's boundary quality."""
    left_out = dropped(ev.left_out)  # questions not scored (`coverage`)
    rows = [
        {"row": "result", "source": ev.source, "left_out": left_out, **r.to_dict(ev.questions)}
        for r in ev.rows
    ]
    for a, b in compare:
        rows += [{"row": "compare", **c} for c in ev.compare(a, b)]
    for (_strategy, embedder), stats in (quality or {}).items():
        rows.append({"row": "boundaries", "embedder": embedder, **stats.to_dict()})
    return rows


def to_csv(ev: Evaluation, quality: Quality | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    k_cols = [f"recall@{k}" for k in ev.ks] + [f"strict@{k}" for k in ev.ks]
    b_cols = _boundary_columns() if quality else []
    writer.writerow(
        [
            "strategy",
            "mode",
            "embedder",
            "questions",
            "chunks",
            "avg_tokens",
            *k_cols,
            MRR_METRIC,
            NDCG_METRIC,
            f"ctx_tokens@{ev.ctx_k}",
            f"sections@{ev.ctx_k}",
            "seconds",
            *b_cols,
        ]
    )
    for r in ev.rows:
        values = [r.recall(k) for k in ev.ks] + [r.recall(k, strict=True) for k in ev.ks]
        stats = quality.get((r.strategy, r.embedder)) if quality else None
        extra = _boundary_cells(stats) if stats else [""] * len(b_cols)
        writer.writerow(
            [
                r.strategy,
                r.mode,
                r.embedder,
                r.n,
                r.chunks,
                round(r.avg_tokens, 1),
                *values,
                round(r.mrr, 4),
                round(r.ndcg, 4),
                round(r.ctx_tokens, 1),
                round(r.sections, 2),
                round(r.seconds, 3),
                *extra,
            ]
        )
    return out.getvalue()


def _boundary_columns() -> list[str]:
    return [f"ends_in_{k}" for k in KINDS] + [f"whole_{k}" for k in WHOLE]


def _boundary_cells(stats: BoundaryStats) -> list[object]:
    """A collection's boundary quality in CSV cells: the share of chunks ending in each
    kind of place, then the whole units it kept of those present."""
    shares: list[object] = [round(stats.end_share(k), 4) for k in KINDS]
    return shares + [f"{stats.kept[k]}/{stats.present[k]}" for k in WHOLE]


PLAIN_PLOTS = (".html", ".htm", ".svg")  # written by hand: need nothing
MATPLOTLIB_PLOTS = (".png", ".pdf", ".jpg", ".jpeg")


def check_plot(path: str | Path) -> None:
    """Raise a usage error, before any work, when `--plot` cannot write `path`: a suffix
    no plot is written as, or a matplotlib one without matplotlib installed."""
    suffix = Path(path).suffix.lower()
    if suffix in PLAIN_PLOTS:
        return
    if suffix not in MATPLOTLIB_PLOTS:
        given = suffix or "no suffix"
        raise UsageError(
            f"--plot writes {', '.join(PLAIN_PLOTS + MATPLOTLIB_PLOTS)} files, not {given} "
            f"({Path(path).name})"
        )
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(
            f'a {suffix} plot needs matplotlib: pip install "indexer-rag[plot]" (or write --plot '
            "report.html or report.svg, which need nothing)"
        ) from None


def plot(ev: Evaluation, path: str | Path) -> None:
    """recall@5 (or the largest k) against ctxTok: one labelled point per row.
    `.png` needs matplotlib (pip install "indexer-rag[plot]"); `.html` / `.svg` need nothing."""
    check_plot(path)
    path = Path(path)
    k = 5 if 5 in ev.ks else ev.ks[-1]
    n = len(ev.questions)
    several = len({r.embedder for r in ev.rows}) > 1
    points = [
        Point(
            r.ctx_tokens, r.recall(k), f"{_label(r, several)} {r.mode}", _label(r, several), r.mode
        )
        for r in ev.rows
    ]
    axes = Axes(
        f"recall@{k} vs context tokens@{ev.ctx_k} ({n} questions)",
        f"ctxTok@{ev.ctx_k}",
        f"ctxTok@{ev.ctx_k} (tokens the top {ev.ctx_k} put in a prompt)",
        f"recall@{k} (of {n})",
        n,
    )
    suffix = path.suffix.lower()
    if suffix == ".svg":
        path.write_text(svg(points, axes), encoding="utf-8")
    elif suffix in PLAIN_PLOTS:
        path.write_text(html_page(axes.title, svg(points, axes)), encoding="utf-8")
    else:
        matplotlib_figure(points, axes, path)
