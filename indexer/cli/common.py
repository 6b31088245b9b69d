"""What every command shares: settings from options, error handling, progress bars,
output (tables for people, JSON lines for scripts) and the search options."""

from __future__ import annotations

import functools
import json
import sys
import time

import click

from ..errors import IndexerError
from ..settings import DEFAULT_MAX_FILE_SIZE, Settings
from ..tables import table

DEFAULT_STRATEGY = "auto"  # code -> code, Markdown/HTML -> blocks, other text -> headers


def fail(message: str, code: int) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


class Interrupted(Exception):
    """Raised through `handle_errors` with what an interruption left (set by a command)."""


def handle_errors(func):
    """Turn library errors into a one-line message and the documented exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except IndexerError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            ctx = click.get_current_context(silent=True)
            fail((ctx.meta.get("interrupted") if ctx else None) or "interrupted", 130)
        except BrokenPipeError:
            sys.exit(0)

    return wrapper


def settings_from(db=None, chroma_url=None, embedder=None, ollama_host=None) -> Settings:
    """Options given on the command line over the environment over the defaults."""
    return Settings.load(db=db, chroma_url=chroma_url, embedder=embedder, ollama_host=ollama_host)


# -- options ----------------------------------------------------------------------------------
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
    func = click.option("--include", multiple=True, metavar="GLOB",
                        help="Only index files matching this gitignore-style pattern (repeatable).")(func)
    func = click.option("--exclude", multiple=True, metavar="GLOB",
                        help="Skip files or folders matching this gitignore-style pattern (repeatable).")(func)
    func = click.option("--max-file-size", type=SizeType(), default=DEFAULT_MAX_FILE_SIZE, show_default="5MB",
                        help="Skip files larger than this.")(func)
    func = click.option("--encoding", default=None,
                        help="Decode every file with this encoding instead of detecting it.")(func)
    return func


def json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="JSON lines: one object per result.")(func)


def quiet_option(func):
    return click.option("--quiet", "-q", is_flag=True, help="No progress bars or notes on stderr.")(func)


def db_options(func):
    """Where the index lives."""
    func = click.option("--db", type=click.Path(file_okay=False), default=None,
                        help="Index folder [env INDEXER_DB; default ./.indexer].")(func)
    func = click.option("--chroma-url", default=None, metavar="URL",
                        help="Use a Chroma server (http://host:port) instead of the embedded database "
                             "[env INDEXER_CHROMA_URL].")(func)
    return func


def ollama_option(func):
    """For commands that embed or call an LLM."""
    return click.option("--ollama-host", default=None, metavar="URL",
                        help="Ollama server for ollama:<model> embedders and LLMs [env OLLAMA_HOST].")(func)


def embedder_option(func):
    return click.option("--embedder", default=None, metavar="NAME",
                        help="use-m3 (default), e5-small, or ollama:<model> [env INDEXER_EMBEDDER].")(func)


def store_options(func):
    """Where the index lives, which embedding model reads and writes it, and where Ollama is."""
    return embedder_option(ollama_option(db_options(func)))


def _pair(text: str, option: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not two numbers like 1,0.5", param_hint=option) from None
    return (a, b)


def search_options(func):
    """How to search; every option left out is the collection's saved setting (`indexer
    tune --save`), else the library default."""
    func = click.option("--children-k", type=int, default=None,
                        help="Parent-child: children taken before mapping to parents [default: 30].")(func)
    func = click.option("--candidates", type=int, default=None,
                        help="Depth each side is searched to [default: 50].")(func)
    func = click.option("--rrf-k", type=int, default=None, help="RRF fusion: the k in 1/(k + rank) [default: 10].")(func)
    func = click.option("--rrf-weights", default=None, metavar="E,B",
                        help="RRF fusion: weights of the embedding and BM25 sides [default: 1,1].")(func)
    func = click.option("--alpha", type=float, default=None,
                        help="Weighted fusion: the embedding side's share [default: 0.5].")(func)
    func = click.option("--fusion", type=click.Choice(["adaptive", "weighted", "rrf"]), default=None,
                        help="Hybrid: adaptive (the embedding's share follows how well BM25 covers the query; "
                             "the default), weighted (min-max scores, --alpha) or rrf.")(func)
    return func


def make_options(k=5, mode=None, fusion=None, alpha=None, rrf_weights=None, rrf_k=None, candidates=None,
                 children_k=None):
    from ..search import SearchOptions

    weights = _pair(rrf_weights, "--rrf-weights") if rrf_weights else None
    options = SearchOptions(mode=mode, k=k, fusion=fusion, alpha=alpha, rrf_k=rrf_k, weights=weights,
                            candidates=candidates, children_k=children_k)
    options.check()
    return options


# -- output -----------------------------------------------------------------------------------
def echo_json(rows) -> None:
    """JSON lines on stdout: one object per row."""
    for row in rows:
        click.echo(json.dumps(row, ensure_ascii=False))


def echo_table(headers, rows, title: str = "") -> None:
    click.echo(table(headers, rows, title))


def note_function(quiet: bool):
    return (lambda msg: None) if quiet else (lambda msg: click.echo(msg, err=True))


def fmt_seconds(value: float) -> str:
    return f"{value:.1f}s" if value < 100 else f"{value / 60:.1f}m"


# -- progress ---------------------------------------------------------------------------------
class ClickProgress:
    """A progress bar on stderr with a time estimate, shown only on a terminal and
    without --quiet."""

    def __init__(self, quiet: bool) -> None:
        self.show = not quiet and sys.stderr.isatty()

    def __call__(self, label: str, total: int):
        return _Bar(label, total, self.show)


class _Bar:
    def __init__(self, label: str, total: int, show: bool) -> None:
        self.bar = click.progressbar(length=max(total, 1), label=label, file=sys.stderr, show_eta=True) \
            if show else None
        self.started = time.monotonic()

    def __enter__(self):
        if self.bar is None:
            return lambda n=1: None
        self.bar.__enter__()
        return self.bar.update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
