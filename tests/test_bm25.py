import importlib.util
import json
import mmap
import os

import numpy as np
import pytest

from indexer.chunkers import parse_strategy
from indexer.loaders import load_documents
from indexer.retrieval.bm25.index import BM25Index
from indexer.text.analyzer import Analyzer, detect_language
from tests.conftest import CORPUS


def test_turkish_analyzer():
    a = Analyzer(lang="tr", fold=False, stem=0)
    assert a("KARGO İADE") == a("kargo iade") == ["kargo", "iade"]
    assert a("ISPARTA") == ["ısparta"]
    assert a("Van'ın 5.000 TL ve 89,90 TL, 1.5 sürüm") == ["van", "5000", "tl", "ve", "89,90", "tl", "1.5", "sürüm"]
    stem = Analyzer(lang="tr", fold=False, stem=5)
    assert stem("teslimatı teslimat teslim") == ["tesli", "tesli", "tesli"]
    fold = Analyzer(lang="tr", fold=True, stem=0)
    assert fold("Yurtdışına gönderim ücreti") == fold("yurtdisina gonderim ucreti") == ["yurtdisina", "gonderim", "ucreti"]
    stop = Analyzer(lang="tr", fold=False, stem=0, stopwords=True)
    assert stop("bu ve bir kargo için") == ["kargo"]


def test_english_analyzer():
    a = Analyzer(lang="en", fold=True, stem=0)
    assert a("The user's API key doesn't EXPIRE; 5,000 requests") == [
        "the", "user", "api", "key", "doesnt", "expire", "5000", "requests"]
    assert a("İstanbul") == ["istanbul"]


def test_codes_and_identifiers_are_whole_unstemmed_terms_with_their_parts():
    tr, en = Analyzer.for_language("tr"), Analyzer.for_language("en")
    for a in (tr, en):
        assert a("E-4021")[0] == a("E4021")[0] == a("e4021")[0] == "e4021"  # never cut to `e402`
        assert a("E4021'i")[0] == "e4021"  # a Turkish suffix after the apostrophe goes
        assert a("v2.3.1") == ["v2.3.1", "2.3.1"] and a("1.26.4") == ["1.26.4"]
        assert a("5GB") == ["5gb", "5", "gb"] and a("5 GB") == ["5", "gb"]  # a quantity meets its parts
        assert a("3-5 iş")[:3] == ["3-5", "3", "5"]  # a range: not `35`
        assert a("AES-256")[0] == "aes256" and a("x86_64")[0] == "x8664"
    assert tr("selamlama499") == ["selamlama499", "sela", "499"]  # the word part is a word, stemmed
    assert en("QueueWorker.drain") == ["queueworker.drain", "queueworker", "queue", "worke", "drain"]
    assert en("max_bytes") == ["maxbytes", "max", "bytes"]
    assert en("router.ts")[0] == "router.ts" and en("os.path.join")[0] == "os.path.join"
    assert tr("e-posta") == ["e", "post"]  # a hyphen between letters still parts words
    assert tr("9b2f6c0e41d8a37f5e6b1c2d3a4f5e6b") == ["9b2f6c0e41d8a37f5e6b1c2d3a4f5e6b"]  # opaque: no parts
    assert tr("Van'ın 5.000 TL") == ["van", "5000", "tl"]


def test_exact_terms_are_codes_identifiers_and_versions_not_quantities():
    a = Analyzer.for_language("tr")
    assert a.exact_terms("E-4021 hatası nedir") == ["e4021"]
    assert a.exact_terms("QueueWorker.drain ve max_bytes, v2.3.1") == ["queueworker.drain", "maxbytes", "v2.3.1"]
    assert a.exact_terms("5GB kota, 3-5 iş günü, 12 ay, 5.000 TL") == []
    assert a.exact_terms("kargo-ve-teslimat.md") == ["teslimat.md"]
    assert Analyzer.for_language("tr", codes=False).exact_terms("E4021") == []


def test_the_old_analysis_stays_available_for_comparison():
    old = Analyzer.for_language("tr", codes=False)
    assert old("E4021 selamlama499") == ["e402", "sela"]  # what version 1 did: the codes cut
    assert old.describe() == "tr-fold-stem4-stop-v1"
    assert Analyzer.from_dict(old.to_dict()) == old and old.to_dict()["version"] == 2


