"""Commands that read documents: `chunk` (nothing stored), `build`, and `gc`."""

from __future__ import annotations

from pathlib import Path

import click

from .common import (
    ClickProgress, build_options, corpus_options, db_options, echo_json, echo_skipped, echo_table,
    fmt_seconds, handle_errors, json_option, max_pdf_pages_option, note_function, quiet_option, settings_from,
    strategies_option,
)
from .library import LibraryOption, strategies_or_default


def register(cli: click.Group) -> None:
    cli.add_command(chunk)
    cli.add_command(build)
    cli.add_command(gc)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@strategies_option
@corpus_options
@max_pdf_pages_option
@click.option("--embedder", default=None, metavar="NAME",
              help="Embedder for strategies that embed while chunking (semantic) [env INDEXER_EMBEDDER].")
@json_option
@handle_errors
def chunk(paths, strategies, include, exclude, max_file_size, encoding, max_pdf_pages, embedder, as_json):
    """Chunk files without storing them: per strategy, its chunks and where its cuts fall
    (inside words, sentences, tables, code, list items, functions; what it keeps whole).
    --json: every chunk, then one summary per strategy (JSON lines)."""
    from ..evaluation.chunk_boundaries import LEGEND, BoundaryStats, columns
    from ..indexing.pipeline import iter_chunks
    from ..embeddings import get_embedder

    settings = settings_from(embedder=embedder)
    model = get_embedder(settings.embedder, settings) if embedder else None
    found, stats, stream = iter_chunks(
        list(paths), strategies_or_default(strategies), include=include, exclude=exclude,
        max_file_size=max_file_size, encoding=encoding, skip_dirs=(settings.db,), embedder=model,
        max_pdf_pages=max_pdf_pages, settings=settings,
    )
    quality = {name: BoundaryStats(name) for name in stats}
    for name, doc, chunks in stream:
        quality[name].add(doc, chunks)
        if as_json:
            echo_json({"row": "chunk", **c.to_dict(), "newline": doc.newline} for c in chunks)
    if as_json:
        echo_json({"row": "summary", **st.to_dict(), "boundaries": quality[st.strategy].to_dict()}
                  for st in stats.values())
        echo_skipped(found.skipped, found.warnings, found.unsupported, err=True)
        return
    headers, cells = columns(list(quality.values()))
    rows = []
    for st, extra in zip(stats.values(), cells):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(st.kinds.items(), key=lambda kv: -kv[1]))
        rows.append([st.strategy, st.files, st.chunks, f"{st.avg_tokens:.0f}", st.max_tokens, *extra, kinds])
    echo_table(["strategy", "files", "chunks", "avgTok", "maxTok", *headers, "kinds"], rows)
    click.echo(LEGEND)
    echo_skipped(found.skipped, found.warnings, found.unsupported)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@build_options
@handle_errors
def build(paths, strategies, name, db, chroma_url, ollama_host, embedder, include, exclude, max_file_size,
          encoding, max_pdf_pages, full, no_wait, lang, stem, fold, stopwords, bm25_engine, quiet, as_json):
    """Chunk, embed and store: one Chroma collection (+ BM25 index) per strategy.

    Only new and changed files are chunked and embedded again; the previous version
    keeps answering queries until the new one is complete. Files left out are listed
    with their reasons (with --quiet too)."""
    from ..indexing.building import build as run_build
    from ..indexing.options import BuildOptions
    from ..store import Store

    settings = settings_from(db, chroma_url, embedder, ollama_host)
    ctx = click.get_current_context()
    existed = Store.holds_index(settings.db)
    ctx.meta["interrupted"] = ("interrupted; the previous version of the index is untouched" if existed or
                               settings.chroma_url else "interrupted; nothing was built")
    defaults_left = {k: v for k, v in (("lang", lang), ("bm25_engine", bm25_engine)) if v is not None}
    options = BuildOptions(include=include, exclude=exclude, max_file_size=max_file_size, max_pdf_pages=max_pdf_pages,
                           encoding=encoding, name=name, full=full, wait=not no_wait, stem=stem, fold=fold,
                           stopwords=stopwords, **defaults_left)
    reports = run_build(list(paths), strategies_or_default(strategies), options, settings=settings,
                        progress=ClickProgress(quiet), on_message=note_function(quiet))
    if as_json:
        echo_json(r.to_dict() for r in reports)
        return
    echo_table(["strategy", "mode", "files", "chunks", "avgTok", "maxTok", "embedded", "cached", "time"],
               [[r.strategy, r.mode, r.files, r.chunks, f"{r.avg_tokens:.0f}", r.max_tokens, r.embedded, r.cache_hits,
                 fmt_seconds(r.seconds)] for r in reports])
    for r in reports:
        detail = [f"embedder {r.embedder}", f"bm25 {r.analyzer}"]
        if r.reason:
            detail.append(f"full build: {r.reason}")
        if r.mode != "full":
            detail.append(f"files {r.added} added, {r.changed} changed, {r.removed} removed, {r.unchanged} unchanged")
        if r.mode == "incremental":
            detail.append(f"records {r.written} written, {r.retired} retired")
        timing = ", ".join(f"{k} {fmt_seconds(v)}" for k, v in r.timings.items() if v >= 0.05)
        if timing:
            detail.append(f"time: {timing}")
        click.echo(f"{r.strategy}: " + "; ".join(detail))
        for line in r.notes:
            click.echo(f"{r.strategy}: {line}")
    # what was left out is part of the result: listed with --quiet too (--quiet silences
    # progress and notes, not files missing from the index)
    echo_skipped([s for r in reports for s in r.skipped], [w for r in reports for w in r.warnings],
                 reports[0].unsupported if reports else None)


def _grace() -> float:
    from ..store import GRACE

    return GRACE


@click.command()
@db_options
@click.option("--chroma-path", type=click.Path(exists=True, file_okay=False), default=None,
              help="A Chroma server's data folder (run on the server's machine) to clear of deleted collections.")
@click.option("--grace", type=float, default=None, cls=LibraryOption,
              help=lambda: f"Seconds superseded records stay readable after a build [default: {_grace():g}].")
@quiet_option
@json_option
@handle_errors
def gc(db, chroma_url, chroma_path, grace, quiet, as_json):
    """Remove what interrupted builds and replaced versions left behind (builds do this
    for their own collection; gc does it for every one, and for a server's data folder)."""
    from ..store import Store
    from ..store.collect import collect

    store = Store(settings_from(db, chroma_url))
    report = collect(store, grace, Path(chroma_path) if chroma_path else None, note_function(quiet))
    if as_json:
        echo_json([{"removed": report.removed, "bytes_freed": report.bytes_freed, "measured": report.measured}])
        return
    if not report.removed:
        click.echo("nothing to collect")
        return
    for line in report.removed:
        click.echo(f"removed {line}")
    server = "; a Chroma server's own disk is collected with --chroma-path on its machine" \
        if store.url and not chroma_path else ""
    click.echo(f"freed {_size(report.bytes_freed)} in {' and '.join(report.measured)}{server}")


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"
