"""`indexer gc`: garbage collection over a whole index, to keep one that is rebuilt daily
within the size of one build. Collected: collections no build published (a killed
build's), records of an unpublished generation, superseded records past their grace
period, side files of collections or generations no longer live, and vector-segment
folders that Chroma's own catalogue no longer lists (`gc.py`: in the embedded database,
or in a server's data folder given by path on the server's machine)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from ..errors import LockTimeout
from .entries import GRACE
from .gc import GcReport, folder_size, remove_orphan_segments, vacuum
from .layout import CHROMA
from .store import Store

DOING = "collecting garbage"


def collect(store: Store, grace: float | None = None, chroma_path: Path | None = None,
            on_message: Callable[[str], None] | None = None) -> GcReport:
    """Everything above, for every collection in the index (each under its lease). The
    bytes freed are measured: the index folder (and `chroma_path`) before and after."""
    builds, catalogue = store.builds, store.catalogue
    builds.require_writable(DOING)
    report = GcReport()
    grace = GRACE if grace is None else grace
    say = on_message or (lambda _m: None)
    outside = chroma_path is not None and store.db not in chroma_path.parents
    folders = [store.db] + ([chroma_path] if chroma_path and outside else [])
    before = sum(folder_size(f) for f in folders)
    for entry in catalogue.entries():
        with builds.lease(entry.strategy, entry.embedder, on_wait=say, doing=DOING, action="gc"):
            _, removed = builds.prepare(entry.strategy, entry.embedder, grace)
            report.removed.extend(removed)
    for key, names in builds.physical.unpublished().items():
        strategy, _, embedder = key.rpartition("@")
        try:
            with builds.lease(strategy, embedder, wait=False, doing=DOING):
                for name in names:
                    builds.physical.remove([name])
                    report.add(f"collection {name} (never published)")
        except LockTimeout:
            say(f"skipped {', '.join(names)}: a build of {strategy} ({embedder}) is running")
    in_chroma = len(report.removed)  # versions and collections removed from Chroma
    live = {name for e in catalogue.entries() for name in (e.collection, e.parents, e.delta)}
    side = store.side.root
    if side.is_dir():
        for folder in side.iterdir():
            if folder.is_dir() and folder.name not in live:
                shutil.rmtree(folder, ignore_errors=True)
                report.add(f"side files of {folder.name} (not live)")
    path = chroma_path or (None if store.url else store.db / CHROMA)
    if path is not None and path.is_dir():
        listed = len(report.removed)
        remove_orphan_segments(path, report)
        in_chroma += len(report.removed) - listed
        # a VACUUM rewrites the whole database (minutes at a million chunks): when this
        # run removed something from Chroma, or when what earlier deletions left is worth it
        vacuum(path, report, force=in_chroma > 0)
    report.bytes_freed = max(before - sum(folder_size(f) for f in folders), 0)
    report.measured = [str(f) for f in folders]
    return report
