"""The index's lifecycle under faults (issue 22): a drop racing a build (two processes on
one embedded database, and two machines on one Chroma server), commands that write into a
read-only index, what `gc` says it freed, and options a command does not use. Commands run
as real `indexer` processes; see tests/faultkit.py."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.indexing.building import build
from indexer.settings import Settings
from indexer.store import Store
from indexer.store.chroma import CATALOG
from indexer.store.gc import folder_size, orphan_segments

from .conftest import CORPUS, open_store, raw_chroma, start_chroma, stop
from .faultkit import copy_corpus, env, indexer, one_line_error, paused, read_only_view

NEW_FILE = "# Mağaza Teslim\n\nSiparişinizi seçili mağazalardan teslim alabilirsiniz. Mağazada 7 gün bekletilir.\n"
SMALL = {"kargo-ve-teslimat.md", "iade-ve-geri-odeme.md"}


@pytest.fixture
def built(tmp_path):
    corpus = copy_corpus(tmp_path / "corpus", SMALL)
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    return corpus, db


def start(*args, **extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "indexer", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env(**extra))


def finish(proc: subprocess.Popen, timeout: float = 300) -> subprocess.CompletedProcess:
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def built_chunks(done: subprocess.CompletedProcess) -> int:
    """The chunks a successful `indexer build` reported (its table's first row)."""
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.splitlines()[1].split()[3])


def side_folders(db: Path) -> list[str]:
    return sorted(str(p.relative_to(db / "indexes")) for p in (db / "indexes").glob("*/*")) \
        if (db / "indexes").is_dir() else []


def assert_nothing_left(db: Path, store: Store | None = None) -> None:
    """No entry, no physical collection but the catalogue, no vector folder of a deleted
    collection; and (embedded) no side files."""
    store = store or open_store(db)
    assert store.catalogue.entries() == []
    assert [name for name, _ in raw_chroma(db, store.url).listing()] == [CATALOG]
    if not store.url:
        assert side_folders(db) == [] and orphan_segments(db / "chroma") == []


# -- a drop racing a build ------------------------------------------------------------------------
def test_a_drop_waits_for_a_running_build_and_drops_what_it_published(built, tmp_path):
    corpus, db = built
    old = open_store(db).catalogue.find("fixed64").chunks
    (corpus / "magaza-teslim.md").write_text(NEW_FILE, encoding="utf-8")  # the new version has more chunks
    marker = tmp_path / "m"
    building = paused(["build", corpus, "-s", "fixed64", "--db", db, "--full"], "embedding", marker)
    refused = indexer("drop", "-s", "fixed64", "--db", db, "--no-wait")
    assert one_line_error(refused) == (
        f"Error: cannot drop fixed64 (use-m3) now: a build of it is running on {db} and holds its lease; "
        "drop it when the build is done, or without --no-wait to wait")
    dropping = start("drop", "-s", "fixed64", "--db", db)
    assert dropping.stderr.readline().strip() == "waiting for the build of fixed64 (use-m3) to finish before the drop..."
    marker.unlink()  # the build goes on
    new = built_chunks(finish(building))  # the build published...
    dropped = finish(dropping)
    assert new > old and dropped.returncode == 0, dropped.stderr
    assert dropped.stdout.strip() == f"dropped fixed64 (use-m3, {new} chunks)"  # ...and then the drop took that
    assert_nothing_left(db)


@pytest.mark.parametrize("server", [False, True], ids=["embedded", "server"])
def test_a_drop_during_a_first_build_waits_for_it_as_for_any_build(tmp_path, server):
    """Nothing is published yet, but a build holds the lease: the drop is refused with
    --no-wait as during any build, else waits and drops what the build published."""
    corpus = copy_corpus(tmp_path / "corpus", SMALL)
    db, marker = tmp_path / "db", tmp_path / "m"
    proc, url = start_chroma(tmp_path / "server") if server else (None, None)
    where = ["--db", db, *(["--chroma-url", url] if url else [])]
    building = None
    try:
        building = paused(["build", corpus, "-s", "fixed64", *where], "embedding", marker)
        refused = one_line_error(indexer("drop", "-s", "fixed64", *where, "--no-wait"))
        assert refused.startswith(f"Error: cannot drop fixed64 (use-m3) now: a build of it is running on {url or db}")
        dropping = start("drop", "-s", "fixed64", *where)
        assert dropping.stderr.readline().startswith("waiting for the build of fixed64 (use-m3) to finish before the "
                                                     "drop")
        marker.unlink()  # the build goes on
        chunks = built_chunks(finish(building))
        dropped = finish(dropping)
        assert dropped.returncode == 0 and dropped.stdout.strip() == f"dropped fixed64 (use-m3, {chunks} chunks)", \
            dropped.stderr
        assert_nothing_left(db, open_store(db, url))
        missing = one_line_error(indexer("drop", "-s", "fixed64", *where, "--no-wait"))  # no build: nothing to drop
        assert "no collection for strategy 'fixed64'" in missing
    finally:
        if building is not None and building.poll() is None:
            building.kill()
        if proc is not None:
            stop(proc)


