"""What every command shares: settings from options, error handling, progress bars and
output (tables for people, JSON lines for scripts). The shared options are `options`."""

from __future__ import annotations

import functools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, ParamSpec, TypeVar

import click

from ..errors import IndexerError, NothingToIndex, SkippedFile
from ..settings import Settings
from ..tables import printable, table

P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn library errors into a one-line message and the documented exit code."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except IndexerError as exc:
            # the message says "see the reasons above": here they are
            if isinstance(exc, NothingToIndex):
                echo_skipped(exc.skipped, err=True)
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            ctx = click.get_current_context(silent=True)
            fail((ctx.meta.get("interrupted") if ctx else None) or "interrupted", 130)
        except BrokenPipeError:
            sys.exit(0)

    return wrapper


def settings_from(
    db: str | None = None,
    chroma_url: str | None = None,
    embedder: str | None = None,
    ollama_host: str | None = None,
) -> Settings:
    """Options given on the command line over the environment over the defaults."""
    return Settings.load(db=db, chroma_url=chroma_url, embedder=embedder, ollama_host=ollama_host)


# -- output -----------------------------------------------------------------------------------
def echo_json(rows: Iterable[Mapping[str, Any]]) -> None:
    """JSON lines on stdout: one object per row."""
    for row in rows:
        click.echo(json.dumps(row, ensure_ascii=False))


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
    click.echo(table(headers, rows, title))


def echo_skipped(
    skipped: Iterable[SkippedFile] = (),
    warnings: Iterable[SkippedFile] = (),
    unsupported: Mapping[str, int] | None = None,
    err: bool = False,
) -> None:
    """One line per file not indexed (`skipped NAME: reason`) or indexed with a caveat
    (`warning NAME: reason`), each told once, and the file types ignored."""
    seen: set[str] = set()
    for kind, items in (("warning", warnings), ("skipped", skipped)):
        for item in items:
            line = f"{kind} {printable(item.doc_id)}: {item.reason}"
            if line not in seen:
                seen.add(line)
                click.echo(line, err=err)
    if unsupported:
        listing = ", ".join(f"{printable(ext)} ×{n}" for ext, n in sorted(unsupported.items()))
        click.echo(f"ignored unsupported file types: {listing}", err=err)


def writable(path: str | None, option: str) -> None:
    """Check an output file's folder before the work that ends by writing it."""
    if path and not Path(path).expanduser().resolve().parent.is_dir():
        raise click.BadParameter(
            f"the folder of {path} does not exist; create it first", param_hint=option
        )


def note_function(quiet: bool) -> Callable[[str], None]:
    return (lambda msg: None) if quiet else (lambda msg: click.echo(msg, err=True))


def fmt_seconds(value: float) -> str:
    return f"{value:.1f}s" if value < 100 else f"{value / 60:.1f}m"


# -- progress ---------------------------------------------------------------------------------
# seconds between two progress lines when stderr is no terminal (a log, CI, a pipe)
PROGRESS_EVERY = 30.0


class ClickProgress:
    """A progress bar on stderr with a time estimate on a terminal; elsewhere (a log, a
    pipe) a line of progress every `PROGRESS_EVERY` seconds (`Ticker`); nothing with
    --quiet."""

    def __init__(self, quiet: bool) -> None:
        self.show = not quiet and sys.stderr.isatty()
        self.lines = not quiet and not self.show

    def __call__(self, label: str, total: int) -> Bar | Ticker:
        if self.lines:
            return Ticker(label, total, PROGRESS_EVERY)
        return Bar(label, total, self.show)


class Bar:
    def __init__(self, label: str, total: int, show: bool) -> None:
        self.bar = (
            click.progressbar(length=max(total, 1), label=label, file=sys.stderr, show_eta=True)
            if show
            else None
        )
        self.started = time.monotonic()

    def __enter__(self) -> Callable[..., None]:
        if self.bar is None:
            return unshown
        self.bar.__enter__()
        return self.bar.update

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, exc, tb)


class Ticker:
    """Progress without a terminal: a line on stderr every `every` seconds while the work
    runs, whether it advanced or not (a stage of a large build runs for many minutes):
    `headers: 42% done after 3.2 min, 13%/min, about 4.5 min left`.

    The rate is measured from the first step on: what comes before it (loading the model,
    laying out a large PDF before its first chunks are embedded) is paid once, and counted
    in, it made a 44 s build say "about 7.1 min left" at 30 s."""

    def __init__(self, label: str, total: int, every: float) -> None:
        self.label, self.total, self.every = label, max(total, 1), every
        self.done = 0
        self.first: tuple[float, int] | None = None  # when the first step ended, and done then
        self.started = time.monotonic()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name="progress", daemon=True)

    def __enter__(self) -> Callable[..., None]:
        self.started = time.monotonic()
        self.thread.start()
        return self.advance

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop.set()
        self.thread.join()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.first is None:
            self.first = (time.monotonic(), self.done)

    def run(self) -> None:
        while not self.stop.wait(self.every):
            click.echo(self.line(), err=True)

    def line(self) -> str:
        """Where the work is: its share done, the time so far, the rate since the first
        step (none before a second) and what is left at that rate."""
        now = time.monotonic()
        share = min(self.done / self.total, 1.0)
        line = f"{self.label}: {_percent(share)} done after {_minutes((now - self.started) / 60)}"
        if self.first is None or self.done <= self.first[1] or now <= self.first[0]:
            return line + ", no estimate yet"
        rate = (self.done - self.first[1]) / self.total / ((now - self.first[0]) / 60)
        return line + f", {_percent(rate)}/min, about {_minutes((1 - share) / rate)} left"


def _percent(share: float) -> str:
    """`0.4%`, `42%`: a tenth of a percent below ten."""
    return f"{share:.1%}" if share < 0.1 else f"{share:.0%}"


def _minutes(value: float) -> str:
    """Minutes as people read them: `40 s`, `3.2 min`, `1.5 h`."""
    if value < 1:
        return f"{value * 60:.0f} s"
    return f"{value:.1f} min" if value < 90 else f"{value / 60:.1f} h"


def unshown(n: int = 1) -> None:
    """A hidden bar's update: nothing to draw."""
