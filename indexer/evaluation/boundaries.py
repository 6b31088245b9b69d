"""Boundary quality of stored collections: the chunks a collection holds (`Index.chunks()`)
measured against the documents they were cut from (see indexer.evaluation.chunk_boundaries)."""

from __future__ import annotations

import os

from .chunk_boundaries import BoundaryStats, measure
from ..loaders import load_documents
from ..retrieval import Index
from ..settings import Settings, settings_for


def stored_boundaries(
    strategies: list[str],
    corpus: str | os.PathLike,
    *,
    settings: Settings | None = None,
    embedders: tuple[str | None, ...] = (None,),
) -> dict[tuple[str, str], BoundaryStats]:
    """{(strategy, embedder): BoundaryStats} of each stored collection, against the
    documents in `corpus` as they are now (chunks of documents no longer there, or
    changed since the build, are measured against what is there)."""
    from ..embeddings import canonical_name

    settings = settings_for(settings)
    _, docs = load_documents([corpus])
    docs = list(docs)
    out: dict[tuple[str, str], BoundaryStats] = {}
    for embedder in embedders:
        wanted = canonical_name(embedder, settings) if embedder else None
        for strategy in strategies:
            index = Index.open(strategy, embedder=wanted, settings=settings)
            key = (index.entry.strategy, index.entry.embedder)
            if key not in out:
                out[key] = measure(docs, index.chunks(), index.entry.strategy)
    return out
