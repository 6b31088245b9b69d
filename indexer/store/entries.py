"""The catalogue's records (`Entry`): which physical collection (and which generation of
it) is live for each (strategy, embedder), with what it was built from and how to search
it. `catalogue.py` reads and writes them."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

PREFIX = "ix-"  # physical collections: ix-<strategy>--<embedder>--<stamp> (and -p, -d companions)
GRACE = 60.0  # seconds a superseded record stays readable for readers still on the previous version


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-._") or "x"


def entry_key(strategy: str, embedder: str) -> str:
    return f"{strategy}@{embedder}"


def name_prefix(strategy: str, embedder: str) -> str:
    """What the names of a key's physical collections start with (a stamp follows)."""
    return f"{PREFIX}{slug(strategy)}--{slug(embedder)}--"


def superseded(pending: list[dict[str, Any]], field_: str, revived: str) -> set[str]:
    """Ids the `pending` generations superseded and did not write again since: a
    generation retires ids, a later one may write the same ids again (a file deleted then
    restored, an edit undone: chunk ids follow content), which takes them off the list."""
    out: set[str] = set()
    for p in sorted(pending, key=lambda p: p.get("gen", 0)):
        out -= set(p.get(revived, ()))
        out |= set(p.get(field_, ()))
    return out


@dataclass
class Entry:
    """A live collection as the catalogue records it.

    `generation` counts published versions: records carry the generation that wrote them,
    and an incremental build adds the next generation's records beside the live ones,
    which readers ignore until the entry says so. `pending` lists records (and parent
    records) that a published generation superseded; they are deleted once no reader can
    still be on the generation before (after a grace period)."""

    strategy: str
    embedder: str
    collection: str
    dimension: int
    kind: str
    params: dict[str, Any]
    tokenizer: str
    version: str
    built_at: str
    source: list[str]
    files: int = 0
    chunks: int = 0
    avg_tokens: float = 0.0
    max_tokens: int = 0
    parents: str = ""  # companion collection holding parent chunks (parent-child strategies)
    delta: str = ""  # companion collection incremental builds of a large collection write into (delta.DELTA_FROM)
    build_seconds: float = 0.0
    generation: int = 1
    # [{"at", "gen", "ids", "parents", "revived"...}]
    pending: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return entry_key(self.strategy, self.embedder)

    @property
    def record_collections(self) -> list[str]:
        """The collections holding this version's records: its own, then its delta's."""
        return [self.collection] + ([self.delta] if self.delta else [])

    @property
    def pending_ids(self) -> set[str]:
        return superseded(self.pending, "ids", "revived")

    @property
    def pending_parents(self) -> set[str]:
        return superseded(self.pending, "parents", "revived_parents")

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Entry:
        data = json.loads(text)
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})
