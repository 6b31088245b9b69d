"""Boundary quality of stored collections: the chunks a collection holds (`Index.chunks()`)
measured against the documents they were cut from (see indexer.evaluation.chunk_boundaries)."""

from __future__ import annotations

import os

from ..loaders import load_documents
from ..retrieval import Index
from ..settings import Settings, settings_for
from ..store import Store
from .chunk_boundaries import BoundaryStats, measure


def stored_boundaries(
    strategies: list[str],
    corpus: str | os.PathLike,
    *,
    settings: Settings | None = None,
    built_with: tuple[str | None, ...] = (None,),
) -> dict[tuple[str, str], BoundaryStats]:
    """{(strategy, embedder): BoundaryStats} of each stored collection (for each embedder
    of `built_with`; None: the one it is read with), against the documents in `corpus` as
    they are now (chunks of documents no longer there, or changed since the build, are
    measured against what is there)."""
    store = Store(settings_for(settings))
    _, stream = load_documents([corpus])
    docs = list(stream)
    out: dict[tuple[str, str], BoundaryStats] = {}
    for embedder in built_with:
        for strategy in strategies:
            index = Index.in_store(store, strategy, built_with=embedder)
            key = (index.entry.strategy, index.entry.embedder)
            if key not in out:
                out[key] = measure(docs, index.chunks(), index.entry.strategy)
    return out