def test_language_detection():
    assert detect_language(["Siparişiniz kargoya verildiğinde size bir e-posta gönderilir ve takip numarası iletilir."]) == "tr"
    assert detect_language(["The agent sends metrics to the collector and retries with backoff."]) == "en"


@pytest.fixture(scope="module")
def headers_chunks():
    _, docs = load_documents([CORPUS])
    chunker = parse_strategy("headers").create()
    return [c for d in docs for c in chunker.chunk(d)]


def questions():
    return [json.loads(line)["question"] for line in (CORPUS / "questions.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("engine", ["postings", "bm25s"])
def test_every_engine_ranks_the_bundled_questions_as_the_reference_does(headers_chunks, engine):
    if engine == "bm25s":
        pytest.importorskip("bm25s")
    ids = [c.id for c in headers_chunks]
    texts = [c.indexed_text for c in headers_chunks]
    analyzer = Analyzer.for_language("tr")
    slow = BM25Index.build(ids, texts, analyzer, "rank-bm25")
    fast = BM25Index.build(ids, texts, analyzer, engine)
    assert fast.engine == engine
    for q in questions():
        a, b = slow.scores(q), fast.scores(q)
        assert np.allclose(a, b, rtol=1e-4, atol=1e-5)
        assert [p for p, _ in slow.search(q, 5)] == [p for p, _ in fast.search(q, 5)]


def test_save_and_load_without_pickle(headers_chunks, tmp_path):
    ids = [c.id for c in headers_chunks]
    index = BM25Index.build(ids, [c.indexed_text for c in headers_chunks], Analyzer.for_language("tr"))
    index.save(tmp_path / "bm25")
    files = sorted(p.name for p in (tmp_path / "bm25").iterdir())
    assert all(name.endswith((".npy", ".json")) for name in files)
    for name in files:
        if name.endswith(".npy"):
            np.load(tmp_path / "bm25" / name, allow_pickle=False)  # plain arrays only
    params = json.loads((tmp_path / "bm25" / "params.json").read_text())
    assert params["format"] == 4 and params["analyzer"]["stem"] == 4 and params["analyzer"]["stopwords"]
    # every file, and params itself; verified.json is the record of checks, not part of the index
    assert set(params["sha256"]) == set(files) - {"params.json", "verified.json"} | {"params"}
    query = "hediye kartı bakiyesi ne kadar süre geçerli"
    for engine in ("rank-bm25", "bm25s", "postings"):
        if engine == "bm25s" and importlib.util.find_spec("bm25s") is None:
            continue
        loaded = BM25Index.load(tmp_path / "bm25", engine=engine)
        assert loaded.ids == ids
        assert [p for p, _ in loaded.search(query, 5)] == [p for p, _ in index.search(query, 5)]


def test_unknown_terms_and_empty_queries_score_zero(headers_chunks):
    index = BM25Index.build(["a"], ["kargo ücreti"], Analyzer.for_language("tr"))
    assert index.search("zzzz qqqq", 5) == []
    assert index.search("kargo", 5)[0][0] == 0


# -- the postings engine: incremental updates, mapped files, checks ---------------------------------------
def by_id(index, query):
    return {index.ids[p]: s for p, s in index.search(query, 1000)}


def split(chunks, changed):
    """(chunks of the first build, `changed` of them an incremental build retires, `changed` new ones)."""
    first = chunks[:-changed]
    return first, first[5 : 5 + changed], chunks[-changed:]


def assert_top_is_the_prefix_of_the_full_ranking(index, query):
    """`search` (which skips what cannot reach the top k) against every chunk scored."""
    scores = index.scores(query)
    full = [int(p) for p in np.lexsort((np.arange(len(scores)), -scores)) if scores[p] > 0]
    for k in (1, 2, 3, 5, 10):
        assert [p for p, _ in index.search(query, k)] == full[:k], (query, k)


def test_the_top_k_skips_postings_but_not_results(headers_chunks):
    index = BM25Index.build([c.id for c in headers_chunks], [c.indexed_text for c in headers_chunks],
                            Analyzer.for_language("tr"))
    for q in questions() + ["kargo kargo iade", "ve bir bu", "hediye kartı bakiyesi ne kadar süre geçerli kargo"]:
        assert_top_is_the_prefix_of_the_full_ranking(index, q)


def test_an_incremental_update_scores_as_a_fresh_build_of_the_same_chunks(headers_chunks, tmp_path):
    from indexer.retrieval.bm25.index import BM25Builder

    analyzer = Analyzer.for_language("tr")
    first, retired, new = split(headers_chunks, 2)  # 4 changes: under a tenth of 63
    base = BM25Index.build([c.id for c in first], [c.indexed_text for c in first], analyzer)
    base.save(tmp_path / "g1")
    fresh = BM25Builder(analyzer)
    fresh.add([c.id for c in new], [c.indexed_text for c in new])
    loaded = BM25Index.load(tmp_path / "g1")
    update = loaded.updated({c.id for c in retired}, fresh)
    assert len(update.postings.segments) == 2 and len(update.postings.deleted) == len(retired)  # base kept, a delta
    live = [c for c in first if c not in retired] + new
    reference = BM25Index.build([c.id for c in live], [c.indexed_text for c in live], analyzer, "rank-bm25")
    update.save(tmp_path / "g2")
    again = BM25Index.load(tmp_path / "g2", expected=len(live))
    for name in ("terms.npy", "docs.npy", "ids.npy"):  # the base is linked, not written again
        assert (tmp_path / "g2" / name).stat().st_ino == (tmp_path / "g1" / name).stat().st_ino
    for index in (update, again):
        assert index.n == len(live) and all(c.id not in index for c in retired) and all(c.id in index for c in new)
        for q in questions():
            got, want = by_id(index, q), by_id(reference, q)
            assert got.keys() == want.keys()
            assert np.allclose([got[i] for i in want], list(want.values()), rtol=1e-5)
            assert_top_is_the_prefix_of_the_full_ranking(index, q)
    # a second update on top of the first rewrites the delta: the first one's new chunks can go too
    second = BM25Builder(analyzer)
    second.add(["zz-new"], ["Kargo takip numarası nereden öğrenilir"])
    twice = again.updated({new[0].id}, second)
    assert new[0].id not in twice and "zz-new" in twice and twice.n == len(live)
    assert twice.search("kargo takip numarası", 1)[0][0] == twice.position("zz-new")


def test_a_delta_past_a_tenth_of_the_base_is_merged_into_a_new_one(headers_chunks):
    from indexer.retrieval.bm25.index import BM25Builder

    analyzer = Analyzer.for_language("tr")
    first, retired, new = split(headers_chunks, 5)
    base = BM25Index.build([c.id for c in first], [c.indexed_text for c in first], analyzer)
    fresh = BM25Builder(analyzer)
    fresh.add([c.id for c in new], [c.indexed_text for c in new])
    merged = base.updated({c.id for c in retired}, fresh)
    assert len(merged.postings.segments) == 1 and not len(merged.postings.deleted)
    live = [c for c in first if c not in retired] + new
    assert sorted(merged.ids) == sorted(c.id for c in live)
    reference = BM25Index.build([c.id for c in live], [c.indexed_text for c in live], analyzer)
    used = {t for c in live for t in analyzer(c.indexed_text)}
    assert set(merged.vocab) == used  # terms of retired chunks only are gone
    for q in questions():
        assert by_id(merged, q) == pytest.approx(by_id(reference, q), rel=1e-5)


def mapped(array) -> bool:
    while array is not None and not isinstance(array, mmap.mmap):
        array = getattr(array, "base", None)
    return array is not None


def test_files_are_mapped_and_hashed_again_only_when_their_identity_changes(headers_chunks, tmp_path, monkeypatch):
    from indexer.errors import IndexerError
    from indexer.retrieval.bm25 import files as bm25_files

    folder = tmp_path / "bm25"
    BM25Index.build([c.id for c in headers_chunks], [c.indexed_text for c in headers_chunks],
                    Analyzer.for_language("tr")).save(folder)
    hashed = []
    real = bm25_files.sha256_file
    monkeypatch.setattr(bm25_files, "sha256_file", lambda path: hashed.append(path.name) or real(path))
    index = BM25Index.load(folder)
    assert hashed == [] and mapped(index.postings.segments[0].docs)  # verified when written
    path = folder / "tfs.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # a bit flipped, same size
    stat = path.stat()
    path.write_bytes(bytes(data))
    with pytest.raises(IndexerError, match="tfs.npy does not match its checksum"):
        BM25Index.load(folder)  # a new modification time: hashed again
    assert hashed == ["tfs.npy"]
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the old time forced back: a load trusts the record,
    BM25Index.load(folder)
    with pytest.raises(IndexerError, match="tfs.npy does not match its checksum"):
        BM25Index.load(folder, check_all=True)  # a build checks every file
