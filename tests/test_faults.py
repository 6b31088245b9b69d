"""An index that lives for months: bounded disk over rebuilds, leases on a shared Chroma
server, handles that follow rebuilds, stale-index warnings, read-only indexes, and a
one-line message (never a traceback) for every fault below — the fault-injection matrix
beside tests/test_bad_input.py. Builds and queries run as real `indexer` processes."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from indexer.errors import StoreError
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.retrieval import Index
from indexer.settings import Settings
from indexer.store.gc import folder_size

from .conftest import CORPUS, open_store, raw_chroma, start_chroma, stop
from .faultkit import (
    copy_corpus,
    env,
    fill,
    indexer,
    one_line_error,
    paused,
    read_only_view,
    small_disk,
)

QUESTIONS = CORPUS / "questions.jsonl"


@pytest.fixture
def built(tmp_path):
    corpus = copy_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    return corpus, db


# -- disk ----------------------------------------------------------------------------------------
def test_disk_stays_bounded_over_full_rebuilds(built):
    corpus, db = built
    one = folder_size(db)
    for _ in range(6):
        build([corpus], ["fixed64"], BuildOptions(full=True), settings=Settings.load(db=db))
    segments = [p for p in (db / "chroma").iterdir() if p.is_dir()]
    assert len(segments) == 2  # the vector segments of the live collection and of the catalogue, no more
    assert folder_size(db) <= 1.15 * one  # what Chroma leaves of replaced versions is collected
    done = indexer("gc", "--db", db)
    assert done.returncode == 0, done.stderr
    assert folder_size(db) <= 1.1 * one


def test_gc_collects_what_a_killed_first_build_left(built, tmp_path):
    corpus, db = built
    proc = paused(["build", corpus, "-s", "headers", "--db", db, "-q"], "embedding", tmp_path / "m")
    proc.kill()
    proc.wait()
    left = [n for n, _ in raw_chroma(db).listing() if n.startswith("ix-headers")]
    assert left  # a collection nobody published
    done = indexer("gc", "--db", db)
    assert done.returncode == 0 and "never published" in done.stdout, done.stdout + done.stderr
    assert not [n for n, _ in raw_chroma(db).listing() if n.startswith("ix-headers")]
    assert indexer("query", "kargo", "-s", "fixed64", "--db", db).returncode == 0


# -- readers follow rebuilds --------------------------------------------------------------------
def test_a_read_of_a_collection_deleted_midway_is_a_missing_collection():
    """What Chroma 1.5 says when a full rebuild deletes the collection a reader is reading
    (seen once in the five-rebuild test below): a missing collection, which a long-lived
    handle answers by following the catalogue, not a failure."""
    from chromadb.errors import ChromaError

    from indexer.errors import CollectionNotFound
    from indexer.store.chroma import translate

    for text in ("Missing field: [Missing metadata segment]", "Collection [1edee73d] does not exist."):
        assert isinstance(translate(ChromaError(text), "db", "reading fixed64"), CollectionNotFound)


def test_a_long_lived_handle_follows_five_rebuilds_without_a_failure(built):
    corpus, db = built
    index = Index.open("fixed64", refresh=0.2, settings=Settings.load(db=db))
    results, errors, generations = [], [], set()
    building = threading.Event()
    building.set()

    def reader():  # searches all through the rebuilds (at least 1,000 times)
        i = 0
        while building.is_set() or i < 1000:
            try:
                hits = index.search("kargo kaç günde gelir" if i % 2 else "iade süresi", k=3)
                results.append(len(hits))
                if i % 10 == 0:  # a document's chunks too (serve's /api/chunks), read by a scan
                    assert index.chunks("kargo-ve-teslimat.md")
                generations.add((index.entry.collection, index.entry.generation))
            except Exception as exc:  # noqa: BLE001 - every failure counts
                errors.append(repr(exc))
            i += 1

    thread = threading.Thread(target=reader)
    thread.start()
    target = corpus / "kargo-ve-teslimat.md"
    for i in range(5):  # incremental builds and full ones, in another process
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"\n\n## Ek {i}\n\nKargo ek bilgisi {i}: paketler {i + 2} gün içinde gelir.\n")
        done = indexer("build", corpus, "-s", "fixed64", "--db", db, "-q", *(["--full"] if i % 2 else []))
        assert done.returncode == 0, done.stderr
        time.sleep(0.5)  # let the reader see this version
    building.clear()
    thread.join(timeout=300)
    assert errors == [] and len(results) >= 1000 and min(results) == 3
    live = open_store(db).catalogue.find("fixed64")
    assert (index.entry.collection, index.entry.generation) == (live.collection, live.generation)  # it followed
    assert len(generations) >= 5  # and saw the versions in between
    assert any("Ek 4" in c.text for c in index.chunks("kargo-ve-teslimat.md"))


def test_a_long_lived_reader_sees_the_vectors_of_an_incremental_build(built):
    corpus, db = built
    index = Index.open("fixed64", refresh=0.1, settings=Settings.load(db=db))
    assert index.search("kargo", mode="embedding", k=1)  # its vector index is loaded now
    sentence = "Zürafa kargosu yalnızca salı günleri uçakla gönderilir."
    with open(corpus / "kargo-ve-teslimat.md", "a", encoding="utf-8") as fh:
        fh.write(f"\n\n## Zürafa\n\n{sentence}\n")
    done = indexer("build", corpus, "-s", "fixed64", "--db", db, "-q")  # another process writes the delta
    assert done.returncode == 0, done.stderr
    deadline = time.time() + 10
    while True:  # embedding only: BM25 would find it anyway
        hits = index.search(sentence, mode="embedding", k=1)
        if "Zürafa" in hits[0].chunk.text or time.time() > deadline:
            break
        time.sleep(0.1)
    assert "Zürafa" in hits[0].chunk.text


# -- a Chroma server shared by two machines ---------------------------------------------------------
def test_builders_on_two_machines_share_one_lease(tmp_path):
    proc, url = start_chroma(tmp_path / "server")
    try:
        corpus = copy_corpus(tmp_path / "corpus")
        first = paused(["build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "machine-a", "-q"],
                       "embedding", tmp_path / "m", INDEXER_LEASE_TTL="3")
        refused = indexer("build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "machine-b",
                          "--no-wait")
        line = one_line_error(refused)
        assert "another build of fixed64 (use-m3) is running on http://127.0.0.1" in line
        first.kill()  # the first machine dies holding the lease: it expires and is taken over
        first.wait()
        second = indexer("build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "machine-b",
                         INDEXER_LEASE_TTL="3")
        assert second.returncode == 0, second.stderr
        assert second.stdout.splitlines()[1].split()[:2] == ["fixed64", "full"]
        entry = open_store(tmp_path / "machine-b", url).catalogue.find("fixed64")
        physical = raw_chroma(tmp_path / "machine-b", url).listing()
        assert [n for n, _ in physical if n.startswith("ix-")] == [entry.collection]
        hits = indexer("query", "kargo", "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "machine-a",
                       "--json")
        assert hits.returncode == 0 and len(hits.stdout.splitlines()) == 5
    finally:
        stop(proc)


def test_a_server_lost_mid_build_is_a_one_line_error_and_loses_nothing(tmp_path):
    server = tmp_path / "server"
    proc, url = start_chroma(server)
    port = int(url.rsplit(":", 1)[1])
    corpus = copy_corpus(tmp_path / "corpus")
    try:
        assert indexer("build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "a", "-q").returncode == 0
        (corpus / "kargo-ve-teslimat.md").write_text("# Kargo\n\nYeni metin.\n", encoding="utf-8")
        building = paused(["build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "a"],
                          "locked:4", tmp_path / "m")
        stop(proc)  # the server goes away while the build waits at its stage
        out, err = building.communicate(timeout=120)
        one_line_error(subprocess.CompletedProcess(building.args, building.returncode, out, err))
        assert "Chroma" in err or "server" in err
        proc, url = start_chroma(server, port)  # back up: the previous version answers
        hits = indexer("query", "kargo kaç gün", "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "a", "--json")
        assert hits.returncode == 0 and len(hits.stdout.splitlines()) == 5
    finally:
        stop(proc)


# -- stale indexes --------------------------------------------------------------------------------
def test_eval_and_query_notice_documents_changed_since_the_build(built, tmp_path):
    corpus, db = built
    shutil.copy(QUESTIONS, corpus / "questions.jsonl")
    fresh = indexer("eval", corpus / "questions.jsonl", "-s", "fixed64", "--db", db, "-m", "bm25", "-q")
    assert fresh.returncode == 0 and "warning" not in fresh.stderr
    with open(corpus / "iade-ve-geri-odeme.md", "a", encoding="utf-8") as fh:
        fh.write("\n\nEk paragraf.\n")
    stale = indexer("eval", corpus / "questions.jsonl", "-s", "fixed64", "--db", db, "-m", "bm25", "-q")
    assert stale.returncode == 0
    assert "warning: fixed64 (use-m3) was built from other versions of 1 file(s) (iade-ve-geri-odeme.md)" in stale.stderr
    strict = indexer("eval", corpus / "questions.jsonl", "-s", "fixed64", "--db", db, "--require-fresh", "-q")
    assert "iade-ve-geri-odeme.md" in one_line_error(strict)
    query = indexer("query", "iade", "-s", "fixed64", "--db", db)
    assert query.returncode == 0 and "1 file(s) changed since fixed64 was built (iade-ve-geri-odeme.md)" in query.stderr


# -- read-only indexes ----------------------------------------------------------------------------
def test_a_read_only_index_answers_queries_and_refuses_builds(built, tmp_path):
    corpus, db = built
    view = tmp_path / "ro"
    if not read_only_view(db, view):
        pytest.skip("LOUD SKIP: cannot make a read-only bind mount here (needs root); the read-only path is untested")
    try:
        for mode in ("hybrid", "bm25", "embedding"):
            done = indexer("query", "kargo kaç gün", "-s", "fixed64", "--db", view, "-m", mode, "--json")
            assert done.returncode == 0 and len(done.stdout.splitlines()) == 5, done.stderr
        line = one_line_error(indexer("build", corpus, "-s", "fixed64", "--db", view))
        assert line.endswith("is read-only: building needs write access (querying does not); build into a writable --db")
    finally:
        subprocess.run(["umount", str(view)])


# -- the matrix: damaged side files, caches, manifests, full disks ---------------------------------------
def _side(db: Path) -> Path:
    store = open_store(db)
    entry = store.catalogue.find("fixed64")
    return store.side.folder(entry.collection, entry.generation)


BM25_QUERY = ("query", "kargo kaç gün", "-s", "fixed64", "-m", "bm25", "--json")
REBUILT = "warning: rebuilt the BM25 index from the stored records"


@pytest.mark.parametrize("damage", ["vocab_bytes.npy", "offsets.npy", "terms.npy-empty", "ids.npy-short"])
def test_damaged_bm25_files_are_rebuilt_from_the_records(built, damage):
    corpus, db = built
    folder = _side(db) / "bm25"
    expected = indexer(*BM25_QUERY, "--db", db).stdout
    name = damage.split("-")[0]
    if damage.endswith("empty"):
        (folder / name).write_bytes(b"")
    elif damage.endswith("short"):
        np.save(folder / name, np.load(folder / name)[:-3], allow_pickle=False)
    else:
        (folder / name).write_bytes((folder / name).read_bytes()[: 40])
    query = indexer(*BM25_QUERY, "--db", db)
    assert query.returncode == 0 and query.stdout == expected  # rebuilt on the fly, same answer
    assert query.stderr.count(REBUILT) == 1, query.stderr  # and said so, in one line
    (folder / name).write_bytes(b"{")  # damaged again: `build` repairs it and says so
    done = indexer("build", corpus, "-s", "fixed64", "--db", db)
    assert done.returncode == 0 and "rebuilt the BM25 index from the stored records" in done.stdout
    assert "unchanged" in done.stdout


def test_well_formed_but_wrong_bm25_files_fail_their_checksums_and_are_rebuilt(built):
    corpus, db = built
    folder = _side(db) / "bm25"
    expected = indexer(*BM25_QUERY, "--db", db).stdout

    def swap_top_id(path):  # consistent with the other files, but the top hit's id traded with another's
        ids = np.load(path)
        top = ids.tolist().index(json.loads(expected.splitlines()[0])["id"].encode())
        ids[[top, -1]] = ids[[-1, top]]
        np.save(path, ids, allow_pickle=False)

    def shuffle(path):  # a valid array of the same terms, in another order
        np.save(path, np.random.default_rng(0).permutation(np.load(path)), allow_pickle=False)

    def other_k1(path):  # another valid setting
        path.write_text(json.dumps({**json.loads(path.read_text()), "k1": 0.2}))

    for name, damage in (("ids.npy", swap_top_id), ("terms.npy", shuffle), ("params.json", other_k1)):
        damage(folder / name)
        query = indexer(*BM25_QUERY, "--db", db)
        assert query.returncode == 0 and query.stdout == expected, name  # the records' answer, not the file's
        lines = [line for line in query.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith(REBUILT) and f"{name} does not match its checksum" in lines[0]
    again = indexer(*BM25_QUERY, "--db", db)
    assert again.stdout == expected and REBUILT not in again.stderr  # the rebuilt files were saved


def test_damaged_rows_are_named_as_rows_and_a_plain_build_rewrites_them(built):
    """Issue 51 G8: not "the BM25 index", and no warning left on every query until --full."""
    corpus, db = built
    expected = indexer(*BM25_QUERY, "--db", db).stdout
    with open(_side(db) / "rows" / "vectors.npy", "r+b") as fh:
        fh.truncate(1000)
    query = indexer(*BM25_QUERY, "--db", db)
    assert query.returncode == 0 and query.stdout == expected  # read from Chroma meanwhile
    assert "warning: the stored rows in " in query.stderr and "BM25" not in query.stderr, query.stderr
    assert "vectors.npy does not match its checksum" in query.stderr
    done = indexer("build", corpus, "-s", "fixed64", "--db", db)
    assert done.returncode == 0 and "unchanged" in done.stdout, done.stderr
    assert "rewrote the stored rows from the stored records" in done.stdout
    again = indexer(*BM25_QUERY, "--db", db)
    assert (again.returncode, again.stdout, again.stderr) == (0, expected, "")


@pytest.mark.parametrize("garbled", [bytes(range(200, 233)), b'{"format": 2, "tool": "ind', b"[2]", b'{"tool": "indexer"}'])
def test_a_garbled_marker_over_an_intact_index_is_written_again(built, garbled):
    """Issue 51 G10: every command refused with "the index folder looks damaged" and no advice."""
    corpus, db = built
    expected = indexer(*BM25_QUERY, "--db", db).stdout
    (db / "indexer.json").write_bytes(garbled)
    query = indexer(*BM25_QUERY, "--db", db)
    assert (query.returncode, query.stdout, query.stderr) == (0, expected, "")
    assert json.loads((db / "indexer.json").read_text()) == {"format": 2, "tool": "indexer"}
    [kept] = db.glob("indexer.json.damaged-*")  # what it held is not lost
    assert kept.read_bytes() == garbled
    done = indexer("build", corpus, "-s", "fixed64", "--db", db)
    assert done.returncode == 0 and "unchanged" in done.stdout, done.stderr


@pytest.mark.parametrize("old_layout", [False, True])
def test_a_garbled_marker_in_a_folder_that_is_not_an_index_says_what_to_do(tmp_path, old_layout):
    db = tmp_path / "db"
    (db / "chroma").mkdir(parents=True)
    (db / "indexer.json").write_bytes(b"\x00garbage")
    why = f"holds no Chroma database ({db}/chroma/chroma.sqlite3)"
    if old_layout:  # format 1 kept side files straight under indexes/<collection>/
        (db / "chroma" / "chroma.sqlite3").write_bytes(b"SQLite format 3\x00" + bytes(100))
        (db / "indexes" / "ix-a").mkdir(parents=True)
        (db / "indexes" / "ix-a" / "manifest.json").write_text("{}")
        why = f"keeps its side files in another layout ({db}/indexes/ix-a)"
    line = one_line_error(indexer("list", "--db", db))
    assert line == (f"Error: {db}/indexer.json is unreadable and {db} {why}: if it is an index folder, "
                    "move it away and build again (indexer build PATH --db DIR); else pass another --db")
    assert (db / "indexer.json").read_bytes() == b"\x00garbage"  # left as it was


def test_a_damaged_embedding_cache_is_moved_aside_even_on_an_unchanged_rebuild(built):
    corpus, db = built
    cache = db / "cache" / "embeddings.sqlite"
    cache.write_bytes(cache.read_bytes()[:1000])
    done = indexer("build", corpus, "-s", "fixed64", "--db", db)
    assert done.returncode == 0 and "unchanged" in done.stdout, done.stderr
    assert "the embedding cache" in done.stdout and "was damaged" in done.stdout
    assert list((db / "cache").glob("embeddings.sqlite.damaged-*"))


def test_a_manifest_entry_without_a_hash_means_a_full_rebuild(built):
    corpus, db = built
    path = _side(db) / "manifest.json"
    data = json.loads(path.read_text())
    del data["files"]["kargo-ve-teslimat.md"]["hash"]
    path.write_text(json.dumps(data))
    done = indexer("build", corpus, "-s", "fixed64", "--db", db)
    assert done.returncode == 0 and "full build: no readable file manifest beside the previous version" in done.stdout


def test_questions_that_are_not_objects_and_outputs_into_missing_folders(built, tmp_path):
    corpus, db = built
    bad = tmp_path / "q.jsonl"
    bad.write_text('["not", "an", "object"]\n')
    assert "line 1: a question is a JSON object, not list" in one_line_error(
        indexer("eval", bad, "-s", "fixed64", "--db", db, "--corpus", corpus))
    started = time.time()
    done = indexer("eval", QUESTIONS, "-s", "fixed64", "--db", db, "--plot", tmp_path / "no" / "such" / "p.png")
    assert done.returncode == 2 and "does not exist" in done.stderr and time.time() - started < 30


def test_a_full_disk_is_a_one_line_error_and_leaves_nothing_half_built(tmp_path):
    small = tmp_path / "small"
    if not small_disk(small, "1m"):
        pytest.skip("LOUD SKIP: cannot mount a small tmpfs here (needs root); the full-disk path is untested")
    try:
        corpus = copy_corpus(tmp_path / "corpus")
        line = one_line_error(indexer("build", corpus, "-s", "fixed64", "--db", small / "db"))
        assert "full" in line or "space" in line
        assert not (small / "db").exists() or not any((small / "db").iterdir())  # no empty index left behind
    finally:
        subprocess.run(["umount", str(small)])


def test_a_full_disk_is_told_apart_from_a_damaged_index_and_loses_nothing(tmp_path):
    small = tmp_path / "small"
    if not small_disk(small, "16m"):
        pytest.skip("LOUD SKIP: cannot mount a small tmpfs here (needs root); the full-disk path is untested")
    try:
        corpus, db = copy_corpus(tmp_path / "corpus"), small / "db"
        assert indexer("build", corpus, "-s", "fixed64", "--db", db, "-q").returncode == 0
        ask = ("query", "kargo kaç gün", "-s", "fixed64", "--db", db, "--json")
        expected = indexer(*ask).stdout
        told = re.compile(rf"Error: the disk holding {re.escape(str(db))} is full \(\d+\.\d MB free\); "
                          r"free space and retry — nothing was lost")
        filler = fill(small)  # no byte left: SQLite says "database or disk is full"
        for args in (("build", corpus, "-s", "fixed64", "--db", db, "--full"),
                     ("build", corpus, "-s", "headers", "--db", db), ("gc", "--db", db),
                     ("drop", "-s", "fixed64", "--db", db)):
            line = one_line_error(indexer(*args))
            assert told.fullmatch(line), line  # never "corrupt, move the folder away"
        # readers answer on a full disk as on a read-only mount, and say nothing of it
        done = indexer(*ask)
        assert (done.returncode, done.stdout, done.stderr) == (0, expected, ""), done.stderr
        for mode in ("bm25", "embedding"):
            done = indexer(*ask, "-m", mode)
            assert done.returncode == 0 and len(done.stdout.splitlines()) == 5 and not done.stderr, done.stderr
        for args in (("list", "--db", db), ("dump", "-s", "fixed64", "--db", db)):
            done = indexer(*args)
            assert done.returncode == 0 and done.stdout and not done.stderr, done.stderr
        filler.unlink()
        filler = fill(small, leave=700 * 1024)  # a little room: Chroma's own failure names no disk
        line = one_line_error(indexer("build", corpus, "-s", "fixed64", "--db", db, "--full"))
        assert told.fullmatch(line), line
        filler.unlink()
        assert indexer(*ask).stdout == expected  # space freed: the same answers
        assert indexer("build", corpus, "-s", "fixed64", "--db", db, "-q").returncode == 0
        shutil.rmtree(db / "indexes")  # a machine without the side files rebuilds them, in memory when full
        fill(small)
        done = indexer(*ask, "-m", "bm25")
        assert done.returncode == 0 and len(done.stdout.splitlines()) == 5 and not done.stderr, done.stderr
    finally:
        subprocess.run(["umount", str(small)])


def test_queries_on_a_full_disk_leave_no_temporary_file_and_gc_removes_old_leftovers(tmp_path):
    """Issue 51 G15: zero-byte `.verified.json.*.tmp` files left by every query, kept by gc."""
    small = tmp_path / "small"
    if not small_disk(small, "16m"):
        pytest.skip("LOUD SKIP: cannot mount a small tmpfs here (needs root); the full-disk path is untested")
    try:
        corpus, db = copy_corpus(tmp_path / "corpus"), small / "db"
        assert indexer("build", corpus, "-s", "fixed64", "--db", db, "-q").returncode == 0
        [side] = (db / "indexes").glob("*/g*")  # not `_side`: an open store would keep the disk busy
        for mode in ("bm25", "embedding", "hybrid"):
            for record in side.rglob("verified.json"):
                record.unlink()  # the query checks every file again and records it: a write
            filler = fill(small)  # again: what a query frees (Chroma's own files) is taken back
            done = indexer("query", "kargo kaç gün", "-s", "fixed64", "--db", db, "-m", mode)
            assert done.returncode == 0 and not done.stderr, done.stderr
            assert not list(side.rglob("verified.json"))  # the disk was full: no record
        assert not list(db.rglob("*.tmp"))
        filler.unlink()
        # what writers killed mid-write leave, old enough to be leftovers; a fresh one is kept
        old = [side / "bm25" / ".verified.json.0badf00d.tmp", side / ".rows.0badf00d.rows.tmp",
               db / "indexer.json.0badf00d.tmp"]
        old[0].write_bytes(b"")
        old[1].mkdir()
        (old[1] / "blob.npy").write_bytes(b"x" * 1000)
        old[2].write_text("{")
        for path in [*old, old[1] / "blob.npy"]:
            os.utime(path, (time.time() - 3600, time.time() - 3600))
        fresh = side / "rows" / ".params.json.0badf00d.tmp"
        fresh.write_text("{")
        done = indexer("gc", "--db", db)
        assert done.returncode == 0, done.stderr
        assert not any(os.path.lexists(p) for p in old) and fresh.exists()
        assert indexer("query", "kargo kaç gün", "-s", "fixed64", "--db", db).returncode == 0
    finally:
        subprocess.run(["umount", str(small)])


def test_ctrl_c_on_a_first_build_says_nothing_was_built_and_leaves_no_folder(tmp_path):
    corpus = copy_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    proc = paused(["build", corpus, "-s", "fixed64", "--db", db], "embedding", tmp_path / "m")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().endswith("Error: interrupted; nothing was built"), err
    assert not db.exists()


def test_ctrl_c_before_anything_new_is_built_over_an_index_says_it_is_as_before(tmp_path):
    """A stranger's Ctrl-C while a new strategy was first built over an index said "the
    previous version of the index is untouched" of a strategy that never had one."""
    corpus = copy_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    assert indexer("build", corpus, "-s", "fixed64", "--db", db, "-q").returncode == 0
    proc = paused(["build", corpus, "-s", "headers", "--db", db], "embedding", tmp_path / "m")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().endswith("Error: interrupted; nothing new was built, and the index is as it was before"), err
    listed = indexer("list", "--db", db, "--json")
    assert [json.loads(line)["strategy"] for line in listed.stdout.splitlines()] == ["fixed64"]


