"""What databases promise: a killed build never leaves a half-written index visible,
rebuilds are incremental and equal to building from scratch, and two builds of the same
strategy never interleave. Builds run as real `indexer build` subprocesses and are
killed with SIGKILL at build stages (INDEXER_PAUSE_AT, see tests/pausing.py)."""

import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import indexer.store.delta as delta_module
from indexer.indexing.building import build
from indexer.indexing.options import STAGES, BuildOptions
from indexer.retrieval import Index, search
from indexer.settings import Settings
from indexer.store.chroma import CATALOG
from indexer.store.physical import PhysicalCollections
from tests.conftest import CORPUS, ROOT, open_store, raw_chroma

NEW_SECTION = "\n\n## Kargo Sigortası\n\nTüm gönderiler 10.000 TL'ye kadar sigortalıdır. Hasar bildirimi 3 gün içinde yapılır.\n"
NEW_FILE = "# Mağaza Teslim\n\nSiparişinizi seçili mağazalardan teslim alabilirsiniz. Mağazada 7 gün bekletilir.\n"


def make_corpus(path):
    path.mkdir(parents=True, exist_ok=True)
    for md in CORPUS.glob("*.md"):
        shutil.copy(md, path / md.name)
    return path


def change_corpus(path):
    """Edit one file, delete one, add one."""
    with open(path / "kargo-ve-teslimat.md", "a", encoding="utf-8") as fh:
        fh.write(NEW_SECTION)
    (path / "hediye-kartlari.md").unlink()
    (path / "magaza-teslim.md").write_text(NEW_FILE, encoding="utf-8")


def cli_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    env.pop("INDEXER_DB", None)
    return env


def start_paused_build(corpus, db, point, tmp_path, strategy="fixed64"):
    marker = tmp_path / f"paused-{point}"
    marker.unlink(missing_ok=True)
    env = cli_env(INDEXER_PAUSE_AT=point, INDEXER_PAUSE_FILE=str(marker))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.pausing", "build", str(corpus), "--strategy", strategy, "--db", str(db), "-q"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.time() + 120
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"build exited before {point}: {proc.stderr.read()}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError(f"build never reached {point}")
        time.sleep(0.05)
    return proc


def live_state(db, strategy="fixed64"):
    index = Index.open(strategy, settings=Settings.load(db=db))
    return index.entry, index.count()


def physical_collections(db):
    return sorted(name for name, _ in raw_chroma(db).listing() if name != CATALOG)


