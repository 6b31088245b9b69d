"""An evaluation's ranking of the collections it scored, kept as the last evaluation: a
call naming no strategy then reads the best (`retrieval.collections.choose`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..retrieval import DEFAULTS, resolve
from ..retrieval.evaluated import Placing, record_ranking
from ..settings import Settings
from ..store import Store
from .run import Evaluation, Row


@dataclass(frozen=True)
class KeptRanking:
    """What `keep_ranking` kept: the best collection (None: fewer than two were scored, or
    the ranking could be kept on none) and the one-line reasons it was not kept on some."""

    best: Placing | None = None
    problems: list[str] = field(default_factory=list)


def placings(
    result: Evaluation, modes: Mapping[tuple[str, str], str] | None = None
) -> list[Placing]:
    """Each collection's MRR@10 in the mode a search naming none uses on it (`modes`:
    (strategy, embedder) -> mode, else the default mode), or its best over the modes
    evaluated when that one was not; best first, equal ones in the table's order."""
    rows: dict[tuple[str, str], list[Row]] = {}
    for row in result.rows:
        rows.setdefault((row.strategy, row.embedder), []).append(row)
    default = DEFAULTS.mode or ""
    ranked = [_placing(own, (modes or {}).get(key, default)) for key, own in rows.items()]
    return sorted(ranked, key=lambda p: -p.score)


def _placing(rows: list[Row], mode: str) -> Placing:
    """One collection's placing: its row in `mode`, else its best row."""
    row = next((r for r in rows if r.mode == mode), None) or max(rows, key=lambda r: r.mrr)
    return Placing(row.strategy, row.embedder, round(row.mrr, 4), row.mode)


def keep_ranking(result: Evaluation, questions: str, settings: Settings) -> KeptRanking:
    """Record the ranking of an evaluation of two or more collections in the index they
    live in (`retrieval.evaluated.record_ranking`), named after its question file."""
    store = Store(settings)
    modes = {
        (e.strategy, e.embedder): resolve(None, e.extra.get("search"), e.embedder).mode or ""
        for e in store.catalogue.entries()
    }
    ranking = placings(result, modes)
    if len(ranking) < 2:
        return KeptRanking()
    problems = record_ranking(store, ranking, Path(questions).name)
    kept = len(problems) < len(ranking)  # on one collection is enough: choose reads them all
    return KeptRanking(ranking[0] if kept else None, list(dict.fromkeys(problems)))


__all__ = ["KeptRanking", "keep_ranking", "placings"]
