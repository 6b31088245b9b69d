"""Commands that bring labelled question sets from elsewhere: `import-beir`."""

from __future__ import annotations

import click

from .common import echo_json, handle_errors, note_function
from .library import LibraryOption, parameter_default
from .options import json_option, quiet_option


def register(cli: click.Group) -> None:
    cli.add_command(import_beir)


def _default_split() -> str:
    from ..evaluation.beir import import_beir

    return parameter_default(import_beir, "split")


@click.command(name="import-beir")
@click.argument("source", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--output",
    "-o",
    "folder",
    required=True,
    type=click.Path(file_okay=False),
    metavar="FOLDER",
    help="New or empty folder for the documents (one Markdown file per corpus record).",
)
@click.option(
    "--split",
    cls=LibraryOption,
    default_from=_default_split,
    metavar="NAME",
    help="Judgements to read: qrels/NAME.tsv.",
)
@click.option(
    "--questions",
    "questions_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Where to write the question set [default: FOLDER/questions.jsonl].",
)
@json_option
@quiet_option
@handle_errors
def import_beir(
    source: str, folder: str, split: str, questions_path: str | None, as_json: bool, quiet: bool
) -> None:
    """Turn a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv; gzipped or not)
    into documents and a question set whose targets are whole documents with graded
    relevance, ready for `indexer build` and `indexer eval`."""
    from ..evaluation.beir import import_beir as run_import

    result = run_import(
        source, folder, split=split, questions=questions_path, progress=note_function(quiet)
    )
    if as_json:
        echo_json([result.to_dict()])
        return
    grades = ", ".join(f"grade {g}: {n:,}" for g, n in sorted(result.grades.items()))
    click.echo(
        f"wrote {result.documents:,} documents to {result.folder} and {result.questions:,} questions "
        f"({result.judgements:,} relevant documents; {grades}) to {result.questions_path}"
    )
    for reason, count in result.skipped.items():
        examples = ", ".join(result.examples.get(reason, []))
        click.echo(f"  skipped {count:,} {reason}" + (f" (e.g. {examples})" if examples else ""))
    click.echo(
        f"next: indexer build {result.folder} && "
        f"indexer eval {result.questions_path} --strategy auto"
        + ("" if result.questions_path.parent == result.folder else f" --corpus {result.folder}")
    )
