"""What a build must do (`plan`): compare the files found with the file manifest of the
live version; a first build, a changed setting or `full` rebuilds everything, else only
new and changed files are processed and vanished ones removed."""

from __future__ import annotations

from dataclasses import dataclass

from ..loaders import Skipped, SourceFile
from ..store import Entry
from .estimates import Timer
from .job import BuildJob
from .manifest import content_hash, identity, read_manifest, trusted_hashes, why_full
from .report import BuildReport


@dataclass
class Plan:
    reason: str  # why the whole collection is rebuilt ("" for an incremental build)
    process: list[SourceFile]  # new and changed files
    unchanged: list[str]
    removed: list[str]
    hashes: dict[str, str]
    stats: dict[str, list[int] | None]  # each file's identity, taken before reading it
    manifest: dict | None

    def previous_manifest(self) -> dict:
        """The live version's manifest, which an incremental plan has (`plan_build` plans a
        full build when it is missing or unreadable)."""
        assert self.manifest is not None, (
            "an incremental build plan has the live version's manifest"
        )
        return self.manifest


def _reason(
    job: BuildJob, old: Entry | None, manifest: dict | None, wanted: dict, report: BuildReport
) -> str:
    """Why the whole collection is rebuilt, or "" (an incremental build)."""
    if job.options.full:
        return "--full"
    if old is None:
        return _first_build(job, report)
    if manifest is None:
        return "no readable file manifest beside the previous version"
    if {k: v for k, v in manifest["settings"].items() if k in wanted} != wanted:
        return why_full(manifest["settings"], wanted)
    return ""


def _first_build(job: BuildJob, report: BuildReport) -> str:
    """Why a strategy's first build with this embedder is a full one (the others kept)."""
    others = [e.embedder for e in job.store.catalogue.entries() if e.strategy == report.strategy]
    if others:
        return f"first build with {report.embedder} (kept: {', '.join(others)})"
    return "first build"


def plan_build(
    job: BuildJob,
    old: Entry | None,
    wanted: dict,
    report: BuildReport,
    timer: Timer,
    changed: set[str] | None = None,
) -> Plan:
    """The plan of one strategy's build against its live version `old`; `wanted`: the
    build settings (`build_settings`) the new version has. Counts what it found in
    `report` (added, changed, removed, unchanged; the warnings and skips of files kept)."""
    manifest = read_manifest(job.store, old) if old else None
    reason = _reason(job, old, manifest, wanted, report)
    trusted = trusted_hashes(manifest, changed) if not reason else {}
    with timer("hash"):
        stats, hashes = _hash(job.found.files, trusted)
    by_id = {src.doc_id: src for src in job.found.files}
    if reason or manifest is None:
        return Plan(reason, list(by_id.values()), [], [], hashes, stats, None)
    process, unchanged = _compare(by_id, hashes, manifest, report)
    removed = [d for d in manifest["files"] if d not in by_id]
    report.removed, report.unchanged = len(removed), len(unchanged)
    return Plan("", process, unchanged, removed, hashes, stats, manifest)


def _hash(
    files: list[SourceFile],
    trusted: dict[str, tuple[str, int | list | None]],
) -> tuple[dict[str, list[int] | None], dict[str, str]]:
    """Each file's identity (taken before reading it) and content hash (`trusted`: the
    hashes `trusted_hashes` lets a file keep without reading it)."""
    stats = {src.doc_id: identity(src.path) for src in files}
    return stats, {src.doc_id: content_hash(src, trusted, stats[src.doc_id]) for src in files}


def _compare(
    by_id: dict[str, SourceFile], hashes: dict[str, str], manifest: dict, report: BuildReport
) -> tuple[list[SourceFile], list[str]]:
    """(files to process, doc_ids unchanged) against the live version's manifest: a file
    with the hash it had is kept (with its warnings), one that failed as it does now stays
    skipped (with its reason), any other is added or changed."""
    old_files: dict[str, dict] = manifest["files"]
    old_skipped: dict[str, dict] = manifest.get("skipped", {})
    process, unchanged = [], []
    for doc_id, src in by_id.items():
        h = hashes[doc_id]
        if h and old_files.get(doc_id, {}).get("hash") == h:
            unchanged.append(doc_id)
            warnings = old_files[doc_id].get("warnings", ())
            report.warnings.extend(Skipped(doc_id, w) for w in warnings)
        elif h and old_skipped.get(doc_id, {}).get("hash") == h:
            reason_then = old_skipped[doc_id].get("reason", "skipped")
            report.skipped.append(Skipped(doc_id, reason_then))
        else:
            process.append(src)
            if doc_id in old_files:
                report.changed += 1
            else:
                report.added += 1
    return process, unchanged
