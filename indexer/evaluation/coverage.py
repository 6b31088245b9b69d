"""Which questions of a set a collection can answer at all: those about documents it
holds. A question set scored against a collection built from other documents would give
every row 0 and say nothing; so a collection holding none of the set's documents is an
error that says what to build, and the questions about documents some collection lacks
are left out of every row (each row is scored on the same questions, so rows stay
comparable), with a warning that counts them. Left out, not counted as misses: a miss
would measure what was built, not how it was cut or searched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..errors import QuestionSetError
from ..retrieval import Index
from .sets import Question


def label(index: Index) -> str:
    """How a collection is named in warnings: `headers (use-m3)`."""
    return f"{index.entry.strategy} ({index.entry.embedder})"


def targets(q: Question) -> list[str]:
    """The documents a question is about (any of them answers it)."""
    return list(q.documents) or [q.doc_id]


def held(index: Index, doc_ids: set[str]) -> set[str]:
    """Those of `doc_ids` the collection holds: the files its version was built from (its
    manifest), or, where this machine has no manifest, a document with a stored record."""
    from ..indexing.manifest import read_manifest

    manifest = read_manifest(index.store, index.entry)
    if manifest is not None:
        return doc_ids & set(manifest.files)
    return {
        d for d in doc_ids if next(iter(index.store.records.scan(index.entry, d)), None) is not None
    }


def absent(questions: list[Question], index: Index) -> list[str]:
    """Ids of the questions none of whose documents the collection holds."""
    have = held(index, {d for q in questions for d in targets(q)})
    return [q.id for q in questions if not any(d in have for d in targets(q))]


class NotInIndex(QuestionSetError):
    """A collection holds none of the documents a question set is about."""

    def __init__(self, path: Path, index: Index, root: Path) -> None:
        self.path, self.root = path, root
        self.collection, self.strategy = label(index), index.entry.strategy
        self.sources = [Path(s) for s in index.entry.source]
        super().__init__(self.describe())

    def describe(self, shown: Callable[[Path], str] = str) -> str:
        """The one line, with paths as `shown` gives them (serve hides absolute ones)."""
        built = ", ".join(shown(s) for s in self.sources) or "elsewhere"
        root = shown(self.root)
        return (
            f"{shown(self.path)}: none of its questions is about a document in {self.collection} (built from "
            f"{built}; the questions are about {root}): build the folder the questions are about "
            f"(indexer build {root} --strategy {self.strategy} --db DIR) and pass --db DIR, "
            "or pass --db of an index built from it"
        )


def covered(
    path: str | os.PathLike,
    questions: list[Question],
    indexes: list[Index],
    root: Path,
    require_fresh: bool = False,
) -> tuple[list[Question], dict[str, list[str]]]:
    """The questions to score — those about documents every collection holds — and, per
    collection lacking some, the ids of the questions it cannot answer. Raises NotInIndex
    when a collection holds none of them; with `require_fresh`, QuestionSetError when
    any is left out."""
    left_out: dict[str, list[str]] = {}
    for index in indexes:
        ids = absent(questions, index)
        if len(ids) == len(questions):
            raise NotInIndex(Path(path), index, root)
        if ids:
            left_out[label(index)] = ids
    out = set(dropped(left_out))
    kept = [q for q in questions if q.id not in out]
    if left_out and require_fresh:
        raise QuestionSetError(
            f"{_lacking(left_out, len(questions))}; build those documents in, or leave "
            f"--require-fresh out to score the other {len(kept)}"
        )
    return kept, left_out


def _lacking(left_out: dict[str, list[str]], total: int) -> str:
    which = " and ".join(
        f"{name} ({len(ids)}: {', '.join(ids[:3])}{' ...' if len(ids) > 3 else ''})"
        for name, ids in left_out.items()
    )
    verb = "does" if len(left_out) == 1 else "do"
    return (
        f"{len(dropped(left_out))} of {total} questions are about documents {which} {verb} not hold"
    )


def dropped(left_out: dict[str, list[str]]) -> list[str]:
    """The ids of every question left out (by any collection), sorted."""
    return sorted({i for ids in left_out.values() for i in ids})


def left_out_warning(left_out: dict[str, list[str]], scored: int) -> str:
    """One line: how many questions were left out, because which collections lack their
    documents, and how many every score is over."""
    total = scored + len(dropped(left_out))
    return (
        f"{_lacking(left_out, total)}; every score is over the other {scored} (build those documents "
        "in to score them all)"
    )
