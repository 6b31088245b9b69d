"""Commands that read documents: `chunk` (nothing stored), `build`, and `gc`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import (
    ClickProgress,
    echo_json,
    echo_skipped,
    echo_table,
    fmt_seconds,
    handle_errors,
    note_function,
    settings_from,
)
from .groups import Output, Place
from .library import LibraryOption, strategies_or_default
from .options import (
    BuildArgs,
    build_options,
    corpus_options,
    db_options,
    json_option,
    max_pdf_pages_option,
    quiet_option,
    strategies_option,
)

if TYPE_CHECKING:
    from ..chunkers.registry import StrategySpec
    from ..indexing.report import BuildReport


def register(cli: click.Group) -> None:
    cli.add_command(chunk)
    cli.add_command(build)
    cli.add_command(gc)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@strategies_option
@corpus_options
@max_pdf_pages_option
@click.option(
    "--embedder",
    default=None,
    metavar="NAME",
    help="Embedder for strategies that embed while chunking (semantic) [env INDEXER_EMBEDDER].",
)
@json_option
@handle_errors
def chunk(
    paths: tuple[str, ...],
    strategies: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_file_size: int,
    encoding: str | None,
    max_pdf_pages: int,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Chunk files without storing them: per strategy, its chunks and where its cuts fall
    (inside words, sentences, tables, code, list items, functions; what it keeps whole).
    --json: every chunk, then one summary per strategy (JSON lines)."""
    from ..evaluation.chunk_boundaries import LEGEND, BoundaryStats, columns
    from ..indexing.pipeline import iter_chunks

    settings = settings_from(embedder=embedder)
    specs: list[str | StrategySpec] = [*strategies_or_default(strategies)]
    found, stats, stream = iter_chunks(
        list(paths),
        specs,
        include=include,
        exclude=exclude,
        max_file_size=max_file_size,
        encoding=encoding,
        skip_dirs=(settings.db,),
        max_pdf_pages=max_pdf_pages,
        settings=settings,
    )
    quality = {name: BoundaryStats(name) for name in stats}
    for name, doc, chunks in stream:
        quality[name].add(doc, chunks)
        if as_json:
            echo_json({"row": "chunk", **c.to_dict(), "newline": doc.newline} for c in chunks)
    if as_json:
        echo_json(
            {"row": "summary", **st.to_dict(), "boundaries": quality[st.strategy].to_dict()}
            for st in stats.values()
        )
        echo_skipped(found.skipped, found.warnings, found.unsupported, err=True)
        return
    headers, cells = columns(list(quality.values()))
    rows = []
    for st, extra in zip(stats.values(), cells):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(st.kinds.items(), key=lambda kv: -kv[1]))
        rows.append(
            [st.strategy, st.files, st.chunks, f"{st.avg_tokens:.0f}", st.max_tokens, *extra, kinds]
        )
    echo_table(["strategy", "files", "chunks", "avgTok", "maxTok", *headers, "kinds"], rows)
    click.echo(LEGEND)
    echo_skipped(found.skipped, found.warnings, found.unsupported)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@build_options
@handle_errors
def build(
    paths: tuple[str, ...],
    strategies: tuple[str, ...],
    where: Place,
    build: BuildArgs,
    output: Output,
) -> None:
    """Chunk, embed and store: one Chroma collection (+ BM25 index) per strategy.

    Only new and changed files are chunked and embedded again; the previous version
    keeps answering queries until the new one is complete. Files left out are listed
    with their reasons (with --quiet too)."""
    from ..indexing.building import build as run_build
    from ..store import Store

    settings = where.settings()
    ctx = click.get_current_context()
    existed = Store.holds_index(settings.db) or bool(settings.chroma_url)
    ctx.meta["interrupted"] = (
        "interrupted; nothing new was built, and the index is as it was before"
        if existed
        else "interrupted; nothing was built"
    )
    options = build.options()
    specs: list[str | StrategySpec] = [*strategies_or_default(strategies)]
    options = replace(options, on_stage=InterruptNote(ctx.meta, specs, existed, options.on_stage))
    reports = run_build(
        list(paths),
        specs,
        options,
        settings=settings,
        progress=ClickProgress(output.quiet),
        on_message=note_function(output.quiet),
    )
    if output.as_json:
        echo_json(r.to_dict() for r in reports)
        return
    echo_reports(reports)


