"""Keep collections in sync with folders: file-system events batched into incremental builds.

    Watcher(["docs"], ["headers"], settings=Settings.load(db=".indexer")).run()
    # blocks; Ctrl-C or stop.set() ends it

Events come from watchfiles (Rust `notify`: inotify, FSEvents, ReadDirectoryChangesW), which
groups them: a batch is handed over once no event came for `debounce_ms`, or `max_delay_ms`
after its first event. Events that arrive while a build runs wait in the watcher and make
the next batch, so a burst (a `git checkout` of 2,000 files) becomes one build or a few.

The first sync hashes every file (an ordinary incremental build, or the first build); it
starts once the watch is established, so no edit in between is lost. Later syncs pass the
changed doc_ids to `build(changed=...)`: only those files are read and hashed, while the
folder walk still finds new and vanished ones (renames and deleted folders included).
Each build takes the strategy's build lease, so a watcher and `indexer build` never
interleave; an interrupted build leaves the previous version live.

Builds keep a collection's BM25 settings (language, stemming, engine) unless the
`BuildOptions` given set others (a field left at its default keeps the collection's), so
watching a collection built by hand never rebuilds it from scratch. A file that
cannot be indexed is reported once (again only after it changes); a failed sync is
reported once per distinct error and retried with a growing pause.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import CollectionNotFound, IndexerError, NothingToIndex, ReadOnlyIndex
from ..loaders.formats import format_of
from ..loaders.paths import IGNORE_FILE
from ..settings import Settings, settings_for
from ..tables import printable
from .building import BuildReport, build
from .events import EventPaths
from .options import BuildOptions

if TYPE_CHECKING:  # the store is opened, and watchfiles imported, when first needed
    from watchfiles import Change

    from ..store import Entry, Store

DEBOUNCE_MS = 100  # quiet time that closes a batch
MAX_DELAY_MS = 1600  # a batch is closed this long after its first event, even if events keep coming
TICK_MS = (
    250  # how often the loop wakes without events (the first sync, retries after a failed one)
)
RETRY_SECONDS = (2, 5, 15, 60)
ANALYZER_KEYS = ("lang", "stem", "fold", "stopwords")
BM25_KEYS = (*ANALYZER_KEYS, "bm25_engine")  # BuildOptions fields a collection keeps


class StopSignal(Protocol):
    """What ends a watch when set (a `threading.Event`)."""

    def is_set(self) -> bool: ...


@dataclass
class Sync:
    """One sync: the build(s) a batch of events started."""

    at: float  # when it ended (epoch seconds)
    seconds: float
    files: int | None  # doc_ids named by the batch (None: the first sync, every file hashed)
    reports: list[BuildReport] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    def to_dict(self) -> dict:
        return {
            "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.at)),
            "seconds": round(self.seconds, 3),
            "files": self.files,
            "error": self.error,
            "reports": [r.to_dict() for r in self.reports],
        }


@dataclass(frozen=True)
class Status:
    """What a status line shows."""

    state: str = (
        "starting"  # starting | syncing | waiting (for another build's lease) | watching | stopped
    )
    pending: int = 0  # files named by the batch being synced, or waiting for a retry
    last_sync: float | None = None  # epoch seconds of the last successful sync
    last_seconds: float = 0.0
    syncs: int = 0
    skipped: int = 0  # files not indexed (bad input), as of the last sync
    error: str = ""  # the last sync's error, if it failed


class Watcher:
    """Watch folders and keep one or more strategies' collections in sync with them.

    `options` go to `indexer.build` as they are (include, exclude, max_file_size,
    max_pdf_pages, encoding, name, wait, on_stage), but `full`, which applies to the
    first sync only, and the BM25 fields (lang, stem, fold, stopwords, bm25_engine): one
    left at its default is the collection's own (else the default). `settings`: where
    the index is and the embedder to build with. `debounce_ms`: the quiet time that
    closes a batch of events; `max_delay_ms`: the longest a batch waits for quiet.
    Callbacks: `on_sync(Sync)` after every sync, `on_message(str)` for one-line notes
    (bad files, errors, waiting for a lease), `on_status(Status)` whenever the status
    changes. `progress` is used by the first sync only (the one that may build
    everything)."""

    def __init__(
        self,
        paths: list[str | os.PathLike],
        strategies: list[str],
        options: BuildOptions | None = None,
        *,
        settings: Settings | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        max_delay_ms: int = MAX_DELAY_MS,
        on_sync: Callable[[Sync], None] | None = None,
        on_message: Callable[[str], None] | None = None,
        on_status: Callable[[Status], None] | None = None,
        progress=None,
    ) -> None:
        if debounce_ms < 1 or max_delay_ms < debounce_ms:
            raise ValueError(
                f"debounce_ms ({debounce_ms}) must be at least 1 and at most max_delay_ms ({max_delay_ms})"
            )
        self.paths = [Path(p) for p in paths]
        self.strategies = list(strategies)
        self.settings = settings_for(settings)
        self.debounce_ms, self.max_delay_ms = debounce_ms, max_delay_ms
        options = options or BuildOptions()
        options.check()
        self.given = bm25_given(options)
        self.full = options.full  # `--full`: the first sync rebuilds from scratch
        self.options = replace(options, full=False)
        self.on_sync = on_sync or (lambda _sync: None)
        self.say = on_message or (lambda _msg: None)
        self.on_status = on_status or (lambda _status: None)
        self.progress = progress
        self.events = EventPaths(
            self.paths, self.settings.db, options.include, options.exclude, self._indexed_under
        )
        self.status = Status()
        self.syncs: list[Sync] = []
        self._changed: set[str] | None = (
            None  # doc_ids named since the last sync; None: hash everything
        )
        self._dirty = True  # a sync is due (the first one, or events that name no doc_id: folders)
        self._failures = 0
        self._retry_at = 0.0
        self._reported: dict[
            tuple[str, str, str], str
        ] = {}  # (kind, doc_id, reason) told -> the file's hash then
        self._store_handle: Store | None = None
        self._errors_told: set[str] = set()

    # -- the loop -------------------------------------------------------------------------
    def run(self, stop: StopSignal | None = None) -> None:
        """Sync, then follow file-system events until `stop` (anything with `is_set()`)
        is set or Ctrl-C. A KeyboardInterrupt during a build propagates (the build has
        left the previous version live); while idle it just ends the loop."""
        import watchfiles

        try:
            for changes in watchfiles.watch(
                *self.events.watched(),
                watch_filter=self.events.relevant,
                debounce=self.max_delay_ms,
                step=self.debounce_ms,
                stop_event=stop,
                rust_timeout=TICK_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                self.take(changes)
                if self._dirty and (
                    changes or not self.syncs or time.monotonic() >= self._retry_at
                ):
                    self.sync()
        finally:
            self._set(state="stopped")

    def take(self, changes: Iterable[tuple[Change, str]]) -> None:
        """Note a batch of (Change, path) events."""
        for change, path in changes:
            rel = self.events.doc_id(path)
            if rel is None:
                continue
            name = rel.rsplit("/", 1)[-1]
            if name == IGNORE_FILE:
                self.events.reload()
            elif format_of(name)[0] is not None and self._changed is not None:
                self._changed.add(rel)
            self._dirty = True
        if changes:
            self._retry_at = 0.0
            self._set(pending=len(self._changed or ()))

    def sync(self) -> Sync:
        """Build what the events since the last sync named (everything the first time)."""
        changed, first = self._changed, not self.syncs
        self._changed, self._dirty = set(), False
        self._set(state="syncing", pending=len(changed) if changed is not None else 0)
        t0 = time.perf_counter()
        try:
            reports = self._build(changed, first)
        except NothingToIndex as exc:  # an empty folder: nothing to do until files appear
            self._report_bad_files(
                {("skipped", item.doc_id, item.reason) for item in exc.skipped}, changed
            )
            result = self._failed(str(exc), t0, changed, retry=False)
        except (IndexerError, OSError) as exc:  # a lost server, a full disk...: told once, retried
            if first and _lasting(exc):
                raise  # a usage error (unknown strategy...) or a read-only index will not heal by waiting
            result = self._failed(str(exc), t0, changed, retry=True)
        else:
            result = self._synced(reports, t0, changed)
        self.syncs.append(result)
        self.on_sync(result)
        return result

    def _synced(self, reports: list[BuildReport], t0: float, changed: set[str] | None) -> Sync:
        """A sync that built: bad files told, the failure count reset, the status updated."""
        result = Sync(
            time.time(),
            time.perf_counter() - t0,
            None if changed is None else len(changed),
            reports,
        )
        self._failures, self._errors_told = 0, set()
        self._report_bad_files(
            {
                (kind, item.doc_id, item.reason)
                for r in reports
                for kind, items in (("skipped", r.skipped), ("warning", r.warnings))
                for item in items
            },
            changed,
        )
        self._set(
            state="watching",
            pending=len(self._changed or ()),
            last_sync=result.at,
            last_seconds=result.seconds,
            syncs=self.status.syncs + 1,
            error="",
            skipped=len({doc for kind, doc, _ in self._reported if kind == "skipped"}),
        )
        return result

    # -- building -------------------------------------------------------------------------
    def _build(self, changed: set[str] | None, first: bool) -> list[BuildReport]:
        reports: list[BuildReport] = []
        for bm25, strategies in self._groups():
            options = replace(self.options, full=self.full, **bm25)
            reports += build(
                self.paths,
                strategies,
                options,
                settings=self.settings,
                changed=changed,
                on_message=self._waiting,
                progress=self.progress if first else None,
            )
        self.full = False  # once every strategy was rebuilt: later syncs are incremental
        return reports

    def _groups(self) -> list[tuple[dict, list[str]]]:
        """Strategies grouped by the BM25 settings their builds take: the ones given,
        else the collection's own (so a collection built by hand is not rebuilt)."""
        from .pipeline import resolve_strategies

        store = self._store()
        specs = resolve_strategies(self.strategies, self.options.name)
        groups: dict[tuple, list[str]] = {}
        for strategy, spec in zip(self.strategies, specs):
            entry = self._built(store, spec.name) if store else None
            options = saved_build_options(entry.extra if entry else {})
            options.update(self.given)
            groups.setdefault(tuple(sorted(options.items())), []).append(strategy)
        return [(dict(key), strategies) for key, strategies in groups.items()]

    def _built(self, store: Store, strategy: str) -> Entry | None:
        """The live entry of `strategy` the builds update: of the embedder named, else
        (auto: chosen per collection) the one there is, or the one chosen by the rule."""
        from ..embeddings import canonical_name

        try:  # the catalogue's one rule for a strategy built with several embedders
            return store.catalogue.find(strategy, canonical_name(None, self.settings))
        except CollectionNotFound:
            return None

    def _store(self) -> Store | None:
        from ..store import Store

        if self._store_handle is None:
            try:
                self._store_handle = Store(self.settings)
            except CollectionNotFound:  # no index yet: the first build creates it
                return None
        return self._store_handle

    def _indexed_under(self, folder: str) -> bool:
        """Whether the live collections hold files under `folder` (a path whose events
        tell nothing else: a deleted folder)."""
        from .manifest import read_manifest

        store = self._store()
        if store is None:
            return False
        prefix = folder.rstrip("/") + "/"
        for entry in store.catalogue.entries():
            manifest = read_manifest(store, entry)
            if manifest is not None and any(d.startswith(prefix) for d in manifest.files):
                return True
        return False

    # -- telling --------------------------------------------------------------------------
    def _failed(self, error: str, t0: float, changed: set[str] | None, retry: bool) -> Sync:
        if retry:  # keep what the batch named for the next attempt
            self._changed = (
                None if changed is None or self._changed is None else changed | self._changed
            )
            self._dirty = True
            self._retry_at = (
                time.monotonic() + RETRY_SECONDS[min(self._failures, len(RETRY_SECONDS) - 1)]
            )
            self._failures += 1
        if error not in self._errors_told:
            self._errors_told.add(error)
            self.say(f"sync failed: {error}" + ("" if retry else "; waiting for changes"))
        self._set(state="watching", pending=len(self._changed or ()), error=error)
        return Sync(
            time.time(),
            time.perf_counter() - t0,
            None if changed is None else len(changed),
            error=error,
        )

    def _report_bad_files(
        self, current: set[tuple[str, str, str]], changed: set[str] | None
    ) -> None:
        """Tell each file that could not be indexed (or was, with a caveat) once: a file
        is told again only when its content changed and it still fails. `current`:
        (skipped | warning, doc_id, reason) of the last sync."""
        told, self._reported = self._reported, {}
        for key in sorted(current, key=lambda x: (x[1], x[0])):
            kind, doc_id, reason = key
            if key in told and changed is not None and doc_id not in changed:
                self._reported[key] = told[key]  # not touched since it was told
                continue
            digest = self._hash(doc_id)
            self._reported[key] = digest
            if told.get(key) != digest:
                self.say(f"{kind} {printable(doc_id)}: {reason}")

    def _hash(self, doc_id: str) -> str:
        from .manifest import file_hash

        path = self.events.path_of(doc_id)
        try:
            return file_hash(path) if path else ""
        except OSError:
            return ""

    def _waiting(self, message: str) -> None:
        self._set(state="waiting")
        self.say(message)

    def _set(self, **changes: Any) -> None:
        self.status = replace(self.status, **changes)
        self.on_status(self.status)


def _lasting(exc: Exception) -> bool:
    """Whether a failed first sync will fail the same way however long it waits: a usage
    error (exit code 2) or a read-only index."""
    return getattr(exc, "exit_code", 1) == 2 or isinstance(exc, ReadOnlyIndex)


def bm25_given(options: BuildOptions) -> dict:
    """The BM25 fields `options` set to other than the defaults: a watched collection
    keeps its own value of every other one."""
    defaults = BuildOptions()
    return {
        k: getattr(options, k) for k in BM25_KEYS if getattr(options, k) != getattr(defaults, k)
    }


def saved_build_options(extra: dict) -> dict:
    """The BM25 build options a collection was built with (from its catalogue entry)."""
    analyzer = extra.get("analyzer") or {}
    options = {k: analyzer[k] for k in ANALYZER_KEYS if k in analyzer}
    if extra.get("bm25_engine"):
        options["bm25_engine"] = extra["bm25_engine"]
    return options


__all__ = [
    "DEBOUNCE_MS",
    "MAX_DELAY_MS",
    "EventPaths",
    "Status",
    "Sync",
    "Watcher",
    "saved_build_options",
]
