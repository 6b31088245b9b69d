"""`indexer watch`: real file-system events in a temp folder become incremental builds, and
after each batch settles the collection equals a from-scratch build of the folder.
Builds share the lease with `indexer build`; Ctrl-C in the middle of a sync leaves a
complete version live; a bad file is told once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.indexing.watching import EventPaths, Watcher
from indexer.retrieval import Index
from indexer.settings import Settings
from tests.conftest import CORPUS, ROOT, open_store
from tests.faultkit import interruptible

DOCS = ["kargo-ve-teslimat.md", "hediye-kartlari.md", "iade-ve-geri-odeme.md"]
QUIET = 0.4  # seconds without a new sync that count as settled (batches close after 50 ms of quiet)


def make_corpus(path):
    path.mkdir(parents=True, exist_ok=True)
    for name in DOCS:
        shutil.copy(CORPUS / name, path / name)
    return path


class Running:
    """A Watcher on a background thread, with what it said."""

    def __init__(self, corpus, db, **kw) -> None:
        self.messages: list[str] = []
        self.watcher = Watcher([corpus], ["headers"], BuildOptions(**kw), settings=Settings.load(db=db), debounce_ms=50,
                               max_delay_ms=1000, on_message=self.messages.append)
        self.stop = threading.Event()
        self.interrupted = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.watcher.run(self.stop)
        except KeyboardInterrupt:
            self.interrupted = True

    def settle(self, before: int, timeout: float = 60) -> list:
        """Wait for a sync after the first `before` ones, then for quiet; the new syncs."""
        w = self.watcher
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            n = len(w.syncs)
            if n > before and w.status.state == "watching":
                time.sleep(QUIET)
                if len(w.syncs) == n and w.status.state == "watching":
                    return w.syncs[before:]
            else:
                time.sleep(0.05)
        raise AssertionError(f"no settled sync after {before} within {timeout}s: {w.status}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


@pytest.fixture
def running(tmp_path):
    started = []

    def start(corpus, db, **kw):
        started.append(Running(corpus, db, **kw))
        return started[-1]

    yield start
    for r in started:
        r.close()


def records(db, strategy="headers"):
    return sorted((c.id, c.doc_id, c.start, c.text) for c in Index.open(strategy, settings=Settings.load(db=db)).chunks())


def assert_equals_fresh_build(corpus, db, ref):
    """The live collection holds what a from-scratch build of the folder holds."""
    build([corpus], ["headers"], BuildOptions(full=True), settings=Settings.load(db=ref))
    assert records(db) == records(ref)


def test_create_edit_rename_delete_each_end_equal_to_a_fresh_build(tmp_path, running):
    corpus, db, ref = make_corpus(tmp_path / "docs"), tmp_path / "db", tmp_path / "ref"
    r = running(corpus, db)
    [first] = r.settle(0)
    assert first.ok and first.files is None and first.reports[0].mode == "full"
    assert_equals_fresh_build(corpus, db, ref)

    steps = [
        ("create", lambda: (corpus / "yeni.md").write_text("# Yeni\n\nYeni bir belge.\n", encoding="utf-8")),
        ("edit", lambda: (corpus / DOCS[0]).write_text((CORPUS / DOCS[0]).read_text(encoding="utf-8")
                                                     + "\n## Ek Bölüm\n\nKargo sigortası 10.000 TL'ye kadardır.\n",
                                                     encoding="utf-8")),
        ("rename", lambda: os.rename(corpus / DOCS[1], corpus / "hediye.md")),
        ("delete", lambda: (corpus / DOCS[2]).unlink()),
        ("folder in", lambda: (shutil.copytree(corpus, tmp_path / "sub", ignore=shutil.ignore_patterns("y*")),
                               os.rename(tmp_path / "sub", corpus / "alt"))),
        ("folder out", lambda: os.rename(corpus / "alt", tmp_path / "gone")),
    ]
    for name, act in steps:
        before = len(r.watcher.syncs)
        act()
        syncs = r.settle(before)
        assert all(s.ok for s in syncs), (name, [s.error for s in syncs])
        assert {rep.mode for s in syncs for rep in s.reports} <= {"incremental", "unchanged"}, name
        assert_equals_fresh_build(corpus, db, ref)
    assert r.messages == []


def test_only_the_named_files_are_hashed(tmp_path, running, monkeypatch):
    import indexer.indexing.manifest as manifest

    corpus, db = make_corpus(tmp_path / "docs"), tmp_path / "db"
    r = running(corpus, db)
    r.settle(0)
    hashed: list[str] = []
    real = manifest.file_hash
    monkeypatch.setattr(manifest, "file_hash", lambda path: hashed.append(path.name) or real(path))
    before = len(r.watcher.syncs)
    with open(corpus / DOCS[0], "a", encoding="utf-8") as fh:
        fh.write("\nBir satır daha.\n")
    [sync] = r.settle(before)
    assert sync.files == 1 and sync.reports[0].changed == 1 and sync.reports[0].unchanged == 2
    assert hashed == [DOCS[0]]


def test_a_burst_of_200_files_becomes_a_few_builds(tmp_path, running):
    corpus, db, ref = make_corpus(tmp_path / "docs"), tmp_path / "db", tmp_path / "ref"
    r = running(corpus, db)
    r.settle(0)
    before = len(r.watcher.syncs)
    for i in range(200):
        folder = corpus / f"k{i // 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"not-{i:03d}.md").write_text(f"# Not {i}\n\nKısa not numarası {i}.\n", encoding="utf-8")
    syncs = r.settle(before)
    assert 1 <= len(syncs) <= 3, [s.files for s in syncs]
    assert sum(rep.added for s in syncs for rep in s.reports) == 200
    assert_equals_fresh_build(corpus, db, ref)


def test_a_bad_file_is_told_once_until_it_changes(tmp_path, running):
    corpus, db = make_corpus(tmp_path / "docs"), tmp_path / "db"
    (corpus / "bozuk.md").write_bytes(b"\x00\x01binary")
    r = running(corpus, db)
    r.settle(0)
    told = "skipped bozuk.md: binary file (contains NUL bytes)"
    assert r.messages == [told]
    for i in range(2):  # other files change: nothing new to tell
        before = len(r.watcher.syncs)
        (corpus / f"n{i}.md").write_text(f"# N{i}\n\nmetin {i}\n", encoding="utf-8")
        r.settle(before)
    assert r.messages == [told]
    assert r.watcher.status.skipped == 1
    before = len(r.watcher.syncs)
    (corpus / "bozuk.md").write_bytes(b"\x00\x02still binary")  # changed, still bad: told again
    r.settle(before)
    assert r.messages == [told, told]
    before = len(r.watcher.syncs)
    (corpus / "bozuk.md").write_text("# Düzeldi\n\nArtık metin.\n", encoding="utf-8")
    r.settle(before)
    assert r.messages == [told, told] and r.watcher.status.skipped == 0
    assert "bozuk.md" in {c.doc_id for c in Index.open("headers", settings=Settings.load(db=db)).chunks()}


def test_a_sync_waits_for_a_build_holding_the_lease(tmp_path, running):
    corpus, db, ref = make_corpus(tmp_path / "docs"), tmp_path / "db", tmp_path / "ref"
    r = running(corpus, db)
    r.settle(0)
    before = len(r.watcher.syncs)
    with open_store(db).builds.lease("headers", "use-m3"):  # what `indexer build` holds while it runs
        (corpus / "yeni.md").write_text("# Yeni\n\nBekleyen belge.\n", encoding="utf-8")
        deadline = time.monotonic() + 20
        while r.watcher.status.state != "waiting" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert r.watcher.status.state == "waiting" and len(r.watcher.syncs) == before
        time.sleep(0.3)
        assert len(r.watcher.syncs) == before
    [sync] = r.settle(before)
    assert sync.ok and r.messages == ["waiting for another build of headers (use-m3) to finish..."]
    assert_equals_fresh_build(corpus, db, ref)


def test_a_collection_built_by_hand_keeps_its_bm25_settings(tmp_path, running):
    corpus, db = make_corpus(tmp_path / "docs"), tmp_path / "db"
    [hand] = build([corpus], ["headers"], BuildOptions(lang="en", stem=3), settings=Settings.load(db=db))
    r = running(corpus, db)
    [first] = r.settle(0)
    assert first.reports[0].mode == "unchanged"
    before = len(r.watcher.syncs)
    (corpus / "yeni.md").write_text("# Yeni\n\nYeni belge.\n", encoding="utf-8")
    [sync] = r.settle(before)
    assert sync.reports[0].mode == "incremental" and sync.reports[0].analyzer == hand.analyzer


def test_full_rebuilds_at_the_first_sync_only(tmp_path, running):
    corpus, db = make_corpus(tmp_path / "docs"), tmp_path / "db"
    build([corpus], ["headers"], settings=Settings.load(db=db))
    r = running(corpus, db, full=True, max_pdf_pages=5, wait=False)  # `watch --full --max-pdf-pages 5 --no-wait`
    [first] = r.settle(0)
    assert (first.reports[0].mode, first.reports[0].reason) == ("full", "--full")
    before = len(r.watcher.syncs)
    (corpus / "yeni.md").write_text("# Yeni\n\nYeni belge.\n", encoding="utf-8")
    [sync] = r.settle(before)
    assert sync.reports[0].mode == "incremental"


def test_a_folder_with_nothing_indexable_tells_why_each_file_was_left_out(tmp_path, running):
    corpus, db = tmp_path / "docs", tmp_path / "db"
    corpus.mkdir()
    (corpus / "bozuk.md").write_bytes(b"\x00\x01binary")
    (corpus / ".gizli.md").write_text("# Gizli\n\nmetin\n", encoding="utf-8")
    r = running(corpus, db)
    [sync] = r.settle(0)
    assert not sync.ok and sync.error.startswith("no chunks for strategy headers: every file was skipped (2 skipped)")
    assert r.messages == ["skipped .gizli.md: hidden file (index it with --include '.gizli.md')",
                          "skipped bozuk.md: binary file (contains NUL bytes)",
                          f"sync failed: {sync.error}; waiting for changes"]


def test_events_outside_what_is_indexed_are_ignored(tmp_path):
    from watchfiles import Change

    corpus = make_corpus(tmp_path / "docs")
    (corpus / "build").mkdir()
    (corpus / ".indexerignore").write_text("build/\n", encoding="utf-8")
    events = EventPaths([corpus], corpus / ".idx", indexed_under=lambda rel: rel == "old")
    relevant = {name: events.relevant(change, str(corpus / name)) for change, name in [
        (Change.modified, "a.md"), (Change.added, "src/x.py"), (Change.modified, ".indexerignore"),
        (Change.modified, ".idx/chroma/x.md"), (Change.modified, ".git/HEAD.md"), (Change.modified, "node_modules/a.md"),
        (Change.modified, "build/out.md"), (Change.modified, "image.png"), (Change.added, "build"),
        (Change.deleted, "old"), (Change.deleted, "other"), (Change.modified, ".hidden.md"),
    ]}
    assert [name for name, keep in relevant.items() if keep] == ["a.md", "src/x.py", ".indexerignore", "old"]
    assert events.doc_id(str(corpus / "src" / "x.py")) == "src/x.py" and events.doc_id("/elsewhere/a.md") is None
    # a hidden file or folder named by --include is watched as it is indexed
    events = EventPaths([corpus], corpus / ".idx", include=(".hidden.md", ".notes/"))
    assert [name for name in (".hidden.md", ".notes/n.md", ".other.md", "a.md", ".git/HEAD.md")
            if events.relevant(Change.modified, str(corpus / name))] == [".hidden.md", ".notes/n.md", "a.md"]


def cli_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    env.pop("INDEXER_DB", None)
    return env


def start_watch(corpus, db, **env):
    return subprocess.Popen([sys.executable, "-m", "indexer", "watch", str(corpus), "-s", "headers", "--db", str(db),
                             "--debounce", "50", "--json"],
                            env=cli_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)


def test_cli_syncs_a_save_and_stops_cleanly_on_ctrl_c(tmp_path):
    corpus, db = make_corpus(tmp_path / "docs"), tmp_path / "db"
    proc = start_watch(corpus, db)
    try:
        first = json.loads(proc.stdout.readline())
        assert first["files"] is None and first["reports"][0]["mode"] == "full"
        with open(corpus / DOCS[0], "a", encoding="utf-8") as fh:
            fh.write("\n## Gece Teslimatı\n\nGece teslimatı yalnızca İstanbul'da yapılır.\n")
        second = json.loads(proc.stdout.readline())
        assert second["files"] == 1 and second["reports"][0]["mode"] == "incremental"
        hits = Index.open("headers", settings=Settings.load(db=db)).search("gece teslimatı hangi şehirde", k=1)
        assert "Gece teslimatı yalnızca" in hits[0].chunk.text
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert err.splitlines()[-1] == "stopped"


@pytest.mark.parametrize("point", ["embedding", "publish", "published"])
def test_ctrl_c_during_a_sync_leaves_a_complete_version(tmp_path, running, point):
    """A KeyboardInterrupt inside a build (raised by `BuildOptions.on_stage` at a stage):
    before the switch the previous version stays live; after it the new one is live and
    whole (nothing undoes a published version)."""
    corpus, db, ref = make_corpus(tmp_path / "docs"), tmp_path / "db", tmp_path / "ref"
    build([corpus], ["headers"], settings=Settings.load(db=db))
    old = records(db)
    armed = threading.Event()

    def interrupt(name: str) -> None:
        if armed.is_set() and name == point:
            raise KeyboardInterrupt

    r = running(corpus, db, on_stage=interrupt)
    [first] = r.settle(0)
    assert first.reports[0].mode == "unchanged"
    armed.set()
    with open(corpus / DOCS[0], "a", encoding="utf-8") as fh:
        fh.write("\n## Ek\n\nYeni paragraf.\n")
    r.thread.join(timeout=60)
    assert r.interrupted and r.watcher.status.state == "stopped"
    index = Index.open("headers", settings=Settings.load(db=db))
    assert index.count() == index.entry.chunks
    if point == "published":
        assert_equals_fresh_build(corpus, db, ref)
    else:
        assert records(db) == old
    # the next build repairs what the interrupted one left
    [again] = build([corpus], ["headers"], settings=Settings.load(db=db))
    assert again.mode == ("unchanged" if point == "published" else "incremental")
    assert_equals_fresh_build(corpus, db, ref)
