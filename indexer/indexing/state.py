"""One strategy's build as a record handed from step to step (`BuildState`): each step —
prepare, plan, stream, finish or check the unchanged version — returns what it did and
the build keeps it here; the new manifest and the report (`report_of`, the one place a
`BuildReport` is filled in) are computed from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..loaders import Discovery, Skipped
from ..store import Entry, FileEntry, Manifest, SkippedEntry
from .chunk_stream import Streamed
from .manifest import with_identities
from .planning import Plan
from .report import BuildReport


@dataclass(frozen=True, kw_only=True)
class Sizes:
    """What a version holds: its files, chunks and their tokens."""

    files: int = 0
    chunks: int = 0
    avg_tokens: float = 0.0
    max_tokens: int = 0

    @classmethod
    def of_files(cls, files: Mapping[str, FileEntry]) -> Sizes:
        """The sizes a manifest's file entries add up to."""
        chunks = sum(f.chunks for f in files.values())
        tokens = sum(f.tokens for f in files.values())
        return cls(
            files=len(files),
            chunks=chunks,
            avg_tokens=tokens / chunks if chunks else 0.0,
            max_tokens=max((f.max_tokens for f in files.values()), default=0),
        )

    @classmethod
    def of_entry(cls, entry: Entry) -> Sizes:
        """The sizes a catalogue entry records."""
        return cls(
            files=entry.files,
            chunks=entry.chunks,
            avg_tokens=entry.avg_tokens,
            max_tokens=entry.max_tokens,
        )


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """The version a build leaves live: written and published, or kept unchanged."""

    collection: str
    generation: int
    sizes: Sizes
    retired: int = 0  # records the new version no longer has


@dataclass(frozen=True, kw_only=True)
class Spent:
    """What a build took: seconds in all and by stage, texts embedded and found cached."""

    seconds: float
    timings: dict[str, float]
    embedded: int
    cache_hits: int


@dataclass(kw_only=True)
class BuildState:
    """One strategy's build so far: what discovery found, what the store's preparation
    removed, the notes of the steps (repairs, the chunker's summary), the plan, what the
    stream wrote, the version left live and what it all took."""

    strategy: str
    embedder: str
    analyzer: str  # described
    found: Discovery
    leftovers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plan: Plan | None = None
    streamed: Streamed | None = None
    outcome: Outcome | None = None
    spent: Spent | None = None

    def planned(self) -> Plan:
        assert self.plan is not None, "a build plans before it writes"
        return self.plan

    def skipped(self) -> list[Skipped]:
        """Files not indexed, and why: turned away by discovery, failing as they did, or
        failing to load now."""
        plan = self.plan.skipped if self.plan is not None else []
        now = self.streamed.skipped.items() if self.streamed is not None else ()
        return [*self.found.skipped, *plan, *(Skipped(d, s.reason) for d, s in now)]

    def warnings(self) -> list[Skipped]:
        """The warnings of the files kept, then of the files loaded now."""
        plan = self.plan.warnings if self.plan is not None else []
        now = self.streamed.warnings() if self.streamed is not None else []
        return [*plan, *now]

    def files(self) -> dict[str, FileEntry]:
        """The new version's file entries: those carried from the live version (not
        removed), then the files streamed, without those that failed to load; each with
        its identity as the plan found it (`with_identities`)."""
        plan, streamed = self.planned(), self.streamed
        files = dict(plan.carried().files)
        if streamed is not None:
            files.update(streamed.files)
            for doc_id in streamed.skipped:
                files.pop(doc_id, None)
        return with_identities(files, plan.stats)

    def manifest(self, settings: dict[str, Any], labels: tuple[str, ...]) -> Manifest:
        """The new version's file manifest."""
        skipped: dict[str, SkippedEntry] = dict(self.planned().carried().skipped)
        if self.streamed is not None:
            skipped.update(self.streamed.skipped)
        return Manifest(settings=settings, labels=list(labels), files=self.files(), skipped=skipped)


def report_of(state: BuildState) -> BuildReport:
    """The build's report, from its state (the one place one is filled in)."""
    plan = state.planned()
    return BuildReport(
        state.strategy,
        state.embedder,
        analyzer=state.analyzer,
        reason=plan.reason,
        skipped=state.skipped(),
        warnings=state.warnings(),
        leftovers_removed=list(state.leftovers),
        notes=list(state.notes),
        unsupported=dict(state.found.unsupported),
        written=state.streamed.written if state.streamed is not None else 0,
        **_counts(plan, state.streamed),
        **_outcome(state.outcome),
        **_spent(state.spent),
    )


def _counts(plan: Plan, streamed: Streamed | None) -> dict[str, Any]:
    """The mode and the files added, changed, removed and unchanged: as planned, less the
    files that failed to load (a file the live version had is then removed)."""
    failed = set(streamed.skipped) if streamed is not None else set()
    dropped = failed & set(plan.previous_files())
    mode = "full" if plan.reason else "incremental"
    return {
        "mode": mode if streamed is not None else "unchanged",
        "added": len(plan.process) - len(plan.changed) - len(failed - dropped),
        "changed": len(plan.changed) - len(dropped),
        "removed": len(plan.removed) + len(dropped),
        "unchanged": len(plan.unchanged),
    }


def _outcome(outcome: Outcome | None) -> dict[str, Any]:
    """The version left live: its name, generation, sizes and what it retired."""
    if outcome is None:
        return {}
    return {
        "collection": outcome.collection,
        "generation": outcome.generation,
        "retired": outcome.retired,
        **vars(outcome.sizes),
    }


def _spent(spent: Spent | None) -> dict[str, Any]:
    return vars(spent) if spent is not None else {}
