"""The questions `eval` and `tune` score on: a question file, or a set made up from the
documents with `--generate [N]` (`--seed`, `--seeds`); and the question file's format
their help shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .groups import grouped
from .library import LibraryOption, parameter_default

if TYPE_CHECKING:
    from ..settings import Settings

F = TypeVar("F", bound=Callable[..., Any])

# the question file's format, shown by `eval --help` and `tune --help` (\b: kept as written)
QUESTION_FORMAT = """\b
QUESTIONS is a file of JSON lines, one question (a JSON object) a line:
  id        required: a string or a whole number, unique in the file
  question  required: the text that is searched for
  doc_id    required (or targets): the expected document, its path relative
            to the corpus folder with / between folders
  section   heading path of the expected section: "Title › Heading"
  symbol    the expected code definition: "QueueWorker.drain"
  span      [start, end]: character offsets of the expected passage
  answer    the answer, word for word as in the document (within the
            section, symbol or span): one per question; a strict hit holds
            all of it
  tags      a string or a list of strings (--by-tag)
  targets   whole documents instead of doc_id, several with grades:
            [{"doc_id": "a.md", "grade": 2}, {"doc_id": "b.md", "grade": 1}]
A hit overlaps the target passage (section, symbol, span, else the answer);
a doc_id alone targets its whole document. Every field but id, question and
doc_id/targets may be left out; a wrong type is named with its line."""


def made_up_default(name: str) -> Any:
    """The library's default for `n`, `seed` or `seeds` of a made-up set."""
    from ..questions import on_demand

    return {"n": on_demand.QUESTIONS}.get(name) or parameter_default(
        on_demand.generated_questions, name
    )


DEFAULT_N = -1  # `--generate` given without N: the library's default number (on_demand.QUESTIONS)


def _generate_option_list(func: F) -> F:
    func = click.option(
        "--seeds",
        type=int,
        default=None,
        cls=LibraryOption,
        help=lambda: (
            "With --generate: how many made-up sets (seeds --seed, --seed + 1, ...) "
            "are pooled; more make the advice steadier "
            f"[default: {made_up_default('seeds')}]."
        ),
    )(func)
    func = click.option(
        "--seed",
        type=int,
        default=None,
        cls=LibraryOption,
        help=lambda: (
            "With --generate: the seed of the first made-up set (the same seed makes the "
            f"same set; each seed's set is kept apart) [default: {made_up_default('seed')}]."
        ),
    )(func)
    return click.option(
        "--generate",
        "generate",
        type=int,
        default=None,
        is_flag=False,
        flag_value=DEFAULT_N,
        metavar="[N]",
        cls=LibraryOption,
        help=lambda: (
            "No question file? Make N questions per made-up set (fewer if the documents hold fewer) "
            "from the documents "
            f"[default N: {made_up_default('n')}] (offline, see `indexer questions`), "
            "kept in the index folder and reused while the documents are unchanged; "
            "the output says which rows the made-up questions can tell apart."
        ),
    )(func)


def generate_option(func: F) -> F:
    """--generate [N], --seed, --seeds: one `MadeUpArgs` (`made_up`)."""
    return grouped("made_up", MadeUpArgs, _generate_option_list)(func)


@dataclass(frozen=True, kw_only=True)
class MadeUpArgs:
    """--generate [N], --seed and --seeds as typed."""

    generate: int | None = None
    seed: int | None = None
    seeds: int | None = None

    def numbers(self) -> tuple[int, int, int]:
        """How many questions a set, the first seed and how many seeds: those given, else
        the library's."""
        return (
            made_up_default("n") if self.generate in (None, DEFAULT_N) else self.generate,
            made_up_default("seed") if self.seed is None else self.seed,
            made_up_default("seeds") if self.seeds is None else self.seeds,
        )


@dataclass(frozen=True, kw_only=True)
class QuestionSource:
    """The question file a command scores on, the corpus folder, and whether the
    questions are made up."""

    path: str
    corpus: str | None
    made_up: bool


@dataclass(frozen=True, kw_only=True)
class Reading:
    """What made-up questions are made for: the strategies, the index's settings, the
    embedder the collections were built with, the corpus folder given."""

    strategies: tuple[str, ...]
    settings: Settings
    built_with: str | None
    corpus: str | None


def question_file(
    questions: str | None, made_up: MadeUpArgs, reading: Reading, note: Callable[[str], None]
) -> QuestionSource:
    """The question file to score on: the file given, or made with --generate."""
    check_source(questions, made_up)
    if questions:
        return QuestionSource(path=questions, corpus=reading.corpus, made_up=False)
    return made_up_file(made_up, reading, note)


def check_source(questions: str | None, made_up: MadeUpArgs) -> None:
    """A usage error unless exactly one source of questions is given, with its options."""
    if questions and made_up.generate is not None:
        raise click.UsageError("give a question file or --generate [N], not both")
    if not questions and made_up.generate is None:
        raise click.UsageError(
            "give a question file, or --generate [N] to make questions from the documents"
        )
    if questions:
        if made_up.seed is not None or made_up.seeds is not None:
            raise click.UsageError(
                "--seed and --seeds choose made-up questions: they go with --generate, "
                "not a question file"
            )
        return
    check_generate(made_up.generate, made_up.seeds)


def check_generate(generate: int | None, seeds: int | None) -> None:
    """--generate's N and --seeds are at least 1 (N left out: the library's default)."""
    if generate is not None and generate != DEFAULT_N and generate < 1:
        raise click.BadParameter(f"must be at least 1, not {generate}", param_hint="--generate")
    if seeds is not None and seeds < 1:
        raise click.BadParameter(f"must be at least 1, not {seeds}", param_hint="--seeds")


def made_up_file(
    made_up: MadeUpArgs, reading: Reading, note: Callable[[str], None]
) -> QuestionSource:
    """Make (or reuse) the questions --generate asks for, and say what they are."""
    from ..questions.on_demand import CAVEAT, generated_questions

    n, first, pooled = made_up.numbers()
    made = generated_questions(
        n,
        list(reading.strategies),
        settings=reading.settings,
        built_with=reading.built_with,
        corpus=reading.corpus,
        seed=first,
        seeds=pooled,
    )
    note(made.describe())
    note(f"note: {CAVEAT}")
    notes = made.made.notes if made.made is not None else []
    if made.made is not None and made.made.shortfall and made_up.generate != DEFAULT_N:
        click.echo(f"warning: {made.made.shortfall}; scoring on those", err=True)
    for line in notes:
        note(f"note: {line}")
    corpus = str(made.roots[0]) if len(made.roots) == 1 else reading.corpus
    return QuestionSource(path=str(made.path), corpus=corpus, made_up=True)