@pytest.mark.parametrize("first", [True, False])
def test_ctrl_c_after_one_strategy_is_built_names_what_was_built(tmp_path, first):
    """A stranger's `build -s auto -s headers` interrupted during headers said "nothing was
    built" (or, over an index, that the index was as before) while auto's
    new version was already live and answering."""
    corpus = copy_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    if not first:
        assert indexer("build", corpus, "-s", "fixed64", "--db", db, "-q").returncode == 0
        (corpus / "yeni.md").write_text("# Yeni\n\nYeni bir sayfa: hediye paketi ücretsizdir.\n", encoding="utf-8")
    proc = paused(["build", corpus, "-s", "fixed64", "-s", "headers", "--db", db], "published", tmp_path / "m")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    untouched = "" if first else "; their previous versions, if any, are untouched"
    assert proc.returncode == 130, err
    assert err.strip().endswith(f"Error: interrupted; built: fixed64; not built: headers{untouched}"), err
    listed = indexer("list", "--db", db, "--json")
    assert [json.loads(line)["strategy"] for line in listed.stdout.splitlines()] == ["fixed64"]
    found = indexer("query", "hediye paketi", "-s", "fixed64", "--db", db, "-m", "bm25", "-k", "1")
    assert found.returncode == 0 and ("yeni.md" in found.stdout) == (not first), found.stderr


