"""`indexer tune`: search settings chosen on a question set, cross-validated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .common import echo_json, handle_errors, note_function
from .groups import Output, Place
from .library import LibraryOption, parameter_default, rule
from .made_up import QUESTION_FORMAT, MadeUpArgs, Reading, generate_option, question_file
from .options import output_options, where_to_read

if TYPE_CHECKING:
    from ..evaluation.advice import Advice
    from ..evaluation.tune import TuneResult


def _tune_default(name: str) -> Any:
    from ..evaluation.tune import tune

    return parameter_default(tune, name)


@click.command(epilog=QUESTION_FORMAT)
@click.argument("questions", required=False, type=click.Path(exists=True, dir_okay=False))
@generate_option
@click.option(
    "--strategy",
    "-s",
    "strategies",
    multiple=True,
    metavar="S",
    cls=LibraryOption,
    help=lambda: (
        f"Collection to tune (repeatable: strategies are compared too) [default: {rule()}]."
    ),
)
@click.option(
    "--folds",
    type=int,
    cls=LibraryOption,
    default_from=lambda: _tune_default("folds"),
    help="Cross-validation folds.",
)
@click.option(
    "--save",
    is_flag=True,
    help="Store each collection's winning setting as its default search, where the cross-validation "
    "shows it better than the current default (else the default is kept, and the output says why).",
)
@click.option(
    "--corpus",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Folder of the documents the questions refer to (default: next to QUESTIONS).",
)
@click.option("--top", type=int, default=10, show_default=True, help="Settings to list.")
@where_to_read
@output_options
@handle_errors
def tune(
    questions: str | None,
    made_up: MadeUpArgs,
    strategies: tuple[str, ...],
    folds: int,
    save: bool,
    corpus: str | None,
    top: int,
    where: Place,
    output: Output,
) -> None:
    """Choose search settings on your own questions: modes × fusions (× strategies),
    cross-validated, with the gain over BM25 and embedding alone; --save keeps the winner
    where the cross-validation shows it better than the collection's current default. No
    question file? --generate makes a set from the documents."""
    from ..evaluation.advice import LEXICAL_BIAS, tune_advice
    from ..evaluation.coverage import left_out_warning
    from ..evaluation.tune import tune as run_tune

    settings = where.reading()
    reading = Reading(
        strategies=strategies, settings=settings, built_with=where.embedder, corpus=corpus
    )
    source = question_file(questions, made_up, reading, note_function(output.quiet))
    result = run_tune(
        source.path,
        list(strategies),
        settings=settings,
        built_with=where.embedder,
        corpus=source.corpus,
        folds=folds,
        save=save,
        progress=note_function(output.quiet),
        margin=LEXICAL_BIAS if source.made_up else 0.0,
    )
    if result.left_out:
        click.echo(f"warning: {left_out_warning(result.left_out, len(result.questions))}", err=True)
    advice = tune_advice(result) if source.made_up else None
    if output.as_json:
        echo_json(
            [{"row": "candidate", **c.to_dict()} for c in result.candidates]
            + [{"row": "summary", **result.to_dict()}]
            + ([{"row": "advice", **advice.to_dict()}] if advice else [])
        )
        return
    echo_candidates(result, top)
    click.echo()
    echo_cross_validated(result)
    click.echo()
    echo_outcome(result, advice, save)


def echo_candidates(result: TuneResult, top: int) -> None:
    """The `top` settings by MRR@10, scored on every question (in-sample)."""
    from ..evaluation import MRR_METRIC, NDCG_METRIC
    from ..tables import table

    n = len(result.questions)
    ranked = sorted(result.candidates, key=lambda c: -c.mean(MRR_METRIC))
    rows = [
        [
            c.label,
            f"{c.mean(MRR_METRIC):.3f}",
            f"{c.mean(NDCG_METRIC):.3f}",
            f"{round(c.mean('recall@1') * n)}/{n}",
            f"{round(c.mean('recall@5') * n)}/{n}",
            f"{sum(c.ctx_tokens) / n:.0f}",
        ]
        for c in ranked[:top]
    ]
    click.echo(
        table(
            ["strategy: setting", "MRR@10", "nDCG@10", "recall@1", "recall@5", "ctxTok@5"],
            rows,
            f"{n} questions; every setting scored on all of them (in-sample):",
        )
    )


def echo_cross_validated(result: TuneResult) -> None:
    """The held-out scores, the tuned setting against each baseline, and how stable the
    choice was over the folds."""
    from ..evaluation import MRR_METRIC, NDCG_METRIC
    from ..evaluation.tune import verdict

    n = len(result.questions)
    cv = {m: sum(v) / n for m, v in result.held_out.items()}
    click.echo(
        f"cross-validated over {result.folds} folds (chosen on {result.folds - 1}/{result.folds} of the questions, "
        f"scored on the rest): MRR@10 {cv[MRR_METRIC]:.3f}, nDCG@10 {cv[NDCG_METRIC]:.3f}, "
        f"recall@1 {round(cv['recall@1'] * n)}/{n}, "
        f"recall@5 {round(cv['recall@5'] * n)}/{n}"
    )
    for name in ("bm25", "embedding", "default"):
        mean, (lo, hi) = result.versus(name)
        click.echo(
            f"  tuned vs {name:<10} MRR@10 {mean:+.3f} [{lo:+.3f}, {hi:+.3f}]  {verdict(lo, hi)}"
        )
    agree = max(result.chosen.count(label) for label in result.chosen)
    click.echo(f"  the same setting won {agree} of {result.folds} folds")


def echo_outcome(result: TuneResult, advice: Advice | None, save: bool) -> None:
    """The best setting on all questions, the made-up questions' advice, and what was
    (or would be) saved as each collection's default search."""
    from ..evaluation import MRR_METRIC

    n = len(result.questions)
    best = result.best
    click.echo(
        f"best on all questions: {best.label} (MRR@10 {best.mean(MRR_METRIC):.3f}, "
        f"ctxTok@5 {sum(best.ctx_tokens) / n:.0f})"
    )
    for line in advice.lines() if advice else ():
        click.echo(line)
    for d in result.decisions:
        if d.saved:
            click.echo(
                f"saved as the default search of {d.collection}: {d.reason()}; query, eval and the API "
                "use it unless told otherwise (indexer list shows it)"
            )
        elif d.save:
            click.echo(
                f"{d.collection}: run again with --save to make it the default: {d.reason()}"
            )
        else:
            click.echo(
                f"{'kept' if save else '--save would keep'} the current default of {d.collection}: {d.reason()}"
            )
