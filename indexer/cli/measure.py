"""Commands that measure on a question set: `eval` and `tune` (`tuning`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..tables import printable
from .common import echo_json, handle_errors, note_function, writable
from .groups import Output, Place, grouped
from .library import LibraryChoice, LibraryOption, modes, parameter_default
from .made_up import QUESTION_FORMAT, MadeUpArgs, Reading, generate_option, question_file
from .options import db_options, ollama_option, output_options
from .search_options import BUDGETS, SearchArgs, search_options
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


ROWS_OPTIONS = (
    click.option(
        "--strategy",
        "-s",
        "strategies",
        multiple=True,
        metavar="S",
        help="Collection to evaluate (repeatable) [default: every strategy built].",
    ),
    click.option(
        "--mode",
        "-m",
        "modes",
        multiple=True,
        type=LibraryChoice(modes),
        help="Search mode (repeatable; default all three).",
    ),
    click.option(
        "-k",
        "ks",
        multiple=True,
        type=int,
        cls=LibraryOption,
        help=lambda: (
            "Cut-offs for recall (repeatable; default "
            f"{' and '.join(map(str, _evaluate_default('ks')))})."
        ),
    ),
    click.option(
        "--embedder",
        "embedders",
        multiple=True,
        metavar="NAME",
        help="Evaluate the collections built with this embedder (repeatable: one row per embedder).",
    ),
)


@dataclass(frozen=True, kw_only=True)
class RowsArgs:
    """Which rows an evaluation scores: strategies, modes, cut-offs, embedders."""

    strategies: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    ks: tuple[int, ...] = ()
    embedders: tuple[str, ...] = ()


REPORT_OPTIONS = (
    click.option("--by-tag", is_flag=True, help="Recall and MRR per question tag."),
    click.option(
        "--boundaries",
        "show_boundaries",
        is_flag=True,
        help="Also where each collection's stored chunks cut: inside words, sentences, tables, code, "
        "list items, functions, and what they keep whole.",
    ),
    click.option(
        "--compare",
        nargs=2,
        multiple=True,
        metavar="A B",
        help="Paired difference of two rows (strategy/mode), two modes, or two strategies.",
    ),
    click.option(
        "--require-fresh",
        is_flag=True,
        help="Fail when documents changed since a collection was built, or a collection lacks documents "
        "some questions are about (default: warn, and leave those questions out).",
    ),
)


@dataclass(frozen=True, kw_only=True)
class ReportArgs:
    """What an evaluation reports beside its table."""

    by_tag: bool = False
    show_boundaries: bool = False
    compare: tuple[tuple[str, str], ...] = ()
    require_fresh: bool = False


FILES_OPTIONS = (
    click.option(
        "--csv",
        "csv_path",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="Write the table as CSV.",
    ),
    click.option(
        "--plot",
        "plot_path",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="Recall against context tokens: .png (needs matplotlib), .html or .svg.",
    ),
)


@dataclass(frozen=True, kw_only=True)
class FilesArgs:
    """The files an evaluation writes."""

    csv_path: str | None = None
    plot_path: str | None = None


@click.command(name="eval", epilog=QUESTION_FORMAT)
@click.argument("questions", required=False, type=click.Path(exists=True, dir_okay=False))
@generate_option
@grouped("rows", RowsArgs, *ROWS_OPTIONS)
@grouped("where", Place, db_options, ollama_option)
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
@grouped("report", ReportArgs, *REPORT_OPTIONS)
@grouped("files", FilesArgs, *FILES_OPTIONS)
@output_options
@handle_errors
def eval_(
    questions: str | None,
    made_up: MadeUpArgs,
    rows: RowsArgs,
    where: Place,
    corpus: str | None,
    search: SearchArgs,
    budgets: tuple[tuple[int, ...], ...],
    report: ReportArgs,
    files: FilesArgs,
    output: Output,
) -> None:
    """Score stored strategies on a question set: recall@k, MRR@10, strict hits, context
    cost, with 95% intervals — the table to choose a chunking strategy by. No question
    file? --generate makes a set from the documents, and says which rows it cannot tell apart."""
    from ..evaluation import evaluate
    from ..evaluation.advice import advice_of
    from ..evaluation.standing import keep_ranking

    options = search.options()
    options.check()  # before any work
    check_outputs(files.csv_path, files.plot_path)
    note = note_function(output.quiet)
    settings = where.reading()
    built_with = tuple(rows.embedders) or (None,)
    strategies = named_or_every(rows.strategies, settings, built_with, note)
    reading = Reading(
        strategies=strategies, settings=settings, built_with=built_with[0], corpus=corpus
    )
    source = question_file(questions, made_up, reading, note)
    result = evaluate(
        source.path,
        list(strategies),
        tuple(rows.modes) or _evaluate_default("modes"),
        tuple(rows.ks) or _evaluate_default("ks"),
        settings=settings,
        built_with=built_with,
        corpus=source.corpus,
        budget=tuple(b for group in budgets for b in group),
        require_fresh=report.require_fresh,
        compare=tuple(report.compare),
        options=options,
        progress=lambda row: note(
            f"evaluated {row.strategy}/{row.mode} ({row.embedder}) in {row.seconds:.1f}s"
        ),
    )
    warn_coverage(result)
    note_kept(keep_ranking(result, source.path, settings), note)
    quality = boundaries_of(result, settings, built_with) if report.show_boundaries else None
    write_files(result, quality, files.csv_path, files.plot_path)
    advice = advice_of(result) if source.made_up else None
    if output.as_json:
        echo_json(json_rows(result, report.compare, quality, advice))
        return
    echo_evaluation(
        result, source.path, advice, quality=quality, by_tag=report.by_tag, compare=report.compare
    )
    note_written(note, files.csv_path, files.plot_path)


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

    if result.outside_paths:
        n = len(result.outside_paths)
        click.echo(
            f"note: {n} question(s) about documents --path leaves out are not scored; "
            f"every score is over the other {len(result.questions)}",
            err=True,
        )
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
