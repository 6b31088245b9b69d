"""`indexer list`: the collections of an index, their settings and their bytes on disk."""

from __future__ import annotations

from typing import Any

import click

from .common import echo_json, echo_table, handle_errors, settings_from
from .options import db_options, json_option


def register(cli: click.Group) -> None:
    cli.add_command(list_)


def megabytes(n: int) -> str:
    """Bytes as `list` shows them: `12.3 MB`."""
    return f"{n / 1e6:.1f} MB"


@click.command(name="list")
@db_options
@json_option
@handle_errors
def list_(db: str | None, chroma_url: str | None, as_json: bool) -> None:
    """Collections in the index: strategy, parameters, embedder, size (chunks, and bytes
    on disk: its side files, Chroma vector index and share of Chroma's database), build time, the
    default search (saved by `indexer tune --save`, else calibrated at build time) and
    emb/bm25: what the build measured of the embedder on this collection (its probes'
    MRR@10 over BM25's) and the factor that put on the embedding share."""
    from ..retrieval import describe
    from ..store import Store

    store = Store(settings_from(db, chroma_url))
    entries = store.catalogue.entries()
    disk = store.disk()
    described = [describe(store, e, entries, disk=disk) for e in entries]
    if as_json:
        echo_json(described)
        return
    if not entries:
        click.echo(f"no collections yet; build one: {store.build_command('PATH')}")
        return
    rows = [collection_row(d) for d in described]
    echo_table(
        [
            "strategy",
            "embedder",
            "files",
            "chunks",
            "avgTok",
            "disk",
            "built",
            "search",
            "emb/bm25",
            "parameters",
        ],
        rows,
    )
    click.echo(
        f"index folder {megabytes(disk.total)}, of which the embedding cache "
        f"{megabytes(disk.cache)} (shared: each distinct text once)"
    )


def collection_row(d: dict[str, Any]) -> list[Any]:
    """A collection as `list` shows it (`retrieval.describe`'s fields)."""
    params = ",".join(f"{k}={v}" for k, v in d["params"].items() if v is not None)
    search = d["search"] + (" (tuned)" if d["tuned"] else "")
    m = d["measured"]
    worth = f"{m['ratio']:.2f} x{m['factor']:g}" if m and "ratio" in m else "-"
    choice = d.get("embedder_choice") or {}
    chosen = f" (auto: {choice['reason']})" if choice.get("by") == "rule" else ""
    return [
        d["strategy"],
        d["embedder"] + chosen,
        d["files"],
        d["chunks"],
        f"{d['avg_tokens']:.0f}",
        megabytes(d["disk"]["total"]) if d.get("disk") else "-",
        d["built_at"][:19],
        search,
        worth,
        f"{d['kind']}:{params}",
    ]