@pytest.fixture
def v1(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    entry, count = live_state(db)
    assert count == report.chunks == entry.chunks
    return corpus, db, entry


@pytest.mark.parametrize("point", ["locked", "embedding", "publish", "published"])
def test_a_killed_build_leaves_a_complete_version(v1, tmp_path, point):
    corpus, db, old = v1
    change_corpus(corpus)
    proc = start_paused_build(corpus, db, point, tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)

    entry, count = live_state(db)
    assert entry.collection == old.collection  # an incremental build writes into the live collection...
    if point == "published":  # ...and the switch happened: the next generation is live and complete
        assert entry.generation == old.generation + 1
    else:  # ...which still answers with the previous generation, whole
        assert entry.generation == old.generation
    assert count == entry.chunks
    hits = search("kargo kaç günde gelir", "fixed64", k=5, mode="hybrid", settings=Settings.load(db=db))
    assert len(hits) == 5
    assert {h.chunk.doc_id for h in hits} <= {p.name for p in corpus.iterdir()} | {"magaza-teslim.md"}

    # the next build succeeds and removes what the killed one left behind
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    entry, count = live_state(db)
    assert count == entry.chunks == report.chunks
    assert physical_collections(db) == [entry.collection]
    assert sorted(p.name for p in (db / "indexes").iterdir()) == [entry.collection]
    records = raw_chroma(db).collection(entry.collection).get(include=["metadatas"])
    assert max(m["gen"] for m in records["metadatas"]) == entry.generation  # nothing of a dead build is left
    assert len(records["ids"]) == entry.chunks + len(entry.pending_ids)  # superseded ones wait out their grace
    if point != "published":
        assert report.mode == "incremental" and report.removed == 1 and report.added == 1


def test_a_build_tells_on_stage_each_stage_and_a_failure_there_keeps_the_live_version(v1):
    """`BuildOptions.on_stage`, the extension point the kill tests pause builds through:
    called at each stage in order (`embedding` once per batch written), only `locked`
    when nothing changed, and an exception raised there fails the build like any other:
    before `published`, the previous version stays live and whole."""
    corpus, db, old = v1
    settings = Settings.load(db=db)
    seen: list[str] = []
    [same] = build([corpus], ["fixed64"], BuildOptions(on_stage=seen.append), settings=settings)
    assert same.mode == "unchanged" and seen == ["locked"]

    def stop(stage: str) -> None:
        if stage == "publish":
            raise RuntimeError("stopped before publishing")

    change_corpus(corpus)
    with pytest.raises(RuntimeError, match="stopped before publishing"):
        build([corpus], ["fixed64"], BuildOptions(on_stage=stop), settings=settings)
    entry, count = live_state(db)
    assert (entry.collection, entry.generation) == (old.collection, old.generation) and count == entry.chunks

    seen.clear()
    [report] = build([corpus], ["fixed64"], BuildOptions(on_stage=seen.append), settings=settings)
    assert report.mode == "incremental" and report.written > 0
    assert seen[0] == "locked" and seen[-2:] == ["publish", "published"]
    assert set(seen[1:-2]) == {"embedding"}  # one per batch of new records
    assert tuple(dict.fromkeys(seen)) == STAGES
    assert live_state(db)[0].generation == old.generation + 1


def snapshot(db, strategy):
    """The live records of a collection (generation numbers aside)."""
    index = Index.open(strategy, settings=Settings.load(db=db))
    got = raw_chroma(db).collection(index.entry.collection).get(include=["embeddings", "documents", "metadatas"])
    order = [i for i in np.argsort(got["ids"]) if got["ids"][i] in index.live]
    return {
        "ids": [got["ids"][i] for i in order],
        "documents": [got["documents"][i] for i in order],
        "metadatas": [{k: v for k, v in got["metadatas"][i].items() if k != "gen"} for i in order],
        "embeddings": np.asarray(got["embeddings"])[order],
    }


def test_incremental_build_equals_a_from_scratch_build(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["headers", "fixed64"], settings=Settings.load(db=db))
    change_corpus(corpus)
    reports = {r.strategy: r for r in build([corpus], ["headers", "fixed64"], settings=Settings.load(db=db))}
    fresh = {r.strategy: r for r in build([corpus], ["headers", "fixed64"], settings=Settings.load(db=tmp_path / "fresh"))}
    for name in ("headers", "fixed64"):
        r = reports[name]
        assert (r.mode, r.added, r.changed, r.removed, r.unchanged) == ("incremental", 1, 1, 1, 8)
        # only the two touched files were chunked and embedded (some of their texts from the cache)
        touched = sum(1 for c in Index.open(name, settings=Settings.load(db=db)).chunks()
                      if c.doc_id in ("kargo-ve-teslimat.md", "magaza-teslim.md"))
        # ...and only their chunks that changed were written (the others kept their records)
        assert 0 < r.written == r.embedded + r.cache_hits <= touched
        a, b = snapshot(db, name), snapshot(tmp_path / "fresh", name)
        assert a["ids"] == b["ids"] and a["documents"] == b["documents"] and a["metadatas"] == b["metadatas"]
        # vectors pass through the float16 embedding cache: the model's batch-to-batch noise
        # (~1e-6) can round to a neighbouring float16 (one step is ~3e-5 near 0.05)
        assert np.allclose(a["embeddings"], b["embeddings"], atol=1e-3)
        assert fresh[name].chunks == r.chunks

    [same] = build([corpus], ["headers"], settings=Settings.load(db=db))
    assert same.mode == "unchanged" and same.embedded == 0 and same.cache_hits == 0
    [changed] = build([corpus], ["headers:overlap=8"], BuildOptions(name="headers"), settings=Settings.load(db=db))
    assert changed.mode == "full" and changed.reason == "parameters changed (overlap 64->8)"
    [other] = build([corpus], ["headers"], settings=Settings.load(db=db, embedder="e5-small"))
    assert other.reason == "first build with e5-small (kept: use-m3)"


def test_a_second_build_waits_or_fails_and_queries_see_the_previous_version(v1, tmp_path):
    corpus, db, old = v1
    change_corpus(corpus)
    holder = start_paused_build(corpus, db, "embedding", tmp_path)
    try:
        entry, count = live_state(db)  # a query during the build sees the previous version
        assert entry.collection == old.collection and count == old.chunks

        refused = subprocess.run(
            [sys.executable, "-m", "indexer", "build", str(corpus), "-s", "fixed64", "--db", str(db), "--no-wait"],
            env=cli_env(), capture_output=True, text=True, timeout=120,
        )
        assert refused.returncode == 1
        assert refused.stderr.strip() == (
            f"Error: another build of fixed64 (use-m3) is running on {db}; "
            "wait for it, or run the build without --no-wait to queue behind it"
        )

        waiter = subprocess.Popen(
            [sys.executable, "-m", "indexer", "build", str(corpus), "-s", "fixed64", "--db", str(db)],
            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = waiter.stderr.readline()
        assert line.strip() == "waiting for another build of fixed64 (use-m3) to finish..."
        time.sleep(0.5)
        assert waiter.poll() is None  # still queued behind the lock
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    out, err = waiter.communicate(timeout=300)
    assert waiter.returncode == 0, err
    assert out.splitlines()[1].split()[:2] == ["fixed64", "incremental"]
    entry, count = live_state(db)
    assert count == entry.chunks and entry.collection == old.collection and entry.generation == old.generation + 1
    assert physical_collections(db) == [entry.collection]


def test_a_build_over_an_untouched_folder_reads_no_file_and_sees_a_disguised_edit(tmp_path, monkeypatch):
    """Files whose identity (size, times in ns, inode) is the one recorded when they were
    hashed are not read again; an edit that keeps the size and forces the old modification
    time back still moves the change time, so the file is read and the edit found."""
    import indexer.indexing.manifest as manifest

    monkeypatch.setattr(manifest, "RACY_NS", 0)  # the test's files were written a moment ago
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    read: list[str] = []
    real = manifest.file_hash
    monkeypatch.setattr(manifest, "file_hash", lambda path: read.append(path.name) or real(path))
    [same] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert same.mode == "unchanged" and read == []

    target = corpus / "kargo-ve-teslimat.md"
    before = target.stat()
    text = target.read_text(encoding="utf-8")
    i = text.index("gün")
    target.write_text(text[:i] + "gön" + text[i + 3:], encoding="utf-8")  # same size in bytes: gün -> gön
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    [changed] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert read == ["kargo-ve-teslimat.md"]
    assert changed.mode == "incremental" and changed.changed == 1
    # a file touched but unchanged is read, and trusted again from the next version written
    os.utime(corpus / "iade-ve-geri-odeme.md")
    (corpus / "yeni.md").write_text("# Yeni\n\nYeni bir not.\n", encoding="utf-8")
    read.clear()
    [touched] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert touched.mode == "incremental" and touched.added == 1 and touched.changed == 0
    assert sorted(read) == ["iade-ve-geri-odeme.md", "yeni.md"]
    read.clear()
    [same] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert same.mode == "unchanged" and read == []


def test_only_a_killed_delta_build_makes_the_next_one_look_for_its_records(v1, monkeypatch):
    """A delta build marks its writes in the catalogue until it publishes; the next build
    scans the collection for an unpublished generation's records only when the mark was
    left (test_a_killed_build_leaves_a_complete_version covers the killed case)."""
    corpus, db, _ = v1
    change_corpus(corpus)

    def scan(*_a, **_kw):
        raise AssertionError("looked for a dead build's records after a clean one")

    monkeypatch.setattr(PhysicalCollections, "drop_generations_after", scan)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental"
    (corpus / "magaza-teslim.md").write_text(NEW_FILE + "\nEk not.\n", encoding="utf-8")
    [again] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert again.mode == "incremental"
    got = raw_chroma(db).catalogue().get(include=["documents"])
    assert not [cid for cid in got["ids"] if cid.startswith("writing:")]


def age_pending(db, strategy="fixed64"):
    """Every superseded record's grace period over (as if a minute had passed)."""
    store = open_store(db)
    entry = Index.open(strategy, settings=Settings.load(db=db)).entry
    for p in entry.pending:
        p["at"] = 0
    store.catalogue.publish(entry)


@pytest.mark.parametrize("delta", [False, True])
def test_a_file_deleted_then_restored_or_an_edit_undone_keeps_its_records(tmp_path, monkeypatch, delta):
    """Chunk ids follow content: a restored file, or an edit undone, writes ids that the
    version before retired and whose records wait out their grace. They are written again
    (not skipped as existing) and taken off the superseded list, so the grace's deletion
    does not remove them: every file keeps its records, in Chroma as in BM25."""
    if delta:  # the same with a large collection's delta collection
        monkeypatch.setattr(delta_module, "DELTA_FROM", 0)
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    kept = tmp_path / "odeme.md"
    shutil.move(corpus / "odeme-ve-taksit.md", kept)
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    shutil.move(kept, corpus / "odeme-ve-taksit.md")
    target = corpus / "kargo-ve-teslimat.md"
    original = target.read_text(encoding="utf-8")
    target.write_text(original.replace("gün", "hafta", 1), encoding="utf-8")
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    target.write_text(original, encoding="utf-8")  # the edit undone
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    age_pending(db)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))  # deletes what waited out its grace
    assert report.mode == "unchanged"
    build([corpus], ["fixed64"], settings=Settings.load(db=tmp_path / "fresh"))

    def state(folder):
        index = Index.open("fixed64", settings=Settings.load(db=folder))
        chunks = sorted((c.doc_id, c.start, c.text) for c in index.chunks())  # read from Chroma
        stored = set(index.store.records.get(index.entry, [c.id for c in index.chunks()]))
        hits = [h.chunk.doc_id for h in index.search("taksit seçenekleri kredi kartı", mode="embedding", k=3)]
        return chunks, len(stored), hits

    got, fresh = state(db), state(tmp_path / "fresh")
    assert got == fresh
    assert "odeme-ve-taksit.md" in got[2]
