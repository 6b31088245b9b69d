"""The rows kept beside each version (`indexer.retrieval.rows.table`): the same records Chroma holds
for that version — after full builds, incremental ones that keep a delta and ones that
merge it — what queries read their texts from, what an incremental build finds a file's
records by, and what a one-shot query over a large collection scans instead of loading
Chroma's HNSW index. Missing or damaged rows fall back to Chroma."""

import numpy as np
import pytest

import indexer.retrieval.rows.writer as rows_module
import indexer.retrieval.searching.sides as sides_module
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.retrieval import Index
from indexer.retrieval.rows.table import SIDE, RowStore, open_rows
from indexer.settings import Settings
from tests.test_reliability import change_corpus, make_corpus

QUERIES = ["kargo ücreti ne kadar", "iade süresi kaç gün", "hediye kartı geçerlilik", "taksit seçenekleri"]


def assert_rows_match_chroma(db, name="fixed64"):
    index = Index.open(name, settings=Settings.load(db=db))
    rows = index.snapshot().parts.rows
    assert rows is not None, "no rows beside the version"
    live = {c.id: c for c in index.chunks()}  # read from Chroma
    assert rows.n == index.entry.chunks == len(live)
    assert rows.records(live) == live
    # the live rows are exactly the version's: a scan over every vector returns them all
    every = rows.nearest(index.snapshot().sides.query_vector("kargo"), rows.n + 10)
    assert sorted(cid for cid, _ in every) == sorted(live)
    return index, rows