@pytest.mark.parametrize("full", [True, False], ids=["full", "incremental"])
def test_a_build_whose_collection_is_dropped_under_it_fails_and_removes_what_it_wrote(built, tmp_path, full):
    """A drop that does not wait (here its lock file is removed, as on a shared folder whose
    locks do not lock): the build must not report chunks nobody stores."""
    corpus, db = built
    (corpus / "magaza-teslim.md").write_text(NEW_FILE, encoding="utf-8")
    marker = tmp_path / "m"
    building = paused(["build", corpus, "-s", "fixed64", "--db", db, *(["--full"] if full else [])], "publish", marker)
    for lock in (db / "locks").iterdir():
        lock.unlink()
    dropped = indexer("drop", "-s", "fixed64", "--db", db, "--no-wait")
    assert dropped.returncode == 0 and dropped.stdout.startswith("dropped fixed64"), dropped.stderr
    marker.unlink()  # the build goes on to publish
    line = one_line_error(finish(building))
    assert line == (f"Error: fixed64 (use-m3) was dropped in {db} while this build ran (by a drop or build that did "
                    "not wait for its lease); nothing of this build is live and what it wrote is removed: build it again")
    assert_nothing_left(db)


def test_a_drop_through_a_server_waits_for_a_build_on_another_machine_or_its_lapsed_lease(tmp_path):
    proc, url = start_chroma(tmp_path / "server")
    try:
        corpus = copy_corpus(tmp_path / "corpus", SMALL)
        a, b = tmp_path / "machine-a", tmp_path / "machine-b"
        assert indexer("build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", a, "-q").returncode == 0
        # machine b's drop waits for machine a's build, then drops what it published
        (corpus / "magaza-teslim.md").write_text(NEW_FILE, encoding="utf-8")
        marker = tmp_path / "m"
        building = paused(["build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", a, "--full"], "embedding",
                          marker)
        assert "a build of it is running on http://127.0.0.1" in one_line_error(
            indexer("drop", "-s", "fixed64", "--chroma-url", url, "--db", b, "--no-wait"))
        dropping = start("drop", "-s", "fixed64", "--chroma-url", url, "--db", b)
        assert dropping.stderr.readline().startswith("waiting for the build of fixed64 (use-m3) to finish before the "
                                                     "drop (held by ")
        marker.unlink()
        new = built_chunks(finish(building))
        dropped = finish(dropping)
        assert dropped.returncode == 0 and dropped.stdout.strip() == f"dropped fixed64 (use-m3, {new} chunks)"
        assert_nothing_left(a, open_store(a, url))
        assert side_folders(b) == []  # a's side files are a's: its next build (or gc) removes them

        # machine a stalls past its lease (SIGSTOP) just before publishing: b's drop takes the
        # lapsed lease, and a, woken up, finds its version dropped and says so
        assert indexer("build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", a, "-q").returncode == 0
        live = open_store(a, url).catalogue.find("fixed64").collection
        assert side_folders(a) == [f"{live}/g1"]  # what b dropped before is gone from a
        (corpus / "magaza-teslim.md").write_text(NEW_FILE + "\nEk satır.\n", encoding="utf-8")
        building = paused(["build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", a, "-q"], "publish", marker,
                          INDEXER_LEASE_TTL="2")
        building.send_signal(signal.SIGSTOP)
        try:
            dropped = indexer("drop", "-s", "fixed64", "--chroma-url", url, "--db", b, INDEXER_LEASE_TTL="2")
        finally:
            building.send_signal(signal.SIGCONT)
            marker.unlink()
        assert dropped.returncode == 0 and dropped.stdout.startswith("dropped fixed64"), dropped.stderr
        assert "was dropped in http://127.0.0.1" in one_line_error(finish(building))
        assert_nothing_left(a, open_store(a, url))
        assert side_folders(a) == [f"{live}/g1"]  # the failed build removed its own (g2); b dropped g1
        done = indexer("gc", "--chroma-url", url, "--db", a)
        assert done.stdout.startswith(f"removed side files of {live} (not live)\n"), done.stdout + done.stderr
        assert side_folders(a) == []
    finally:
        stop(proc)


