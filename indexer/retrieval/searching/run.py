"""One search of a collection's version (`Index.search`): the steps of `steps.STEPS` run in
order over a `Pass` record, started over deeper while a step asks for it (too few
distinct texts, or too few distinct parents, among the candidates).

Every side is searched to at least `candidates` and ties are broken by document and
position, so the top 5 is always the prefix of the top 10. A text comes back once
(`hits.distinct`: its other documents in `same_text`), and scores never rise down the
list (`ranking.in_rank_order`). Parent-child collections are ranked at child level, then
mapped to their parents, duplicates dropped keeping the best rank (`hits.to_parents`).
"""

from __future__ import annotations

from dataclasses import replace

from ...types import Hit
from ..options import ResolvedOptions
from . import steps
from .snapshot import Snapshot
from .steps import Pass


def search(snapshot: Snapshot, query: str, options: ResolvedOptions) -> list[Hit]:
    """The top k hits of `query` under resolved `options` in one version, best first."""
    return run(steps.start(query, options, snapshot)).hits


def run(first: Pass) -> Pass:
    """`first` through every step of `steps.STEPS`; when a step asks for another pass
    (`Pass.again`), the list starts over at the depth it asked for."""
    current = first
    while True:
        for step in steps.STEPS:
            current = step(current)
            if current.again is not None:
                break
        if current.again is None:
            return current
        current = replace(first, depth=current.again)
