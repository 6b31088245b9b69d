"""The collections a question set is evaluated on (an `Index` per strategy × embedder), and
the corpus folder its questions are resolved against."""

from __future__ import annotations

from pathlib import Path

from ..errors import CollectionNotFound, QuestionSetError
from ..retrieval import Index
from ..store import Store
from .sets import Question


def open_indexes(
    store: Store, strategies: list[str], built_with: tuple[str | None, ...] = (None,)
) -> list[Index]:
    """An `Index` per strategy × embedder (None: the one it is read with; no strategy:
    the one `collections.choose` reads); one error names every collection not built yet
    and the build command that makes them."""
    from ..embeddings import canonical_name

    indexes: list[Index] = []
    missing: list[str] = []
    for embedder in built_with:
        wanted = canonical_name(embedder) if embedder else None
        if not strategies:  # nothing built (with that embedder): `choose` says so
            indexes.append(Index.in_store(store, None, built_with=wanted))
        for strategy in strategies:
            index = _open_built(store, strategy, wanted)
            if index is None:
                missing.append(strategy + (f" --embedder {wanted}" if wanted else ""))
            else:
                indexes.append(index)
    if missing:
        raise _not_built(missing, store)
    return indexes


def _not_built(missing: list[str], store: Store) -> CollectionNotFound:
    """The one error naming every collection not built yet, with the command to build them."""
    names = sorted({m.split()[0] for m in missing})
    strategies = [word for s in names for word in ("--strategy", s)]
    return CollectionNotFound(
        f"not built yet: {', '.join(missing)}; run: {store.build_command(*store.catalogue.folders(), *strategies)}"
    )


def _open_built(store: Store, strategy: str, embedder: str | None) -> Index | None:
    """The index of a strategy (built with `embedder`), or None when it is not built."""
    try:
        return Index.in_store(store, strategy, built_with=embedder)
    except CollectionNotFound:
        return None


def corpus_root(questions_path: Path, questions: list[Question], indexes: list[Index]) -> Path:
    """The corpus folder: of the question file's folder and the folders the collections
    were built from, the first that holds most of the documents the first questions name
    (`resolve` then names any question whose document is not there)."""
    named = [q.doc_id for q in questions[:20]]
    candidates = [questions_path.resolve().parent] + [
        Path(s) for i in indexes for s in i.entry.source
    ]
    held = [sum((root / d).exists() for d in named) for root in candidates]
    best = max(range(len(candidates)), key=lambda i: (held[i], -i))
    if named and 2 * held[best] > len(named):
        return candidates[best]
    raise QuestionSetError(
        f"cannot find the documents of {questions_path.name} next to it or where the collections were built from; "
        "pass --corpus DIR"
    )