class InterruptNote:
    """A build's `on_stage` hook keeping what Ctrl-C says up to date: once a strategy is
    built (published, or found unchanged), "nothing was built" and "the previous version
    of the index is untouched" are no longer true."""

    def __init__(
        self,
        meta: dict[str, Any],
        specs: list[str | StrategySpec],
        existed: bool,
        then: Callable[[str], None] | None,
    ) -> None:
        self.meta, self.names, self.existed, self.then = (
            meta,
            [str(s) for s in specs],
            existed,
            then,
        )
        self.locked = 0  # strategies started (each takes its build lease first)
        self.published = False  # the current one's new version is live

    def __call__(self, stage: str) -> None:
        if stage == "locked":
            self.locked, self.published = self.locked + 1, False
        elif stage == "published":
            self.published = True
        done = self.names[: max(self.locked - 1 + self.published, 0)]
        if done:
            rest = self.names[len(done) :]
            untouched = "; their previous versions, if any, are untouched" if self.existed else ""
            self.meta["interrupted"] = (
                f"interrupted; built: {', '.join(done)}; not built: {', '.join(rest)}{untouched}"
                if rest
                else "interrupted after every strategy was built; `indexer list` shows them"
            )
        if self.then is not None:
            self.then(stage)


def echo_reports(reports: list[BuildReport]) -> None:
    """The build's table, a detail line per strategy, then the files left out."""
    echo_table(
        ["strategy", "mode", "files", "chunks", "avgTok", "maxTok", "embedded", "cached", "time"],
        [
            [
                r.strategy,
                r.mode,
                r.files,
                r.chunks,
                f"{r.avg_tokens:.0f}",
                r.max_tokens,
                r.embedded,
                r.cache_hits,
                fmt_seconds(r.seconds),
            ]
            for r in reports
        ],
    )
    for r in reports:
        click.echo(f"{r.strategy}: " + "; ".join(build_detail(r)))
        for line in r.notes:
            click.echo(f"{r.strategy}: {line}")
    # what was left out is part of the result: listed with --quiet too (--quiet silences
    # progress and notes, not files missing from the index)
    echo_skipped(
        [s for r in reports for s in r.skipped],
        [w for r in reports for w in r.warnings],
        reports[0].unsupported if reports else None,
    )


def build_detail(r: BuildReport) -> list[str]:
    """What a build report's table row leaves out: embedder, analyzer, why a build was
    full, the files and records it changed, and where its time went."""
    detail = [f"embedder {r.embedder}", f"bm25 {r.analyzer}"]
    if r.reason:
        detail.append(f"full build: {r.reason}")
    if r.mode != "full":
        detail.append(
            f"files {r.added} added, {r.changed} changed, {r.removed} removed, "
            f"{r.unchanged} unchanged"
        )
    if r.mode == "incremental":
        detail.append(f"records {r.written} written, {r.retired} retired")
    timing = ", ".join(f"{k} {fmt_seconds(v)}" for k, v in r.timings.items() if v >= 0.05)
    if timing:
        detail.append(f"time: {timing}")
    return detail


def _grace() -> float:
    from ..store import GRACE

    return GRACE


@click.command()
@db_options
@click.option(
    "--chroma-path",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="A Chroma server's data folder (run on the server's machine) to clear of deleted collections.",
)
@click.option(
    "--grace",
    type=float,
    default=None,
    cls=LibraryOption,
    help=lambda: f"Seconds superseded records stay readable after a build [default: {_grace():g}].",
)
@quiet_option
@json_option
@handle_errors
def gc(
    db: str | None,
    chroma_url: str | None,
    chroma_path: str | None,
    grace: float | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Remove what interrupted builds and replaced versions left behind (builds do this
    for their own collection; gc does it for every one, and for a server's data folder)."""
    from ..store import Store
    from ..store.collect import collect

    store = Store(settings_from(db, chroma_url))
    report = collect(store, grace, Path(chroma_path) if chroma_path else None, note_function(quiet))
    if as_json:
        echo_json(
            [
                {
                    "removed": report.removed,
                    "bytes_freed": report.bytes_freed,
                    "measured": report.measured,
                }
            ]
        )
        return
    if not report.removed:
        click.echo("nothing to collect")
        return
    for line in report.removed:
        click.echo(f"removed {line}")
    server = (
        "; a Chroma server's own disk is collected with --chroma-path on its machine"
        if store.url and not chroma_path
        else ""
    )
    click.echo(f"freed {_size(report.bytes_freed)} in {' and '.join(report.measured)}{server}")


def _size(n: int) -> str:
    return (
        f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"
    )
