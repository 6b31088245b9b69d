"""A live version's rows as a build opens them: mapped from their side folder, or — where
the folder is damaged (a file truncated, rewritten, missing) — rewritten from the records
the version holds in Chroma first, so any build, not only a full one, repairs them.

Queries do not rewrite them: that reads every record's vector from Chroma, which is a
build's cost; a query reads its records from Chroma meanwhile (`rows.open_rows`)."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import IndexerError
from ...store import Entry, Store
from .table import SIDE, RowStore
from .writer import RowsWriter


def open_or_rewrite(
    store: Store,
    entry: Entry,
    on_repair: Callable[[str], None] | None = None,
    full: bool = False,
) -> RowStore | None:
    """The live version's rows (None where this machine has none, or they are damaged
    and cannot be rewritten: a read-only index). Damaged ones are rewritten from the
    stored records and `on_repair` told so. `full`: hash every file (an unchanged build
    does, as it does the BM25 index's)."""
    folder = store.side.path(entry, SIDE)
    if not folder.exists():
        return None
    try:
        return RowStore.open(folder, expected=entry.chunks, full=full)
    except IndexerError as exc:
        problem = str(exc)
    try:
        rewrite(store, entry)
        rows = RowStore.open(folder, expected=entry.chunks)
    except (OSError, IndexerError):
        return None  # read-only, or Chroma disagrees: records are read from Chroma
    if on_repair is not None:
        on_repair(f"rewrote the stored rows from the stored records ({problem})")
    return rows


def rewrite(store: Store, entry: Entry) -> None:
    """Write a version's rows folder again from the records it holds (its vectors
    included), in place of what is there."""
    writer = RowsWriter(store.side.path(entry, SIDE), entry.dimension)
    try:
        for batch in store.records.with_vectors(entry):
            writer.add(
                batch.ids,
                [str(m.get("doc_id", "")) for m in batch.metadatas],
                batch.documents,
                [dict(m) for m in batch.metadatas],
                batch.vectors,
            )
        writer.finish()
    finally:
        writer.abandon()


__all__ = ["open_or_rewrite", "rewrite"]