def test_a_shared_tokenizer_cache_is_readable_by_every_user(tmp_path):
    clean = {k: v for k, v in env(INDEXER_CACHE_DIR=str(tmp_path / "cache")).items() if k != "TIKTOKEN_CACHE_DIR"}
    code = ("from indexer.settings import Settings; from indexer.text.tokens import get_tokenizer; "
            "get_tokenizer(cache_dir=Settings.load().tiktoken_dir)")
    done = subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o044 == 0o044 for p in files), [oct(p.stat().st_mode) for p in files]


def test_a_servers_data_folder_is_collected_by_path(tmp_path):
    proc, url = start_chroma(tmp_path / "server")
    try:
        corpus = copy_corpus(tmp_path / "corpus", {"kargo-ve-teslimat.md", "iade-ve-geri-odeme.md"})
        for _ in range(3):
            done = indexer("build", corpus, "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "m", "--full", "-q")
            assert done.returncode == 0, done.stderr
        data = tmp_path / "server" / "data"
        before = [p for p in data.iterdir() if p.is_dir()]
        assert len(before) > 2  # Chroma keeps what it deleted (chroma-core/chroma#5259)
        done = indexer("gc", "--chroma-url", url, "--db", tmp_path / "m", "--chroma-path", data)
        assert done.returncode == 0 and "deleted collection" in done.stdout, done.stdout + done.stderr
        assert len([p for p in data.iterdir() if p.is_dir()]) == 2
        hits = indexer("query", "kargo", "-s", "fixed64", "--chroma-url", url, "--db", tmp_path / "m", "--json")
        assert hits.returncode == 0 and len(hits.stdout.splitlines()) == 5
    finally:
        stop(proc)


def test_a_file_name_that_is_not_utf8_is_skipped_not_fatal(tmp_path):
    corpus = copy_corpus(tmp_path / "corpus", {"kargo-ve-teslimat.md"})
    (corpus / os.fsdecode(b"bad-\xff\xfe-name.md")).write_text("# Bad\n\nText.\n", encoding="utf-8")
    done = indexer("build", corpus, "-s", "headers", "--db", tmp_path / "db")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "the name is not valid UTF-8; rename it to index it" in done.stdout


def test_a_folder_left_with_only_the_embedding_cache_is_built_in(tmp_path, write_files):
    # a failed first build removes the index folder, but another process may hold the
    # embedding cache open: what is left must not make the next build refuse the folder
    corpus = write_files({"a.md": "# A\n\nBir cümle burada.\n"})
    db = tmp_path / "db"
    (db / "cache").mkdir(parents=True)
    (db / "cache" / "embeddings.sqlite").write_bytes(b"")
    [report] = build([corpus], ["headers"], settings=Settings.load(db=db))
    assert report.chunks == 1 and (db / "indexer.json").exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="not an indexer database"):
        build([corpus], ["headers"], settings=Settings.load(db=tmp_path / "other"))