def test_rows_hold_what_chroma_holds_through_full_and_incremental_builds(tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    index, rows = assert_rows_match_chroma(db)
    assert rows.delta is None and len(rows.deleted) == 0
    # nearest by an exact scan = Chroma's HNSW on a collection this small
    for q in QUERIES:
        vector = index.snapshot().sides.query_vector(q)
        chroma = index.store.records.nearest(index.entry, vector, 10)
        scanned = rows.nearest(vector, 10)
        assert [c for c, _ in scanned] == [c for c, _ in chroma]
        assert np.allclose([s for _, s in scanned], [s for _, s in chroma], atol=1e-4)

    monkeypatch.setattr(rows_module, "MERGE_SHARE", 10.0)  # keep a delta
    change_corpus(corpus)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental" and report.retired > 0
    _, rows = assert_rows_match_chroma(db)
    assert rows.delta is not None and len(rows.deleted) == report.retired
    base_file = open_rows(index.store, index.store.catalogue.find("fixed64")).source[0] / "vectors.npy"
    assert base_file.stat().st_nlink == 2, "the base was copied, not linked from the previous generation"

    monkeypatch.setattr(rows_module, "MERGE_SHARE", 0.0)  # merge into a new base
    (corpus / "kargo-ve-teslimat.md").write_text("# Kargo\n\nKargo artık 2 günde gelir.\n", encoding="utf-8")
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental"
    _, rows = assert_rows_match_chroma(db)
    assert rows.delta is None and len(rows.deleted) == 0

    # the same folder built from scratch holds the same records
    build([corpus], ["fixed64"], settings=Settings.load(db=tmp_path / "fresh"))
    fresh = Index.open("fixed64", settings=Settings.load(db=tmp_path / "fresh")).snapshot().parts.rows
    ids = [c.id for c in Index.open("fixed64", settings=Settings.load(db=db)).chunks()]
    assert fresh.records(ids) == rows.records(ids)


def test_a_one_shot_query_over_a_large_collection_scans_the_rows(tmp_path, monkeypatch):
    db = tmp_path / "db"
    build([make_corpus(tmp_path / "corpus")], ["fixed64"], settings=Settings.load(db=db))
    long_lived = Index.open("fixed64", settings=Settings.load(db=db))
    monkeypatch.setattr(sides_module, "EXACT_UNDER", 0)  # the long-lived handle asks HNSW...
    monkeypatch.setattr(sides_module, "SCAN_FROM", 0)  # ...and "large" starts from the first chunk
    one_shot = Index.open("fixed64", one_shot=True, settings=Settings.load(db=db))
    calls = []
    monkeypatch.setattr(one_shot.store.records, "nearest", lambda *a: calls.append(a) or [])
    for q in QUERIES:
        for mode in ("embedding", "hybrid"):
            a = [(h.chunk.id, round(h.score, 4)) for h in long_lived.search(q, mode=mode, k=5)]
            b = [(h.chunk.id, round(h.score, 4)) for h in one_shot.search(q, mode=mode, k=5)]
            assert a == b
    assert not calls, "the one-shot handle asked Chroma's vector index"


def test_a_small_collection_is_searched_exactly(tmp_path, monkeypatch):
    """Under EXACT_UNDER chunks every handle scans the rows instead of asking HNSW, which
    is approximate (near-duplicate chunks can hide the nearest ones from it): the embedding
    side is the exact cosine ranking of every chunk."""
    db = tmp_path / "db"
    build([make_corpus(tmp_path / "corpus")], ["fixed64"], settings=Settings.load(db=db))
    index = Index.open("fixed64", settings=Settings.load(db=db))
    monkeypatch.setattr(index.store.records, "nearest", lambda *a: pytest.fail("asked Chroma's vector index"))
    chunks = index.chunks()
    vectors = np.asarray(index.embedder.embed_documents([c.indexed_text for c in chunks]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for q in QUERIES:
        q_vec = index.snapshot().sides.query_vector(q)
        cosines = vectors @ (q_vec / np.linalg.norm(q_vec))
        expected = [chunks[i].id for i in np.argsort(-cosines, kind="stable")[:8]]
        got = index.search(q, mode="embedding", k=8)
        assert [h.chunk.id for h in got] == expected
        assert np.allclose([h.score for h in got], np.sort(cosines)[::-1][:8], atol=1e-4)


def test_missing_or_damaged_rows_fall_back_to_chroma(tmp_path):
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    index = Index.open("fixed64", settings=Settings.load(db=db))
    expected = [h.chunk for h in index.search(QUERIES[0], mode="hybrid", k=5)]
    folder = index.store.side.path(index.entry, SIDE)
    blob = folder / "blob.npy"
    blob.write_bytes(blob.read_bytes()[:-10])  # truncated: no longer its checksum
    assert open_rows(index.store, index.entry) is None
    with pytest.raises(Exception):
        RowStore.open(folder)
    again = Index.open("fixed64", settings=Settings.load(db=db))
    assert [h.chunk for h in again.search(QUERIES[0], mode="hybrid", k=5)] == expected
    # and says so, naming the rows (not the BM25 index) and the build that repairs them
    [said] = again.repairs
    assert said.startswith(f"the stored rows in {folder} are damaged (blob.npy does not match its checksum)")
    assert said.endswith(f"until a build rewrites them (indexer build {corpus.resolve()} -s fixed64 --embedder use-m3 --db {db})")
    # an incremental build rewrites them from Chroma first, then builds on them
    change_corpus(corpus)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental"
    assert any(n.startswith("rewrote the stored rows from the stored records") for n in report.notes)
    latest, _ = assert_rows_match_chroma(db)
    assert not latest.repairs
    assert latest.search("Kargo Sigortası hasar bildirimi", mode="bm25", k=3)


def test_an_unchanged_build_rewrites_damaged_rows(tmp_path):
    """Issue 51 G8: the warning does not stay on every query until `--full`."""
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    index = Index.open("fixed64", settings=Settings.load(db=db))
    vectors = index.store.side.path(index.entry, SIDE) / "vectors.npy"
    with open(vectors, "r+b") as fh:
        fh.truncate(1000)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "unchanged"
    assert any("vectors.npy does not match its checksum" in n for n in report.notes), report.notes
    after, _ = assert_rows_match_chroma(db)
    assert not after.repairs and after.entry.generation == index.entry.generation


def test_a_large_collection_s_incremental_builds_write_a_delta_merged_later(tmp_path, monkeypatch):
    """From `delta.DELTA_FROM` records on, an incremental build writes its records into a
    delta collection and does not open the collection itself (Chroma would load its whole
    HNSW index: seconds at a million records); reads cover both; a build merges the delta
    once it passes its share (`delta.COMPACT_SHARE`). Answers equal a from-scratch build's."""
    import indexer.store.delta as delta_module
    from indexer.store.chroma import Chroma
    from tests.conftest import raw_chroma

    monkeypatch.setattr(delta_module, "DELTA_FROM", 0)
    monkeypatch.setattr(delta_module, "COMPACT_SHARE", 10.0)  # no merge yet
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    main = Index.open("fixed64", settings=Settings.load(db=db)).entry.collection
    opened: list[str] = []
    real = Chroma.collection
    monkeypatch.setattr(Chroma, "collection", lambda self, name: opened.append(name) or real(self, name))
    change_corpus(corpus)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental" and report.written > 0
    assert main not in opened, "the incremental build opened the large collection itself"
    entry = Index.open("fixed64", settings=Settings.load(db=db)).entry
    assert (entry.collection, entry.delta) == (main, f"{main}-d")
    assert raw_chroma(db).collection(entry.delta).count() == report.written

    def answers(folder):
        index = Index.open("fixed64", settings=Settings.load(db=folder))
        return [[h.chunk.id for h in index.search(q, mode=mode, k=5)] for q in QUERIES for mode in ("embedding", "hybrid")]

    build([corpus], ["fixed64"], settings=Settings.load(db=tmp_path / "fresh"))
    assert answers(db) == answers(tmp_path / "fresh")
    assert_rows_match_chroma(db)  # its scan of the records reads both collections

    in_delta = set(raw_chroma(db).collection(entry.delta).get(include=[])["ids"])
    monkeypatch.setattr(delta_module, "COMPACT_SHARE", 0.0)  # merge before the next build writes
    (corpus / "magaza-teslim.md").write_text(NEW_FILE_2, encoding="utf-8")
    [merged] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert merged.mode == "incremental" and any("merged the delta collection" in n for n in merged.notes)
    entry = Index.open("fixed64", settings=Settings.load(db=db)).entry
    chroma = raw_chroma(db)
    assert chroma.collection(entry.delta).count() == merged.written  # only the new build's records
    assert in_delta <= set(chroma.collection(main).get(include=[])["ids"])  # moved into the collection
    build([corpus], ["fixed64"], settings=Settings.load(db=tmp_path / "fresh2"))
    assert answers(db) == answers(tmp_path / "fresh2")
    assert_rows_match_chroma(db)


NEW_FILE_2 = "# Mağaza Teslim\n\nSiparişinizi mağazalardan 10 gün içinde teslim alabilirsiniz.\n"


def test_a_long_lived_handle_follows_builds_into_a_new_delta_collection(tmp_path):
    """A server that never restarts, on an embedded database, while another process's
    incremental builds create the delta collection, write into it and merge it: each
    search answers from the version live at the time, new records included."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    index = Index.open("fixed64", refresh=0.0, settings=Settings.load(db=db))
    assert index.search("kargo", mode="hybrid", k=3)
    script = ("import sys; import indexer.store.delta as d; d.DELTA_FROM = 0; d.COMPACT_SHARE = float(sys.argv[3]);"
              "from indexer.indexing.building import build; from indexer.settings import Settings;"
              "[r] = build([sys.argv[1]], ['fixed64'], settings=Settings.load(db=sys.argv[2]));"
              "print(r.mode)")
    for i, share in enumerate(("10", "10", "0")):  # create the delta, write into it, merge it (then a new one)
        (corpus / f"yeni-{i}.md").write_text(f"# Yeni {i}\n\nZümrüt{i} paketleri {i + 2} günde teslim edilir.\n",
                                             encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", script, str(corpus), str(db), share], cwd=ROOT,
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip() == "incremental", done.stderr[-2000:]
        for mode in ("embedding", "bm25", "hybrid"):
            hits = index.search(f"Zümrüt{i} paketleri kaç günde teslim edilir", mode=mode, k=5)
            assert f"yeni-{i}.md" in {h.chunk.doc_id for h in hits}, (i, mode)
        assert index.entry.delta == f"{index.entry.collection}-d"


def test_a_merge_that_fails_leaves_the_build_and_a_full_rebuild_working(tmp_path, monkeypatch):
    """Chroma can refuse writes into a collection whose merge was killed (its log no longer
    applies to the HNSW index: chroma-core/chroma#7678). The merge then does not fail the
    build: the delta stays and takes the records, the build says how to rebuild, and
    `--full` (which does not merge) rebuilds."""
    import indexer.store.delta as delta_module
    from indexer.errors import StoreError

    monkeypatch.setattr(delta_module, "DELTA_FROM", 0)
    corpus = make_corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    (corpus / "a.md").write_text("# A\n\nİlk not.\n", encoding="utf-8")
    build([corpus], ["fixed64"], settings=Settings.load(db=db))  # makes the delta
    monkeypatch.setattr(delta_module, "COMPACT_SHARE", 0.0)

    def wedged(self, entry, grace=0.0):
        raise StoreError("Error in compaction: Failed to apply logs to the hnsw segment writer")

    monkeypatch.setattr(delta_module.Deltas, "compact", wedged)
    (corpus / "b.md").write_text("# B\n\nİkinci not: Zümrüt paketi.\n", encoding="utf-8")
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental" and any(f"indexer build {corpus} --full -s fixed64 --embedder use-m3 --db {db} rebuilds" in n for n in report.notes)
    index = Index.open("fixed64", settings=Settings.load(db=db))
    assert index.entry.delta and "b.md" in {h.chunk.doc_id for h in index.search("Zümrüt paketi", k=3)}
    [full] = build([corpus], ["fixed64"], BuildOptions(full=True), settings=Settings.load(db=db))
    assert full.mode == "full" and not Index.open("fixed64", settings=Settings.load(db=db)).entry.delta
