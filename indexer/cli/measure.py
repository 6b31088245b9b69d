"""Commands that measure on a question set: `eval` and `tune` (`tuning`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..tables import printable
from .common import echo_json, handle_errors, note_function, settings_from, writable
from .library import LibraryChoice, LibraryOption, modes, parameter_default
from .made_up import QUESTION_FORMAT, generate_option, question_file
from .options import db_options, json_option, ollama_option, quiet_option
from .search_options import BUDGETS, make_options, search_options
from .tuning import tune

if TYPE_CHECKING:
    from ..evaluation import Evaluation
    from ..evaluation.advice import Advice
    from ..evaluation.report import Quality
    from ..evaluation.standing import KeptRanking
    from ..settings import Settings


def _evaluate_default(name: str) -> Any:
    from ..evaluation import evaluate

    return parameter_default(evaluate, name)


def register(cli: click.Group) -> None:
    cli.add_command(eval_)
    cli.add_command(tune)


@click.command(name="eval", epilog=QUESTION_FORMAT)
@click.argument("questions", required=False, type=click.Path(exists=True, dir_okay=False))
@generate_option
@click.option(
    "--strategy",
    "-s",
    "strategies",
    multiple=True,
    metavar="S",
    help="Collection to evaluate (repeatable) [default: every strategy built].",
)
@click.option(
    "--mode",
    "-m",
    "modes",
    multiple=True,
    type=LibraryChoice(modes),
    help="Search mode (repeatable; default all three).",
)
@click.option(
    "-k",
    "ks",
    multiple=True,
    type=int,
    cls=LibraryOption,
    help=lambda: (
        "Cut-offs for recall (repeatable; default "
        f"{' and '.join(map(str, _evaluate_default('ks')))})."
    ),
)
@click.option(
    "--embedder",
    "embedders",
    multiple=True,
    metavar="NAME",
    help="Evaluate the collections built with this embedder (repeatable: one row per embedder).",
)
@db_options
@ollama_option
@click.option(
    "--corpus",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Folder of the documents the questions refer to (default: next to QUESTIONS).",
)
@search_options
@click.option(
    "--budget",
    "budgets",
    multiple=True,
    type=BUDGETS,
    metavar="TOKENS",
    help="Also score answer-sized context (query --budget) and whole chunks cut at this many tokens "
    "against the questions' answers (repeatable, or a list: 100,200,400,800); hits in rank order "
    "up to the first budget give recall and MRR at equal cost.",
)
@click.option("--by-tag", is_flag=True, help="Recall and MRR per question tag.")
@click.option(
    "--boundaries",
    "show_boundaries",
    is_flag=True,
    help="Also where each collection's stored chunks cut: inside words, sentences, tables, code, "
    "list items, functions, and what they keep whole.",
)
@click.option(
    "--compare",
    nargs=2,
    multiple=True,
    metavar="A B",
    help="Paired difference of two rows (strategy/mode), two modes, or two strategies.",
)
@click.option(
    "--require-fresh",
    is_flag=True,
    help="Fail when documents changed since a collection was built, or a collection lacks documents "
    "some questions are about (default: warn, and leave those questions out).",
)
@json_option
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Write the table as CSV.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Recall against context tokens: .png (needs matplotlib), .html or .svg.",
)
@quiet_option
@handle_errors
def eval_(
    questions: str | None,
    generate: int | None,
    seed: int | None,
    seeds: int | None,
    strategies: tuple[str, ...],
    modes: tuple[str, ...],
    ks: tuple[int, ...],
    embedders: tuple[str, ...],
    db: str | None,
    chroma_url: str | None,
    ollama_host: str | None,
    corpus: str | None,
    fusion: str | None,
    alpha: float | None,
    rrf_weights: str | None,
    rrf_k: int | None,
    candidates: int | None,
    children_k: int | None,
    budgets: tuple[tuple[int, ...], ...],
    by_tag: bool,
    show_boundaries: bool,
    compare: tuple[tuple[str, str], ...],
    require_fresh: bool,
    as_json: bool,
    csv_path: str | None,
    plot_path: str | None,
    quiet: bool,
) -> None:
    """Score stored strategies on a question set: recall@k, MRR@10, strict hits, context
    cost, with 95% intervals — the table to choose a chunking strategy by. No question
    file? --generate makes a set from the documents, and says which rows it cannot tell apart."""
    from ..evaluation import evaluate
    from ..evaluation.advice import advice_of
    from ..evaluation.standing import keep_ranking

    options = make_options(5, None, fusion, alpha, rrf_weights, rrf_k, candidates, children_k)
    options.check()  # before any work
    check_outputs(csv_path, plot_path)
    note = note_function(quiet)
    settings = settings_from(db, chroma_url, None, ollama_host)
    built_with = tuple(embedders) or (None,)
    strategies = named_or_every(strategies, settings, built_with, note)
    questions, corpus, made_up = question_file(
        questions, generate, seed, seeds, strategies, settings, built_with[0], corpus, note
    )
    result = evaluate(
        questions,
        list(strategies),
        tuple(modes) or _evaluate_default("modes"),
        tuple(ks) or _evaluate_default("ks"),
        settings=settings,
        built_with=built_with,
        corpus=corpus,
        budget=tuple(b for group in budgets for b in group),
        require_fresh=require_fresh,
        compare=tuple(compare),
        options=options,
        progress=lambda row: note(
            f"evaluated {row.strategy}/{row.mode} ({row.embedder}) in {row.seconds:.1f}s"
        ),
    )
    warn_coverage(result)
    note_kept(keep_ranking(result, questions, settings), note)
    quality = boundaries_of(result, settings, built_with) if show_boundaries else None
    write_files(result, quality, csv_path, plot_path)
    advice = advice_of(result) if made_up else None
    if as_json:
        echo_json(json_rows(result, compare, quality, advice))
        return
    echo_evaluation(result, questions, advice, quality, by_tag, compare)
    note_written(note, csv_path, plot_path)


def named_or_every(
    strategies: tuple[str, ...],
    settings: Settings,
    built_with: tuple[str | None, ...],
    note: Callable[[str], None],
) -> tuple[str, ...]:
    """The --strategy values, else every strategy built (with each --embedder), said when
    several."""
    from ..retrieval.collections import every_built
    from ..store import Store

    if strategies:
        return strategies
    built = every_built(Store(settings), built_with)
    if len(built) > 1:
        note(f"evaluating every strategy built: {', '.join(built)} (name some with -s S)")
    return tuple(built)


def note_kept(kept: KeptRanking, note: Callable[[str], None]) -> None:
    """Which collection the evaluation ranked best, now read by calls naming none."""
    best = kept.best
    if best is not None:
        note(
            f"{best.strategy} ({best.embedder}) ranked best (MRR@10 {best.score:.3f}, "
            f"{best.mode}); "
            "commands naming no strategy read it now"
        )
    for problem in kept.problems:
        note(f"not recorded as the last evaluation: {problem}")


def note_written(note: Callable[[str], None], csv_path: str | None, plot_path: str | None) -> None:
    """Say which output files were written."""
    for path, what in ((csv_path, "CSV"), (plot_path, "plot")):
        if path:
            note(f"wrote {what} to {path}")


def json_rows(
    result: Evaluation,
    compare: tuple[tuple[str, str], ...],
    quality: Quality | None,
    advice: Advice | None,
) -> list[dict[str, Any]]:
    """--json: the report's rows, then the made-up questions' advice (when made up)."""
    from ..evaluation import report

    advised = [{"row": "advice", **advice.to_dict()}] if advice else []
    return report.json_rows(result, compare, quality) + advised


def check_outputs(csv_path: str | None, plot_path: str | None) -> None:
    """Fail before the evaluation if its output files cannot be written."""
    from ..evaluation import report

    writable(csv_path, "--csv")
    writable(plot_path, "--plot")
    if plot_path:
        report.check_plot(plot_path)  # matplotlib is missing: say so now, not after the evaluation


def boundaries_of(
    result: Evaluation, settings: Settings, built_with: tuple[str | None, ...]
) -> Quality:
    """Where the stored chunks of every evaluated strategy cut (--boundaries)."""
    from ..evaluation.boundaries import stored_boundaries

    return stored_boundaries(
        sorted({r.strategy for r in result.rows}),
        result.source,
        settings=settings,
        built_with=built_with,
    )


def write_files(
    result: Evaluation, quality: Quality | None, csv_path: str | None, plot_path: str | None
) -> None:
    """The table as CSV (--csv) and the recall chart (--plot)."""
    from ..evaluation import report

    if csv_path:
        Path(csv_path).write_text(report.to_csv(result, quality), encoding="utf-8")
    if plot_path:
        report.plot(result, plot_path)


def warn_coverage(result: Evaluation) -> None:
    """Warn of questions left out and of collections built from other file versions."""
    from ..evaluation.coverage import left_out_warning

    if result.left_out:
        click.echo(f"warning: {left_out_warning(result.left_out, len(result.questions))}", err=True)
    for name, files in result.stale.items():
        click.echo(
            f"warning: {name} was built from other versions of {len(files)} file(s) "
            f"({', '.join(map(printable, files[:3]))}{' ...' if len(files) > 3 else ''}); its numbers may not hold — rebuild it, "
            "or pass --require-fresh to make this an error",
            err=True,
        )


def echo_evaluation(
    result: Evaluation,
    questions: str,
    advice: Advice | None,
    quality: Quality | None,
    by_tag: bool,
    compare: tuple[tuple[str, str], ...],
) -> None:
    """The evaluation for people: the table and its intervals, then each part asked for,
    a blank line before each."""
    from ..evaluation import report
    from ..evaluation.coverage import dropped

    left = (
        f" ({len(dropped(result.left_out))} left out, see the warning)" if result.left_out else ""
    )
    click.echo(
        f"{len(result.questions)} questions from {questions}{left}; documents in {result.source}"
    )
    click.echo(report.table(result))
    parts = [report.intervals(result)]
    if advice:
        parts.append(advice.text())
    extra = report.extras(result)
    if extra:
        parts.append(extra)
    if quality:
        parts.append(report.boundaries(result, quality))
    if by_tag:
        parts.append(report.by_tag(result))
    parts += [report.comparison(result, a, b) for a, b in compare]
    for part in parts:
        click.echo()
        click.echo(part)
