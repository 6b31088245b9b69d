"""Commands that keep running: `watch` (collections follow a folder) and `mcp` (the index
served to coding agents over the Model Context Protocol)."""

from __future__ import annotations

import shutil
import signal
import sys
import time
from types import FrameType, ModuleType
from typing import TYPE_CHECKING

import click

from .common import ClickProgress, echo_json, handle_errors, settings_from
from .groups import Output, Place
from .library import LibraryOption, rule, strategies_or_default
from .options import BuildArgs, build_options, read_options

if TYPE_CHECKING:
    from ..indexing.watching import Status, Sync


def _watching() -> ModuleType:
    from ..indexing import watching

    return watching


def _max_tokens() -> int:
    from ..agents.tools import DEFAULT_MAX_TOKENS

    return DEFAULT_MAX_TOKENS


def register(cli: click.Group) -> None:
    cli.add_command(watch)
    cli.add_command(mcp)


class StatusLine:
    """One line at the bottom of a terminal's stderr, redrawn in place; notes are printed
    above it. Shown only on a terminal and without --quiet; notes are printed unless
    --quiet."""

    def __init__(self, label: str, quiet: bool) -> None:
        self.label = label
        self.quiet = quiet
        self.show = not quiet and sys.stderr.isatty()
        self.text = ""

    def update(self, status: Status) -> None:
        self.text = render_status(self.label, status)
        self._draw()

    def note(self, message: str) -> None:
        if self.quiet:
            return
        self._clear()
        click.echo(message, err=True)
        self._draw()

    def close(self) -> None:
        self._clear()
        self.show = False

    def _draw(self) -> None:
        if self.show and self.text:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            click.echo("\r\033[K" + self.text[:width], err=True, nl=False)

    def _clear(self) -> None:
        if self.show:
            click.echo("\r\033[K", err=True, nl=False)


def render_status(label: str, status: Status) -> str:
    parts = [f"{status.state} {label}"]
    if status.last_sync:
        parts.append(
            f"last sync {time.strftime('%H:%M:%S', time.localtime(status.last_sync))} "
            f"({status.last_seconds:.1f}s)"
        )
    parts.append(f"{status.pending} pending")
    if status.skipped:
        parts.append(f"{status.skipped} skipped")
    if status.error:
        parts.append(f"error: {status.error}")
    return " · ".join(parts)


def describe_sync(sync: Sync) -> str | None:
    """A log line for a sync that changed something (None for one that did not)."""
    changed = [r for r in sync.reports if r.mode != "unchanged"]
    if not changed:
        return None
    when = time.strftime("%H:%M:%S", time.localtime(sync.at))
    each = ", ".join(f"{r.strategy} {r.mode} +{r.added} ~{r.changed} -{r.removed}" for r in changed)
    return f"{when} synced in {sync.seconds:.1f}s: {each}"


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@build_options
@click.option(
    "--debounce",
    type=click.IntRange(1, 60_000),
    cls=LibraryOption,
    default_from=lambda: _watching().DEBOUNCE_MS,
    metavar="MS",
    help="Quiet time (ms) that closes a batch of file events.",
)
@click.option(
    "--max-delay",
    type=click.IntRange(1, 600_000),
    cls=LibraryOption,
    default_from=lambda: _watching().MAX_DELAY_MS,
    metavar="MS",
    help="Longest time (ms) a batch waits for quiet while events keep coming.",
)
@handle_errors
def watch(
    paths: tuple[str, ...],
    strategies: tuple[str, ...],
    where: Place,
    build: BuildArgs,
    output: Output,
    debounce: int,
    max_delay: int,
) -> None:
    """Keep collections in sync with folders: build, then rebuild changed files as they change.

    Takes every option `build` takes. File events are batched (--debounce, --max-delay)
    into incremental builds; a build never interleaves with `indexer build` of the same
    strategy, and Ctrl-C leaves the last complete version live. BM25 options left out
    keep each collection's own. --json prints one object per sync on stdout."""
    import logging

    from ..indexing.watching import Watcher

    logging.getLogger("watchfiles").setLevel(logging.ERROR)  # it warns on Ctrl-C; we say "stopped"
    if max_delay < debounce:
        raise click.BadParameter(
            f"--max-delay ({max_delay}) must be at least --debounce ({debounce})",
            param_hint="--max-delay",
        )
    if build.name and len(strategies) != 1:
        raise click.BadParameter("--name applies to a single --strategy", param_hint="--name")
    settings = where.settings()
    chosen = strategies_or_default(strategies)
    line = StatusLine(f"{' '.join(paths)} · {', '.join(chosen)}", output.quiet)

    def synced(sync: Sync) -> None:
        if output.as_json:
            echo_json([sync.to_dict()])
        summary = describe_sync(sync)
        if summary:
            line.note(summary)

    options = build.options()
    watcher = Watcher(
        list(paths),
        chosen,
        options,
        settings=settings,
        debounce_ms=debounce,
        max_delay_ms=max_delay,
        on_sync=synced,
        on_message=line.note,
        on_status=line.update,
        progress=ClickProgress(output.quiet),
    )
    click.get_current_context().meta["interrupted"] = (
        "stopped during a sync; the index keeps its last complete version"
    )
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        watcher.run()
    finally:
        line.close()
    if not output.quiet:
        click.echo("stopped", err=True)


@click.command()
@click.option(
    "--strategy",
    "-s",
    default=None,
    cls=LibraryOption,
    help=lambda: f"Collection searched when a tool call names none [default: {rule()}].",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(1, 1_000_000),
    cls=LibraryOption,
    default_from=_max_tokens,
    help="Default token budget of a tool's result texts.",
)
@read_options
@handle_errors
def mcp(
    strategy: str | None,
    max_tokens: int,
    db: str | None,
    chroma_url: str | None,
    ollama_host: str | None,
    embedder: str | None,
) -> None:
    """Serve the index to coding agents over MCP (stdio): search, compare_strategies,
    list_collections, get_chunk, get_document_span. Read-only.

    Clients start it themselves; see the README for the JSON to paste into Claude Code
    or Cursor. Logs go to stderr; stdout carries only the protocol."""
    from ..agents.server import serve

    serve(
        settings_from(db, chroma_url, None, ollama_host),
        strategy,
        built_with=embedder,
        max_tokens=max_tokens,
    )
