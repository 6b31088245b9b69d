"""The `indexer` command line: parse options, call the library, format the result.

Heavy libraries (chromadb, embedding models) are imported inside commands, so
`indexer --help` stays fast.
"""

from __future__ import annotations

import functools
import json
import sys

import click

from . import __version__
from .config import DEFAULT_MAX_FILE_SIZE, ENV_DB
from .errors import IndexerError

DEFAULT_STRATEGY = "headers"


def _fail(message: str, code: int) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def handle_errors(func):
    """Turn library errors into a one-line message and the documented exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except IndexerError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted; the previous index is untouched", 130)
        except BrokenPipeError:
            sys.exit(0)

    return wrapper


def _parse_size(value: str) -> int:
    text = str(value).strip().upper().replace(" ", "")
    units = {"KB": 1024, "MB": 1024**2, "GB": 1024**3, "K": 1024, "M": 1024**2, "G": 1024**3, "B": 1}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


class SizeType(click.ParamType):
    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return _parse_size(value)
        except ValueError:
            self.fail(f"{value!r} is not a size like 5MB or 200KB", param, ctx)


def corpus_options(func):
    """Options that select and read input files."""
    func = click.option("--include", multiple=True, metavar="GLOB", help="Only index files matching this glob (repeatable).")(func)
    func = click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files or folders matching this glob (repeatable).")(func)
    func = click.option(
        "--max-file-size", type=SizeType(), default=DEFAULT_MAX_FILE_SIZE, show_default="5MB",
        help="Skip files larger than this.",
    )(func)
    func = click.option("--encoding", default=None, help="Decode every file with this encoding instead of detecting it.")(func)
    return func


def json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="indexer")
def cli():
    """Chunk documents with several strategies, store each in Chroma, search with
    embeddings, BM25 or both, and measure which strategy wins on your own questions."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--strategy", "-s", "strategies", multiple=True, metavar="S",
              help=f"Preset or kind[:key=value,...], repeatable (default: {DEFAULT_STRATEGY}).")
@corpus_options
@json_option
@handle_errors
def chunk(paths, strategies, include, exclude, max_file_size, encoding, as_json):
    """Chunk files without storing them: a summary, or every chunk with --json (JSON lines)."""
    from .chunking import iter_chunks

    found, stats, stream = iter_chunks(
        list(paths), list(strategies) or [DEFAULT_STRATEGY], include=include, exclude=exclude,
        max_file_size=max_file_size, encoding=encoding, skip_dirs=(_db_dir_for_skip(),),
    )
    out = sys.stdout
    for _name, _doc, chunks in stream:
        if as_json:
            for c in chunks:
                out.write(json.dumps(c.to_dict(), ensure_ascii=False) + "\n")
    if as_json:
        _echo_skipped(found, err=True)
        return
    click.echo(f"{'strategy':<22} {'files':>6} {'chunks':>7} {'avgTok':>7} {'maxTok':>7}  kinds")
    for st in stats.values():
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(st.kinds.items(), key=lambda kv: -kv[1]))
        click.echo(f"{st.strategy:<22} {st.files:>6} {st.chunks:>7} {st.avg_tokens:>7.0f} {st.max_tokens:>7}  {kinds}")
    _echo_skipped(found)


def _db_dir_for_skip():
    import os

    return os.environ.get(ENV_DB) or ".indexer"


def _echo_skipped(found, err: bool = False) -> None:
    for item in found.warnings:
        click.echo(f"warning {item.doc_id}: {item.reason}", err=err)
    for item in found.skipped:
        click.echo(f"skipped {item.doc_id}: {item.reason}", err=err)
    if found.unsupported:
        listing = ", ".join(f"{ext} ×{n}" for ext, n in sorted(found.unsupported.items()))
        click.echo(f"ignored unsupported file types: {listing}", err=err)
