import json

import numpy as np
import pytest

from indexer.text.analyzer import Analyzer, detect_language
from indexer.retrieval.bm25 import BM25Index
from indexer.chunkers import parse_strategy
from indexer.loaders import load_documents

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


def test_language_detection():
    assert detect_language(["Siparişiniz kargoya verildiğinde size bir e-posta gönderilir ve takip numarası iletilir."]) == "tr"
    assert detect_language(["The agent sends metrics to the collector and retries with backoff."]) == "en"


@pytest.fixture(scope="module")
def headers_chunks():
    _, docs = load_documents([CORPUS])
    chunker = parse_strategy("headers").create()
    return [c for d in docs for c in chunker.chunk(d)]


def test_both_engines_rank_the_bundled_questions_the_same_way(headers_chunks):
    pytest.importorskip("bm25s")
    ids = [c.id for c in headers_chunks]
    texts = [c.indexed_text for c in headers_chunks]
    analyzer = Analyzer.for_language("tr")
    slow = BM25Index.build(ids, texts, analyzer, "rank-bm25")
    fast = BM25Index.build(ids, texts, analyzer, "bm25s")
    questions = [json.loads(line)["question"] for line in (CORPUS / "questions.jsonl").read_text().splitlines()]
    for q in questions:
        a, b = slow.scores(q), fast.scores(q)
        assert np.allclose(a, b, rtol=1e-4, atol=1e-5)
        assert [p for p, _ in slow.search(q, 5)] == [p for p, _ in fast.search(q, 5)]


def test_save_and_load_without_pickle(headers_chunks, tmp_path):
    ids = [c.id for c in headers_chunks]
    index = BM25Index.build(ids, [c.indexed_text for c in headers_chunks], Analyzer.for_language("tr"), "bm25s")
    index.save(tmp_path / "bm25")
    files = sorted(p.name for p in (tmp_path / "bm25").iterdir())
    assert all(name.endswith((".npy", ".json")) for name in files)
    for name in files:
        if name.endswith(".npy"):
            np.load(tmp_path / "bm25" / name, allow_pickle=False)  # plain arrays only
    params = json.loads((tmp_path / "bm25" / "params.json").read_text())
    assert params["format"] == 2 and params["analyzer"]["stem"] == 4 and params["analyzer"]["stopwords"]
    assert set(params["sha256"]) == set(files) - {"params.json"} | {"params"}  # every file, and params itself
    query = "hediye kartı bakiyesi ne kadar süre geçerli"
    for engine in ("rank-bm25", "bm25s"):
        loaded = BM25Index.load(tmp_path / "bm25", engine=engine)
        assert loaded.ids == ids
        assert [p for p, _ in loaded.search(query, 5)] == [p for p, _ in index.search(query, 5)]


def test_unknown_terms_and_empty_queries_score_zero(headers_chunks):
    index = BM25Index.build(["a"], ["kargo ücreti"], Analyzer.for_language("tr"))
    assert index.search("zzzz qqqq", 5) == []
    assert index.search("kargo", 5)[0][0] == 0