# -- read-only indexes ----------------------------------------------------------------------------
def test_commands_that_write_refuse_a_read_only_index_in_one_line_and_readers_work(built, tmp_path):
    corpus, db = built
    questions = tmp_path / "q.jsonl"  # the sample questions about the two files built
    questions.write_text("".join(line + "\n" for line in (CORPUS / "questions.jsonl").read_text().splitlines()
                                 if json.loads(line)["doc_id"] in SMALL), encoding="utf-8")
    view = tmp_path / "ro"
    if not read_only_view(db, view):
        pytest.skip("LOUD SKIP: cannot make a read-only bind mount here (needs root); the read-only path is untested")
    try:
        refusals = {
            "collecting garbage": ("gc",),
            "dropping a collection": ("drop", "-s", "fixed64"),
            "saving search settings": ("tune", questions, "-s", "fixed64", "--corpus", corpus, "--folds", "2",
                                       "--save"),
        }
        for doing, args in refusals.items():
            line = one_line_error(indexer(*args, "--db", view))
            assert line == (f"Error: {view} is read-only: {doing} needs write access (query, eval and list do not); "
                            "run it where the index is writable, or remount it read-write")
        for args in (("build", corpus, "-s", "fixed64"), ("watch", corpus, "-s", "fixed64", "-q")):
            line = one_line_error(indexer(*args, "--db", view, timeout=120))
            assert line.endswith("is read-only: building needs write access (querying does not); build into a "
                                 "writable --db")
        for args in (("list",), ("query", "kargo", "-s", "fixed64"), ("dump", "-s", "fixed64"),
                     ("eval", questions, "-s", "fixed64", "--corpus", corpus, "-m", "bm25", "-q")):
            done = indexer(*args, "--db", view)
            assert done.returncode == 0 and done.stdout and "Error" not in done.stderr, (args, done.stderr)
    finally:
        subprocess.run(["umount", str(view)])



def without_write_permission(args: list[str]) -> list[str]:
    """`args` run so that file modes bind: root ignores them unless it drops the
    capabilities that override them (setpriv), as any other user is bound by them."""
    if os.geteuid() != 0:
        return args
    if shutil.which("setpriv") is None:
        pytest.skip("LOUD SKIP: running as root without setpriv: file modes cannot bind; read-only modes untested")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", *args]


def test_an_index_whose_files_are_read_only_answers_readers(built, tmp_path):
    """Not a read-only mount but read-only modes (`chmod -R a-w`, a copied or packaged
    index): the private copy of Chroma's catalogue is opened read-write, so it must not
    keep the original's 0444 mode; the embedding cache and side files are only read."""
    _, db = built
    subprocess.run(["chmod", "-R", "a-w", str(db)], check=True)
    try:
        for args in (("list",), ("query", "kargo", "-s", "fixed64"), ("query", "iade süresi kaç gün", "-s", "fixed64"),
                     ("query", "kargo", "-s", "fixed64", "--budget", "200"), ("dump", "-s", "fixed64")):
            cmd = without_write_permission([sys.executable, "-m", "indexer", *args, "--db", str(db)])
            done = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
            assert done.returncode == 0 and done.stdout and "Error" not in done.stderr, (args, done.stderr)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(db)], check=True)

# -- gc says what it freed ------------------------------------------------------------------------
def test_gc_reports_the_space_it_measured_and_nothing_when_there_is_nothing(built, tmp_path):
    corpus, db = built
    indexer("gc", "--db", db)  # whatever the build left in Chroma's catalogue
    assert indexer("gc", "--db", db).stdout == "nothing to collect\n"
    stray = db / "indexes" / "ix-gone--use-m3--1" / "g1"  # side files of a collection no longer live
    stray.mkdir(parents=True)
    (stray / "terms.npy").write_bytes(b"\0" * 300_000)
    done = indexer("gc", "--db", db)
    assert done.stdout == f"removed side files of ix-gone--use-m3--1 (not live)\nfreed 293 KB in {db}\n", done.stderr
    proc = paused(["build", corpus, "-s", "headers", "--db", db, "-q"], "embedding", tmp_path / "m")
    proc.kill()  # a first build killed mid-way leaves a collection nobody published
    proc.wait()
    before = folder_size(db)
    done = indexer("gc", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    [report] = [json.loads(line) for line in done.stdout.splitlines()]
    assert any("never published" in what for what in report["removed"])
    assert report["bytes_freed"] == before - folder_size(db) > 0 and report["measured"] == [str(db)]
    assert indexer("gc", "--db", db).stdout == "nothing to collect\n"


# -- options a command does not use ------------------------------------------------------------------
@pytest.mark.parametrize("command,unused", [("gc", ["--ollama-host", "--embedder"]),
                                            ("drop", ["--ollama-host"]),
                                            ("list", ["--ollama-host", "--embedder"]),
                                            ("dump", ["--ollama-host"])])
def test_commands_offer_only_the_options_they_use(command, unused):
    runner = CliRunner()
    shown = runner.invoke(cli, [command, "--help"]).output
    for option in unused:
        assert option not in shown
        refused = runner.invoke(cli, [command, option, "x"])
        assert refused.exit_code == 2 and f"No such option '{option}'" in refused.output
