"""A live version's BM25 index as a search opens it: loaded from its side folder, or —
where the folder is missing (a machine that did not build it: a reader of a Chroma
server) or damaged — brought up to date from an earlier generation's, or rebuilt from the
records the version holds, and saved there."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import IndexerError, UsageError
from ...store import Entry, Store
from ...text.analyzer import Analyzer
from .index import SIDE, BM25Builder, BM25Index

REBUILD_BATCH = 2000  # texts analysed at a time when the index is rebuilt


def load_or_rebuild(
    store: Store,
    entry: Entry,
    engine: str | None = None,
    on_repair: Callable[[str], None] | None = None,
    check_all: bool = False,
) -> BM25Index:
    """The BM25 index of a live version, from its side folder; when the folder is missing
    (a machine that did not build it: a reader of a Chroma server) or damaged, it is
    rebuilt from the records the version holds and saved there (a read-only index keeps
    it in memory). `check_all`: hash every file (a build does)."""
    folder = store.side.path(entry, SIDE)
    problem = ""
    if (folder / "params.json").exists():
        try:
            return BM25Index.load(folder, engine, expected=entry.chunks, check_all=check_all)
        except IndexerError as exc:
            if isinstance(exc, UsageError):
                raise
            problem = str(exc)
    index = None if problem else _caught_up(store, entry, engine)
    if index is None:
        index = _rebuilt(store, entry, engine)
    try:
        index.save(folder)
        store.side.prune(entry)  # a reader's older generations
    except OSError:
        pass  # read-only index: keep it in memory
    if problem and on_repair:
        on_repair(f"rebuilt the BM25 index from the stored records ({problem})")
    return index


def _caught_up(store: Store, entry: Entry, engine: str | None) -> BM25Index | None:
    """A reader's index of an earlier generation of the same collection, brought up to date:
    the records the later generations wrote added, those they retired (the catalogue lists
    them per generation) dropped — at the cost of the change. None when there is no such
    index, or the catalogue no longer lists every generation since (a reader that lagged
    past the grace period), or the result disagrees with the catalogue's chunk count."""
    for generation, folder in store.side.earlier_paths(entry, SIDE):
        retired = store.side.retired_since(entry, generation)
        if retired is None or not (folder / "params.json").exists():
            continue
        try:
            previous = BM25Index.load(folder, engine)
        except IndexerError:
            continue
        fresh = BM25Builder(previous.analyzer)
        for chunk_id, text in store.records.indexed_texts(entry, after=generation):
            fresh.add([chunk_id], [text])
        index = previous.updated(retired, fresh)
        return index if index.n == entry.chunks else None
    return None


def _rebuilt(store: Store, entry: Entry, engine: str | None) -> BM25Index:
    """The index rebuilt from every stored text of the version."""
    builder = BM25Builder(Analyzer.from_dict(entry.extra.get("analyzer", {})))
    ids: list[str] = []
    texts: list[str] = []
    for chunk_id, text in store.records.indexed_texts(entry):
        ids.append(chunk_id)
        texts.append(text)
        if len(ids) >= REBUILD_BATCH:
            builder.add(ids, texts)
            ids, texts = [], []
    builder.add(ids, texts)
    return builder.finish(engine or entry.extra.get("bm25_engine"))
