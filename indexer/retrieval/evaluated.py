"""What the last evaluation ranked best, kept in the catalogue: a call naming no strategy
over an index with several reads it (`collections.choose`).

`indexer eval` over two or more collections records its ranking (each collection's MRR@10
in the mode a search naming none uses on it, else its best mode; best first) on every
collection it evaluated, in the
catalogue entry (`Entry.extra["evaluated"]`, written under each one's build lease as `tune
--save` writes its settings; a rebuild keeps it). The newest record among the live entries
is the last evaluation; the first of its collections still built is its best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from ..errors import IndexerError, LockTimeout
from ..store import Entry, Store

KEY = "evaluated"  # the catalogue entry's field (`Entry.extra`) the record is kept in
METRIC = "mrr@10"


@dataclass(frozen=True)
class Placing:
    """One collection's place in an evaluation: its MRR@10 in a mode (the one a search
    naming none uses on it, when evaluated)."""

    strategy: str
    embedder: str
    score: float
    mode: str = ""


@dataclass(frozen=True)
class Best:
    """The live collection the last evaluation ranked best, and the words that say so."""

    entry: Entry
    why: str


def record_ranking(store: Store, ranking: Sequence[Placing], questions: str) -> list[str]:
    """Keep `ranking` (best first) as the last evaluation, on each collection it names; the
    one-line reasons it could not be kept on some (a read-only index, a build running)."""
    record = {
        "at": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        "questions": questions,
        "metric": METRIC,
        "ranking": [asdict(p) for p in ranking],
    }
    problems = []
    for placing in ranking:
        try:
            _keep(store, placing, record)
        except LockTimeout:
            problems.append(f"{placing.strategy} ({placing.embedder}): a build of it is running")
        except IndexerError as exc:
            problems.append(str(exc))
    return problems


def _keep(store: Store, placing: Placing, record: dict[str, Any]) -> None:
    """The record on one live entry (gone since: nothing to keep it on)."""
    name, embedder = placing.strategy, placing.embedder
    doing = "recording the evaluation's ranking"
    with store.builds.lease(name, embedder, wait=False, doing=doing):
        entry = store.catalogue.find_or_none(name, embedder)
        if entry is not None:
            entry.extra[KEY] = record
            store.catalogue.publish(entry)


def last_best(entries: Sequence[Entry]) -> Best | None:
    """Of `entries`, the first the newest evaluation record ranks (None: no record, or
    none of its collections is among them)."""
    records = [r for r in (_record(e) for e in entries) if r is not None]
    if not records:
        return None
    record = max(records, key=lambda r: r["at"])
    live = {(e.strategy, e.embedder): e for e in entries}
    for placing in record["ranking"]:
        entry = live.get((placing.get("strategy"), placing.get("embedder")))
        if entry is not None:
            return Best(entry, _why(record, placing))
    return None


def _record(entry: Entry) -> dict[str, Any] | None:
    """An entry's evaluation record, None when it has none (or a damaged one)."""
    record = entry.extra.get(KEY)
    if not isinstance(record, dict) or not isinstance(record.get("at"), str):
        return None
    ranking = record.get("ranking")
    if not isinstance(ranking, list) or not all(isinstance(p, dict) for p in ranking):
        return None
    return record


def _why(record: dict[str, Any], placing: dict[str, Any]) -> str:
    """How a front door says why: `ranked best by the last evaluation (questions.jsonl,
    2025-06-01 12:03 UTC: MRR@10 0.880, hybrid)`."""
    when = record["at"][:16].replace("T", " ")
    score, mode = placing.get("score"), placing.get("mode")
    value = f": MRR@10 {score:.3f}" if isinstance(score, (int, float)) else ""
    value += f", {mode}" if value and isinstance(mode, str) and mode else ""
    return f"ranked best by the last evaluation ({record.get('questions', '?')}, {when} UTC{value})"


__all__ = ["KEY", "Best", "Placing", "last_best", "record_ranking"]
