"""`indexer questions`: a question set made from your own documents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..tables import printable
from .common import echo_json, handle_errors, note_function, settings_from, writable
from .options import CorpusArgs, corpus_group, json_option, quiet_option

if TYPE_CHECKING:
    from ..questions.generate import QuestionSet


def register(cli: click.Group) -> None:
    cli.add_command(questions)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Question file to write (JSON lines, the format `indexer eval` reads).",
)
@click.option(
    "-n", "count", type=int, default=60, show_default=True, help="How many questions to make."
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="The same seed makes the same questions."
)
@click.option(
    "--llm",
    default="extractive",
    show_default=True,
    metavar="GEN",
    help="extractive (offline: simulated searcher queries) or ollama:<model> (an LLM writes them).",
)
@corpus_group
@click.option(
    "--db",
    type=click.Path(file_okay=False),
    default=None,
    help="Index folder whose cache keeps LLM replies [env INDEXER_DB; default ./.indexer].",
)
@click.option(
    "--ollama-host",
    default=None,
    metavar="URL",
    help="Ollama server for --llm ollama:<model> [env OLLAMA_HOST].",
)
@json_option
@quiet_option
@handle_errors
def questions(
    paths: tuple[str, ...],
    output: str,
    count: int,
    seed: int,
    llm: str,
    files: CorpusArgs,
    db: str | None,
    ollama_host: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Make a question set from your own documents: each question targets a passage (a
    sentence, list item, table row, or a code definition) with an exact answer, spread
    over the documents by size. Then `indexer eval FILE --corpus PATH` scores strategies
    on it. Made-up questions are a tool, not the truth: see the documentation
    (docs/results.md) for how well they agree with questions people wrote."""
    from ..questions import make_questions

    target = _target(count, output)
    note = note_function(quiet)
    made = make_questions(
        list(paths),
        count,
        seed=seed,
        llm=llm,
        include=files.include,
        exclude=files.exclude,
        max_file_size=files.max_file_size,
        encoding=files.encoding,
        settings=settings_from(db=db, ollama_host=ollama_host),
    )
    if not made.questions:
        raise click.ClickException(
            f"{made.shortfall}; nothing written" + "".join(f" ({n})" for n in made.notes)
        )
    made.write(target)
    kinds = Counter(q["tags"][2] for q in made.questions)
    if made.shortfall:
        click.echo(f"warning: {made.shortfall}; wrote those", err=True)
    if as_json:
        echo_json([summary_of(made, target, count, seed=seed, llm=llm, kinds=kinds)])
        return
    echo_made(made, kinds, paths, output=output, seed=seed, llm=llm, note=note)


def echo_made(
    made: QuestionSet,
    kinds: Counter[str],
    paths: tuple[str, ...],
    output: str,
    seed: int,
    llm: str,
    note: Callable[[str], None],
) -> None:
    """What was written, the files skipped and the notes, then the command to run next."""
    for s in made.skipped:
        note(f"skipped {printable(s.doc_id)}: {s.reason}")
    for w in made.warnings:
        note(f"warning {printable(w.doc_id)}: {w.reason}")
    for line in made.notes:
        note(line)
    listing = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    documents = f"{made.documents} document{'s' if made.documents != 1 else ''}"
    click.echo(
        f"wrote {len(made.questions)} questions ({listing}) from {documents} to {output} "
        f"in {made.seconds:.1f}s (seed {seed}, {llm})"
    )
    where = paths[0] if len(paths) == 1 else "FOLDER"
    note(f"score strategies on them: indexer eval {output} --strategy S --corpus {where}")


def _target(count: int, output: str) -> Path:
    """The question file to write, once -n and its folder are checked."""
    if count < 1:
        raise click.BadParameter(f"must be at least 1, not {count}", param_hint="-n")
    writable(output, "--output")
    return Path(output).expanduser()


def summary_of(
    made: QuestionSet, target: Path, count: int, seed: int, llm: str, kinds: Counter[str]
) -> dict[str, Any]:
    """--json: what was asked for and what was made."""
    return {
        "output": str(target),
        "questions": len(made.questions),
        "requested": count,
        "seed": seed,
        "generator": llm,
        "documents": made.documents,
        "candidates": made.candidates,
        "kinds": dict(kinds),
        "seconds": round(made.seconds, 2),
        "skipped": [{"doc_id": s.doc_id, "reason": s.reason} for s in made.skipped],
        "warnings": [{"doc_id": w.doc_id, "reason": w.reason} for w in made.warnings],
        "notes": made.notes,
    }
