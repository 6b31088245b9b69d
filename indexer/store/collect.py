"""`indexer gc`: garbage collection over a whole index, to keep one that is rebuilt daily
within the size of one build. Collected: collections no build published (a killed
build's), records of an unpublished generation, superseded records past their grace
period, side files of collections or generations no longer live, temporary files a
killed writer left (`gc.remove_temporaries`), and vector-segment
folders that Chroma's own catalogue no longer lists (`gc.py`: in the embedded database,
or in a server's data folder given by path on the server's machine)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from ..errors import LockTimeout
from .entries import GRACE
from .gc import GcReport, folder_size, remove_orphan_segments, remove_temporaries, vacuum
from .layout import CHROMA
from .store import Store

DOING = "collecting garbage"


def collect(
    store: Store,
    grace: float | None = None,
    chroma_path: Path | None = None,
    on_message: Callable[[str], None] | None = None,
) -> GcReport:
    """Everything above, for every collection in the index (each under its lease). The
    bytes freed are measured: the index folder (and `chroma_path`) before and after."""
    store.builds.require_writable(DOING)
    report = GcReport()
    say = on_message or (lambda _m: None)
    folders = _measured_folders(store, chroma_path)
    before = sum(folder_size(f) for f in folders)
    _prepare_entries(store, GRACE if grace is None else grace, say, report)
    _remove_unpublished(store, say, report)
    in_chroma = len(report.removed)  # versions and collections removed from Chroma
    _remove_dead_side_files(store, report)
    path = _chroma_folder(store, chroma_path)
    if path is not None:
        _collect_chroma_folder(path, report, in_chroma)
    report.bytes_freed = max(before - sum(folder_size(f) for f in folders), 0)
    report.measured = [str(f) for f in folders]
    return report


def _measured_folders(store: Store, chroma_path: Path | None) -> list[Path]:
    """The index folder, and a Chroma data folder given outside it."""
    outside = chroma_path is not None and store.db not in chroma_path.parents
    return [store.db] + ([chroma_path] if chroma_path and outside else [])


def _chroma_folder(store: Store, chroma_path: Path | None) -> Path | None:
    """Chroma's data folder on this machine: the one given, else the embedded database's
    (None with a server and none given, or when it is not there)."""
    path = chroma_path or (None if store.url else store.db / CHROMA)
    return path if path is not None and path.is_dir() else None


def _prepare_entries(
    store: Store, grace: float, say: Callable[[str], None], report: GcReport
) -> None:
    """Each live entry's clean-up before a build (`Builds.prepare`) and the temporary files
    left in its side folders, under its lease (no build of it writes meanwhile)."""
    builds = store.builds
    for entry in store.catalogue.entries():
        with builds.lease(entry.strategy, entry.embedder, on_wait=say, doing=DOING, action="gc"):
            _, removed = builds.prepare(entry.strategy, entry.embedder, grace)
            report.removed.extend(removed)
            for name in filter(None, (entry.collection, entry.parents, entry.delta)):
                remove_temporaries(store.side.folder(name), report)
    remove_temporaries(store.db, report, deep=False)  # the marker's


def _remove_unpublished(store: Store, say: Callable[[str], None], report: GcReport) -> None:
    """The collections no build published (a killed build's), unless a build of their
    key is running now."""
    builds = store.builds
    for key, names in builds.physical.unpublished().items():
        strategy, _, embedder = key.rpartition("@")
        try:
            with builds.lease(strategy, embedder, wait=False, doing=DOING):
                for name in names:
                    builds.physical.remove([name])
                    report.add(f"collection {name} (never published)")
        except LockTimeout:
            say(f"skipped {', '.join(names)}: a build of {strategy} ({embedder}) is running")


def _remove_dead_side_files(store: Store, report: GcReport) -> None:
    """Side folders of collections no live entry names."""
    live = {name for e in store.catalogue.entries() for name in (e.collection, e.parents, e.delta)}
    side = store.side.root
    if not side.is_dir():
        return
    for folder in side.iterdir():
        if folder.is_dir() and folder.name not in live:
            shutil.rmtree(folder, ignore_errors=True)
            report.add(f"side files of {folder.name} (not live)")


def _collect_chroma_folder(path: Path, report: GcReport, in_chroma: int) -> None:
    """Orphan vector segments in Chroma's data folder, then its catalogue compacted."""
    listed = len(report.removed)
    remove_orphan_segments(path, report)
    in_chroma += len(report.removed) - listed
    # a VACUUM rewrites the whole database (minutes at a million chunks): when this
    # run removed something from Chroma, or when what earlier deletions left is worth it
    vacuum(path, report, force=in_chroma > 0)
