"""What one strategy's build did: `BuildReport` (the CLI's table, `build --json`, the
watcher's syncs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..loaders import Skipped


@dataclass
class BuildReport:
    strategy: str
    embedder: str
    collection: str = ""
    mode: str = "full"  # full | incremental | unchanged
    reason: str = ""
    files: int = 0
    chunks: int = 0
    avg_tokens: float = 0.0
    max_tokens: int = 0
    embedded: int = 0  # texts the model computed
    cache_hits: int = 0
    written: int = 0  # records written
    retired: int = 0  # records the new version no longer has (incremental builds)
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    generation: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[Skipped] = field(default_factory=list)
    leftovers_removed: list[str] = field(default_factory=list)
    analyzer: str = ""
    notes: list[str] = field(default_factory=list)  # what the strategy itself reports (LLM cost...)
    # file types not indexed, by extension
    unsupported: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["skipped"] = [{"doc_id": s.doc_id, "reason": s.reason} for s in self.skipped]
        data["warnings"] = [{"doc_id": s.doc_id, "reason": s.reason} for s in self.warnings]
        data["timings"] = {k: round(v, 3) for k, v in self.timings.items()}
        data["seconds"] = round(self.seconds, 3)
        data["avg_tokens"] = round(self.avg_tokens, 1)
        return data
