"""Question sets made on demand for `eval --generate N`, `tune --generate N` and serve's
Evaluation view: made from the documents the collections were built from (or the folder
given as `corpus`), kept beside the index (`<db>/questions/`), and reused while the
documents' contents and the generator's settings are unchanged (`cached_questions`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import QuestionSetError, UsageError
from ..settings import Settings
from ..store import Store, questions_folder
from .generate import QuestionSet
from .reuse import cached_questions, pooled

# `--generate` without N: up to this many questions from each of SEEDS made-up sets (seeds
# seed .. seed + SEEDS - 1), pooled; about a second a set to make. One run's best row was
# within 0.02 MRR@10 of the real best in 15 of 18 runs with these, 12 of 18 with one set as
# big as the sets' own (`python -m bench.questions_agreement --sets
# tr,en,code,pdf,xquad-tr,xquad-en --stability 3`; README "Made-up questions").
QUESTIONS = 200
SEEDS = 3


# What a reader of scores on made-up questions must know (docs/results.md, "Made-up
# questions: do they choose like real ones?").
CAVEAT = (
    "made-up questions reuse the documents' words: trust them to order strategies within bm25 and "
    "within hybrid, not among the embedding rows, nor to judge bm25 against the embedding (they "
    "favour bm25); choose the mode on real questions"
)


@dataclass
class Generated:
    """A made-up question file and where it came from; `made` is None when an earlier
    file was reused."""

    path: Path
    roots: list[Path]
    made: QuestionSet | None
    seeds: int = 1  # made-up sets pooled in `path`

    @property
    def reused(self) -> bool:
        return self.made is None

    @property
    def count(self) -> int:
        return sum(1 for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip())

    def describe(self, shown: Callable[[Path], str] = str) -> str:
        """One line for the user: made or reused, how many, from where, kept where."""
        where = ", ".join(shown(r) for r in self.roots)
        made = self.made
        if made is None:
            return (
                f"reused {self.count} made-up questions from {where} (the documents are unchanged), "
                f"kept in {shown(self.path)}"
            )
        sets = (
            f" ({self.seeds} sets of seeds {made.seed}-{made.seed + self.seeds - 1}, pooled)"
            if self.seeds > 1
            else ""
        )
        return (
            f"made {len(made.questions)} questions{sets} from {made.documents} document(s) in {where} in "
            f"{made.seconds:.1f}s, kept in {shown(self.path)} and reused while the documents are unchanged"
        )


def documents_of(
    strategies: list[str], settings: Settings, built_with: str | None = None
) -> list[Path]:
    """The folders the named collections were built from (they must agree)."""
    from ..retrieval.collections import choose

    store = Store(settings)
    sources: dict[tuple[str, ...], list[str]] = {}
    names: list[str | None] = list(strategies) or [None]
    for strategy in names:  # none: the one a call naming none reads
        entry = choose(store, strategy, built_with)
        sources.setdefault(tuple(entry.source), []).append(entry.strategy)
    if len(sources) > 1:
        listing = "; ".join(
            f"{', '.join(names)} from {', '.join(src)}" for src, names in sources.items()
        )
        raise UsageError(
            f"the collections were built from different folders ({listing}); "
            "pass --corpus DIR to choose the documents to ask about"
        )
    roots = [Path(p) for p in next(iter(sources))]
    gone = [str(r) for r in roots if not r.exists()]
    if gone:
        raise QuestionSetError(
            f"the documents the collections were built from are gone ({', '.join(gone)}); "
            "pass --corpus DIR"
        )
    return roots


def generated_questions(
    n: int,
    strategies: list[str],
    *,
    settings: Settings,
    built_with: str | None = None,
    corpus: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    seed: int = 0,
    seeds: int = SEEDS,
    llm: str = "extractive",
) -> Generated:
    """`n` made-up questions from each of `seeds` sets (seeds `seed`, `seed` + 1, ...),
    pooled in one file, over the documents of `strategies`' collections (or `corpus`: a
    folder, or the folders a collection was built from), made now or reused from
    `<db>/questions/`. Fewer than `n` a set when the documents hold fewer passages worth a
    question (`made.shortfall` says so); none is an error. The front doors (eval, tune,
    serve) pass their resolved settings."""
    if seeds < 1:
        raise UsageError(f"the number of made-up sets must be at least 1, not {seeds}")
    if corpus is None:
        roots = documents_of(strategies, settings, built_with)
    else:
        roots = _folders(corpus)
    folder = questions_folder(settings.db)
    parts = [
        cached_questions(roots, n, folder=folder, seed=s, llm=llm, settings=settings)
        for s in range(seed, seed + seeds)
    ]
    for _, made in parts:
        _check_made(made)
    if seeds == 1:
        return Generated(parts[0][0], roots, parts[0][1])
    path, made = pooled(parts, folder, seed)
    return Generated(path, roots, made, seeds)


def _folders(corpus: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """`--corpus`: one folder or several."""
    if isinstance(corpus, (str, os.PathLike)):
        return [Path(corpus)]
    return [Path(c) for c in corpus]


def _check_made(made: QuestionSet | None) -> None:
    """A set made now must hold a question (a reused one does)."""
    if made is not None and not made.questions:
        notes = "".join(f" ({x})" for x in made.notes)
        raise QuestionSetError(f"no questions made: {made.shortfall}" + notes)
