"""What a build must do (`plan`): compare the files found with the file manifest of the
live version; a first build, a changed setting or `full` rebuilds everything, else only
new and changed files are processed and vanished ones removed."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..loaders import Skipped, SourceFile
from ..store import Entry, FileEntry, Manifest, SkippedEntry
from .estimates import Timer
from .job import BuildJob
from .manifest import content_hash, identity, read_manifest, trusted_hashes, why_full


@dataclass(kw_only=True)
class Plan:
    """What one strategy's build must do, and what it found doing so."""

    reason: str  # why the whole collection is rebuilt ("" for an incremental build)
    process: list[SourceFile]  # new and changed files
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)  # those of `process` the live version has
    hashes: dict[str, str] = field(default_factory=dict)
    stats: dict[str, list[int] | None] = field(default_factory=dict)  # identities, before reading
    manifest: Manifest | None = None  # the live version's (an incremental plan's)
    warnings: list[Skipped] = field(default_factory=list)  # of the unchanged files
    skipped: list[Skipped] = field(default_factory=list)  # files failing as they did

    def nothing_to_do(self) -> bool:
        """Whether the live version stays as it is: an incremental plan with no file to
        process and none removed."""
        return not self.reason and not self.process and not self.removed

    def previous_files(self) -> dict[str, FileEntry]:
        """The live version's file entries an incremental plan starts from (none for a full
        plan)."""
        return self.manifest.files if self.manifest is not None else {}

    def carried(self) -> Carried:
        """The manifest's files and skipped files an incremental build starts from (a full
        build: none): the files not removed, and the files still failing as they did (each
        keeps its reason)."""
        if self.manifest is None:
            return Carried(files={}, skipped={})
        skipped = {
            d: s
            for d, s in self.manifest.skipped.items()
            if s.hash and self.hashes.get(d) == s.hash
        }
        removed = set(self.removed)
        files = {d: f for d, f in self.manifest.files.items() if d not in removed}
        return Carried(files=files, skipped=skipped)


@dataclass(frozen=True)
class Carried:
    """A manifest's tables as an incremental build starts from them."""

    files: dict[str, FileEntry]
    skipped: dict[str, SkippedEntry]


def _reason(
    job: BuildJob, strategy: str, old: Entry | None, manifest: Manifest | None, wanted: dict
) -> str:
    """Why the whole collection is rebuilt, or "" (an incremental build)."""
    if job.options.full:
        return "--full"
    if old is None:
        return _first_build(job, strategy, wanted["embedder"])
    if manifest is None:
        return "no readable file manifest beside the previous version"
    if {k: v for k, v in manifest.settings.items() if k in wanted} != wanted:
        return why_full(manifest.settings, wanted)
    return ""


def _first_build(job: BuildJob, strategy: str, embedder: str) -> str:
    """Why a strategy's first build with this embedder is a full one (the others kept)."""
    others = [e.embedder for e in job.store.catalogue.entries() if e.strategy == strategy]
    if others:
        return f"first build with {embedder} (kept: {', '.join(others)})"
    return "first build"


def plan_build(
    job: BuildJob,
    strategy: str,
    old: Entry | None,
    wanted: dict,
    timer: Timer,
    changed: set[str] | None = None,
) -> Plan:
    """The plan of `strategy`'s build against its live version `old`; `wanted`: the build
    settings (`build_settings`) the new version has. Says what it found: the files added,
    changed, removed and unchanged; the warnings and skips of the files kept."""
    manifest = read_manifest(job.store, old) if old else None
    reason = _reason(job, strategy, old, manifest, wanted)
    trusted = trusted_hashes(manifest, changed) if not reason else {}
    with timer("hash"):
        stats, hashes = _hash(job.found.files, trusted)
    by_id = {src.doc_id: src for src in job.found.files}
    if reason or manifest is None:
        return Plan(reason=reason, process=list(by_id.values()), hashes=hashes, stats=stats)
    plan = Plan(reason="", process=[], hashes=hashes, stats=stats, manifest=manifest)
    _compare(by_id, plan)
    plan.removed = [d for d in manifest.files if d not in by_id]
    return plan


def _hash(
    files: list[SourceFile],
    trusted: dict[str, tuple[str, int | list | None]],
) -> tuple[dict[str, list[int] | None], dict[str, str]]:
    """Each file's identity (taken before reading it) and content hash (`trusted`: the
    hashes `trusted_hashes` lets a file keep without reading it)."""
    stats = {src.doc_id: identity(src.path) for src in files}
    return stats, {src.doc_id: content_hash(src, trusted, stats[src.doc_id]) for src in files}


def _compare(by_id: dict[str, SourceFile], plan: Plan) -> None:
    """Fill an incremental `plan` against the live version's manifest: a file with the hash
    it had is kept (with its warnings), one that failed as it does now stays skipped (with
    its reason), any other is added or changed."""
    old_files = plan.previous_files()
    old_skipped = plan.manifest.skipped if plan.manifest is not None else {}
    for doc_id, src in by_id.items():
        h = plan.hashes[doc_id]
        kept, failed = old_files.get(doc_id), old_skipped.get(doc_id)
        if _same(h, kept):
            plan.unchanged.append(doc_id)
            plan.warnings.extend(Skipped(doc_id, w) for w in old_files[doc_id].warnings)
        elif _same(h, failed) and failed is not None:
            plan.skipped.append(Skipped(doc_id, failed.reason))
        else:
            plan.process.append(src)
            if kept is not None:
                plan.changed.add(doc_id)


def _same(content: str, known: FileEntry | SkippedEntry | None) -> bool:
    """Whether a file's content hash is the one its manifest entry records."""
    return bool(content) and known is not None and known.hash == content
