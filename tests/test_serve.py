"""`indexer serve`: the JSON API in-process (Starlette's TestClient), its safety cases,
the documents view rebuilt from stored chunks, boundary-quality marks, and the CLI's
refusals. One index serves this module and the browser test (tests/test_serve_browser.py):
the bundled corpus with headers and fixed64 (the session's `built_db`) plus a parent-child
collection of three documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.indexing.options import BuildOptions
from indexer.settings import Settings
from tests.conftest import CORPUS, ROOT

STRATEGIES = ["headers", "fixed64", "parent"]
PARENT_DOCS = ("garanti-ve-teknik-servis.md", "kargo-ve-teslimat.md", "iade-ve-geri-odeme.md")  # keeps the build short
TOKEN = "s3cret-token-for-tests-0123456789"
QUERY = "Van'da bir köyde oturuyorum, kargom kaç günde gelir?"
_BUILT: dict = {}


def serve_db(built_db, tmp_path_factory):
    """The session's headers + fixed64 index of the bundled corpus, copied, plus a
    parent-child collection of three of its documents: built once per test session."""
    if "db" not in _BUILT:
        import shutil

        from indexer.indexing.building import build

        db = tmp_path_factory.mktemp("serve") / "index"
        shutil.copytree(built_db[0], db)
        full = bool(os.environ.get("INDEXER_SCREENSHOTS"))  # README's screenshots: every document
        build([CORPUS], ["parent"], BuildOptions(include=() if full else PARENT_DOCS), settings=Settings.load(db=db))
        _BUILT["db"] = db
    return _BUILT["db"]


@pytest.fixture(scope="module")
def db(built_db, tmp_path_factory):
    return serve_db(built_db, tmp_path_factory)


def make_client(db, **kw):
    from starlette.testclient import TestClient

    from indexer.serve.app import create_app

    return TestClient(create_app(Settings.load(db=db), **kw), base_url="http://127.0.0.1")


@pytest.fixture(scope="module")
def client(db):
    return make_client(db)


@pytest.fixture(scope="module")
def question_set(client):
    from indexer.serve.questions import set_id

    wanted = set_id((CORPUS / "questions.jsonl").resolve())
    return next(s["id"] for s in client.get("/api/questions").json()["sets"] if s["id"] == wanted)


# -- the API ------------------------------------------------------------------------------------
def test_health_collections_and_openapi_cover_every_route(client):
    assert client.get("/api/health").json()["status"] == "ok"
    collections = {c["name"]: c for c in client.get("/api/collections").json()["collections"]}
    assert set(collections) == set(STRATEGIES)
    assert collections["parent"]["parent_child"] and not collections["headers"]["parent_child"]
    assert collections["headers"]["search"].startswith("hybrid")
    schema = client.get("/api/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    routes = {r.path for r in client.app.app.routes if r.path.startswith("/api/")}
    assert routes == set(schema["paths"])


def test_search_is_the_index_the_cli_uses_with_both_sides(client, db):
    from indexer.retrieval import Index, SearchOptions

    got = client.post("/api/search", json={"query": QUERY, "strategy": "headers", "mode": "hybrid", "k": 5}).json()
    want = Index.open("headers", settings=Settings.load(db=db)).search(QUERY, SearchOptions(mode="hybrid", k=5))
    assert [h["id"] for h in got["hits"]] == [h.chunk.id for h in want]
    assert got["mode"] == "hybrid" and got["search"].startswith("hybrid adaptive")
    assert got["ctx_tokens"] == sum(h["n_tokens"] for h in got["hits"])
    first = got["hits"][0]
    assert {"embedding_rank", "embedding_score", "bm25_rank", "bm25_score", "embedding_share"} <= set(first)
    bm25 = client.post("/api/search", json={"query": QUERY, "strategy": "headers", "mode": "bm25", "k": 3}).json()
    assert all(h["embedding_rank"] is None and h["bm25_rank"] == h["rank"] for h in bm25["hits"])


def test_search_with_a_doc_filter_ranks_within_the_document(client):
    doc = "iade-ve-geri-odeme.md"
    got = client.post("/api/search", json={"query": QUERY, "strategy": "fixed64", "k": 3, "doc": doc}).json()
    assert [h["rank"] for h in got["hits"]] == [1, 2, 3]
    assert all(h["doc_id"] == doc for h in got["hits"])
    assert all(h.get("collection_rank", h["rank"]) >= h["rank"] for h in got["hits"])


def test_a_budget_adds_the_answer_sized_context_the_library_packs(client, db):
    from indexer.retrieval import Index, SearchOptions

    body = {"query": QUERY, "strategy": "headers", "k": 5, "budget": 150}
    got = client.post("/api/search", json=body).json()
    want = Index.open("headers", settings=Settings.load(db=db)).context(QUERY, 150, SearchOptions(k=5))
    context = got["context"]
    assert context["text"] == want.text() and context["tokens"] == want.tokens <= 150
    assert context["whole_tokens"] == got["ctx_tokens"] > context["tokens"]
    for span in context["spans"]:
        document = (CORPUS / span["doc_id"]).read_text(encoding="utf-8")
        assert document[span["start"]:span["end"]] == span["text"]
    assert "context" not in client.post("/api/search", json={**body, "budget": None}).json()
    for bad, says in ((8, "budget must be from 16"), ("lots", "budget must be a whole number"),
                      (True, "budget must be a whole number")):
        answer = client.post("/api/search", json={**body, "budget": bad})
        assert answer.status_code == 400 and says in answer.json()["error"], answer.json()
    both = client.post("/api/search", json={**body, "doc": "iade-ve-geri-odeme.md"})
    assert both.status_code == 400 and "leave out doc" in both.json()["error"]


def test_parent_child_hits_carry_the_children_they_were_found_by(client):
    got = client.post("/api/search", json={"query": QUERY, "strategy": "parent", "k": 3}).json()
    assert got["parent_child"] and got["hits"]
    for hit in got["hits"]:
        assert hit["children"]
        for child in hit["children"]:
            assert hit["start"] <= child["start"] < child["end"] <= hit["end"]
            assert child["text"] in hit["text"]


def test_chunks_are_the_stored_chunks_with_their_parents(client, db):
    from indexer.retrieval import Index

    doc = "kargo-ve-teslimat.md"
    got = client.get("/api/chunks", params={"strategy": "fixed64", "doc": doc}).json()
    assert [c["id"] for c in got["chunks"]] == [c.id for c in Index.open("fixed64", settings=Settings.load(db=db)).chunks(doc)]
    parent = client.get("/api/chunks", params={"strategy": "parent", "doc": doc}).json()
    assert {c["parent_id"] for c in parent["chunks"]} == {p["id"] for p in parent["parents"]}


def test_the_documents_view_rebuilds_the_document_from_stored_chunks_only(client):
    doc = "kargo-ve-teslimat.md"
    view = client.get("/api/view", params=[("doc", doc), *(("strategy", s) for s in STRATEGIES)]).json()
    assert view["text"] == (CORPUS / doc).read_text(encoding="utf-8").rstrip("\n")
    assert view["conflicts"] == []
    lanes = {lane["name"]: lane for lane in view["lanes"]}
    assert lanes["headers"]["quality"]["inside"] == 0 and lanes["headers"]["overlap"] == 0
    quality = view["quality"]  # the columns of `indexer chunk`
    assert quality["headers"][:2] == ["inWord", "inSent"] and "inTable" in quality["headers"]
    assert quality["rows"]["headers"][:3] == ["0%", "0%", "0%"]
    fixed = lanes["fixed64"]
    assert fixed["quality"]["sentence"] > 0 and fixed["quality"]["table"] > 0  # blind windows cut both
    assert fixed["overlap"] > 0
    assert any(c["cuts"]["start"] for c in fixed["chunks"])
    assert all(c["indexed_text"].endswith(view["text"][c["start"]:c["end"]]) for c in fixed["chunks"])
    parent = lanes["parent"]
    assert parent["parent_child"] and parent["parents"]
    spans = {p["id"]: (p["start"], p["end"]) for p in parent["parents"]}
    assert all(spans[c["parent_id"]][0] <= c["start"] and c["end"] <= spans[c["parent_id"]][1] for c in parent["chunks"])


def test_boundary_marks_name_what_a_cut_falls_inside():
    from indexer.serve.marks import cut_marks, rebuilt_document, structure_of
    from indexer.types import Chunk

    text = ("# T\n\nOne sentence here. Another one follows.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n"
            "```python\nx = 1\ny = 2\n```\n\n- first item text\n- second item\n")
    structure = structure_of(rebuilt_document("doc.md", text))
    at = text.index
    cuts = [0, at("sentence here"), at(" Another"), at("| 3 |"), at("3 |"), at("y = 2"), at("item text"), at("- second"),
            at("tem\n") + 1, len(text) - 1]
    chunks = [Chunk(id=str(i), doc_id="doc.md", text=text[s:e], start=s, end=e, start_line=1, end_line=1, kind="window") for i, (s, e) in enumerate(zip(cuts, cuts[1:]))]
    marks, counts = cut_marks(structure, chunks)
    starts = [sorted(m["start"]) for m in marks[1:]]
    assert starts == [["sentence"], [], ["table"], ["row", "table"], ["code"], ["item", "sentence"], [],
                      ["item", "sentence", "word"]]
    assert counts["cuts"] == 8 and counts["inside"] == 6 and counts["word"] == 1
    assert marks[0]["start"] == [] and marks[-1]["end"] == []  # the document's own edges are no cuts


def test_a_layer_built_from_another_version_is_reported():
    from indexer.serve.documents import rebuild
    from indexer.types import Chunk

    def chunk(text, start):
        return Chunk(id="x", doc_id="d.md", text=text, start=start, end=start + len(text), start_line=1, end_line=1, kind="window")

    got = rebuild([("new", [chunk("Hello", 0), chunk("world", 6)]), ("old", [chunk("Hallo", 0)])])
    assert got.text == "Hello\nworld" and got.covered == 10 and got.conflicts == ["old"]


def test_compare_marks_hits_against_the_picked_question(client, question_set):
    questions = client.get(f"/api/questions/{question_set}").json()["questions"]
    q = questions[0]
    got = client.post("/api/compare", json={
        "query": q["question"], "strategies": ["headers", "parent"], "modes": ["bm25", "default"], "k": 5,
        "question_set": question_set, "question": q["id"]}).json()
    assert got["question"]["id"] == q["id"]
    assert [(r["strategy"], r["requested_mode"]) for r in got["results"]] == [
        ("headers", "bm25"), ("headers", "default"), ("parent", "bm25"), ("parent", "default")]
    lo, hi = q["answer_span"]
    for result in got["results"]:
        for hit in result["hits"]:
            strict = hit["doc_id"] == q["doc_id"] and hit["start"] <= lo and hi <= hit["end"]
            assert (hit["mark"] == "strict") == strict
    assert any(h["mark"] != "miss" for r in got["results"] for h in r["hits"])
    # the same strategy named twice answers once
    twice = client.post("/api/compare", json={"query": q["question"], "strategies": ["headers", "headers"],
                                              "modes": ["bm25"]}).json()
    assert [r["strategy"] for r in twice["results"]] == ["headers"]


def test_evaluation_gives_the_numbers_of_indexer_eval(client, db, question_set):
    from click.testing import CliRunner

    from indexer.cli import cli

    got = client.get("/api/evaluation", params={"set": question_set, "strategy": "headers", "mode": "bm25"}).json()
    assert "recall@5" in got["table"] and "95%" in got["intervals"]
    result = CliRunner().invoke(cli, ["eval", str(CORPUS / "questions.jsonl"), "--strategy", "headers", "--mode", "bm25",
                                      "--db", str(db), "--json", "-q"])
    assert result.exit_code == 0, result.output
    cli_row = json.loads(result.stdout.splitlines()[0])
    row = got["rows"][0]
    for key in ("recall@1", "recall@5", "recall@5_ci95", "mrr@10", "mrr@10_ci95", "strict@5", "ctx_tokens@5"):
        assert row[key] == cli_row[key], key


def test_evaluation_and_question_sets_show_no_absolute_server_path(db, question_set, monkeypatch, tmp_path):
    """Paths are relative to where serve started when inside it, else only their last
    names (issue 22: /api/evaluation gave the corpus's absolute path)."""
    for base, source in ((ROOT, "corpus"), (ROOT.parent, f"{ROOT.name}/corpus"), (tmp_path, "corpus")):
        monkeypatch.chdir(base)
        client = make_client(db)
        sets = client.get("/api/questions").json()["sets"]
        got = client.get("/api/evaluation", params={"set": question_set, "strategy": "headers", "mode": "bm25"})
        assert got.status_code == 200, got.text
        assert got.json()["source"] == source, base
        expected_name = "corpus/questions.jsonl" if base != ROOT.parent else f"{ROOT.name}/corpus/questions.jsonl"
        assert got.json()["name"] == expected_name
        assert expected_name in {s["name"] for s in sets}
        collections = client.get("/api/collections")
        unknown = client.post("/api/search", json={"query": "kargo", "strategy": "semantic"})
        compared = client.post("/api/compare", json={"query": "kargo", "strategies": ["semantic"]})
        assert unknown.status_code == 404 and "no collection for strategy 'semantic' in " in unknown.json()["error"]
        for text in (got.text, json.dumps(sets), collections.text, unknown.text, compared.text):
            assert str(ROOT) not in text and str(tmp_path) not in text and str(db) not in text
        # relative to where serve started when the index is inside it, else its name only
        inside = Path(base).resolve() in Path(db).resolve().parents
        assert collections.json()["where"] == (Path(db).resolve().relative_to(Path(base).resolve()).as_posix()
                                               if inside else db.name)


def test_a_question_set_about_other_documents_is_not_offered_and_refused(client, db, question_set):
    """Issue 35, item 2: sets found next to the corpus about documents no collection holds
    (the code, English and PDF samples) were offered, and scored 0 everywhere."""
    import re

    from indexer.serve.questions import set_id

    sets = {s["id"]: s for s in client.get("/api/questions").json()["sets"]}
    assert set(sets) == {question_set}  # not corpus/code, corpus/en nor corpus/pdf
    assert sets[question_set]["matches"] and set(sets[question_set]["collections"]) == set(STRATEGIES)
    code = set_id((CORPUS / "code" / "questions.jsonl").resolve())
    got = client.get("/api/evaluation", params={"set": code, "strategy": "headers", "mode": "bm25"})
    assert got.status_code == 422
    error = got.json()["error"]
    assert re.fullmatch(r"\S*corpus/code/questions.jsonl: none of its questions is about a document in headers "
                        r"\(use-m3\) \(built from \S*corpus; the questions are about \S*corpus/code\): build the folder "
                        r"the questions are about \(indexer build \S*corpus/code --strategy headers --db DIR\) and "
                        r"pass --db DIR, or pass --db of an index built from it", error), error
    assert str(ROOT) not in error
    # given with --questions, it is listed (after the sets that match), and says it does not match
    listed = make_client(db, questions=[str(CORPUS / "code" / "questions.jsonl")]).get("/api/questions").json()["sets"]
    assert [(s["id"], s["matches"]) for s in listed] == [(question_set, True), (code, False)]
    assert listed[1]["name"].endswith(" (not about the documents in this index)") and listed[1]["collections"] == []


def test_questions_about_documents_a_collection_lacks_are_left_out_with_a_warning(client, question_set):
    """The parent collection holds three documents: the evaluation scores the questions
    about them, and says how many were left out."""
    lines = (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    about = [json.loads(line)["id"] for line in lines if json.loads(line)["doc_id"] in PARENT_DOCS]
    got = client.get("/api/evaluation", params={"set": question_set, "strategy": "parent", "mode": "bm25"})
    assert got.status_code == 200, got.text
    data = got.json()
    assert data["questions"] == len(about) < len(lines) and len(data["left_out"]) == len(lines) - len(about)
    assert [len(r["per_question"]) for r in data["rows"]] == [len(about)]
    [warning] = data["warnings"]
    assert warning.startswith(f"{len(lines) - len(about)} of {len(lines)} questions are about documents parent (use-m3) (")
    assert warning.endswith(f"does not hold; every score is over the other {len(about)} (build those documents in to "
                            "score them all)")


def test_a_query_no_encoder_can_write_is_answered_in_every_mode(client):
    """Issue 35, item 4: a lone surrogate (`"\\ud800"` in the JSON) ended in a 500."""
    from indexer.retrieval import MODES

    def post(path: str, body: dict):
        # json.dumps escapes the surrogate as \ud800: what a client sends
        return client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    for mode in MODES:
        got = post("/api/search", {"query": "\ud800 kargo", "strategy": "headers", "mode": mode, "k": 3})
        assert got.status_code == 200 and len(got.json()["hits"]) == 3, (mode, got.text)
    got = post("/api/compare", {"query": "\ud800 kargo", "strategies": ["headers", "\udc00"], "modes": list(MODES)})
    assert got.status_code == 200 and got.json()["query"] == "\ufffd kargo"
    results = got.json()["results"]
    assert [len(r["hits"]) for r in results[:3]] == [5, 5, 5]
    # a name no collection can have is no strategy (issue 35, item 15): 400, never a 500
    assert results[3]["status"] == 400 and "unknown strategy '\ufffd'" in results[3]["error"]


def test_the_server_follows_a_rebuild_without_restarting(write_files, tmp_path):
    from starlette.testclient import TestClient

    from indexer.indexing.building import build
    from indexer.serve.app import create_app
    from indexer.serve.library import Library

    docs = write_files({"a.md": "# Kargo\n\nKargo üç günde gelir.\n"})
    db = tmp_path / "index"
    build([docs], ["headers"], settings=Settings.load(db=db))
    settings = Settings.load(db=db)
    client = TestClient(create_app(settings, library=Library(settings, refresh=0)), base_url="http://127.0.0.1")
    body = {"query": "kargo mu iade süresi mi", "strategy": "headers", "mode": "bm25"}
    assert {h["doc_id"] for h in client.post("/api/search", json=body).json()["hits"]} == {"a.md"}
    write_files({"b.md": "# İade\n\nİade süresi on dört gündür.\n"}, docs)
    build([docs], ["headers"], settings=Settings.load(db=db))
    hits = client.post("/api/search", json=body).json()["hits"]
    assert hits[0]["doc_id"] == "b.md"
    assert [d["doc_id"] for d in client.get("/api/documents").json()["documents"]] == ["a.md", "b.md"]


# -- safety ------------------------------------------------------------------------------------
def test_path_traversal_finds_nothing(client):
    for doc in ("../../etc/passwd", "/etc/passwd", "..%2F..%2Fpyproject.toml", str(ROOT / "pyproject.toml")):
        r = client.get("/api/chunks", params={"strategy": "headers", "doc": doc})
        assert r.status_code == 404 and "no document" in r.json()["error"]
        assert client.get("/api/view", params={"doc": doc}).status_code == 404
    r = client.get("/api/chunks", params={"strategy": "../../etc", "doc": "x.md"})  # no collection can be named so
    assert r.status_code == 400 and r.json()["error"].startswith("unknown strategy '../../etc'")
    for path in ("/static/%2e%2e/%2e%2e/pyproject.toml", "/static/..%2f..%2fcli%2fserve.py", "/static/../app.py"):
        r = client.get(path)
        assert r.status_code == 404 and "[project]" not in r.text and "import" not in r.text


def test_a_token_is_required_when_set(db):
    guarded = make_client(db, token=TOKEN)
    body = {"query": QUERY, "strategy": "headers"}
    missing = guarded.post("/api/search", json=body)
    assert missing.status_code == 401 and "Bearer" in missing.json()["error"]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert guarded.get("/api/collections", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert guarded.post("/api/search", json=body, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert guarded.get("/api/health").status_code == 200  # liveness stays open, it tells nothing


def test_an_oversized_body_is_refused(client):
    big = json.dumps({"query": "a" * 200_000, "strategy": "headers"})
    r = client.post("/api/search", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "limit" in r.json()["error"]

    def chunks():  # no Content-Length: counted while streaming
        for _ in range(100):
            yield b"x" * 4096

    streamed = client.post("/api/search", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413


@pytest.mark.parametrize("k, status", [(10**9, 400), (0, 400), (101, 400), ("5x", 400), (True, 400), (100, 200)])
def test_k_is_capped(client, k, status):
    r = client.post("/api/search", json={"query": QUERY, "strategy": "fixed64", "k": k})
    assert r.status_code == status, r.text
    if status == 400:
        assert "k must be" in r.json()["error"]


@pytest.mark.parametrize("body, message", [
    (b"{not json", "not JSON"), (b"[1]", "JSON object"), (b"", "empty"),
    (json.dumps({"query": "x", "strategy": "headers", "rm": 1}).encode(), "unknown field 'rm'"),
    (json.dumps({"query": "  ", "strategy": "headers"}).encode(), "query is empty"),
    # (no strategy is not an error: the front doors' one rule, tests/test_front_doors.py)
    (json.dumps({"query": "x", "strategy": "headers", "mode": "magic"}).encode(), "mode must be one of"),
    (json.dumps({"query": "x", "strategy": "nope"}).encode(), "unknown strategy 'nope'"),
    (json.dumps({"query": "x", "strategy": "semantic"}).encode(), "no collection for strategy 'semantic'"),
])
def test_bad_requests_get_one_line_json_errors(client, body, message):
    r = client.post("/api/search", content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500 and message in r.json()["error"], r.text


@pytest.mark.parametrize("body", [
    b"[" * 30_000,  # 60 KB, under the cap (issue 51, G4): deeper than Python's parser goes
    b'{"query": "x", "strategy": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_001,
    b'{"query": ' + b"[" * 900 + b"]" * 900 + b"}",  # read, then too deep to walk
    json.dumps({"query": "x", "strategy": "headers", "k": json.loads("[" * 32 + "]" * 32)}).encode(),
])
def test_a_deeply_nested_body_is_a_400_without_a_traceback(client, body, caplog):
    for path in ("/api/search", "/api/compare", "/api/evaluation/generate"):
        r = client.post(path, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "more than 32 levels deep" in r.json()["error"], r.text
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    shallow = {"query": "x", "strategy": "headers", "k": json.loads("[" * 31 + "]" * 31)}  # 32 levels
    assert "k must be" in client.post("/api/search", json=shallow).json()["error"]


@pytest.mark.parametrize("path", [
    "/api/chunks?strategy=headers&doc=%ED%A0%80", "/api/documents?strategy=%ED%A0%80",
    "/api/view?strategy=headers&doc=%FF", "/api/evaluation?strategy=headers&mode=%ED%A0%80",
    "/api/questions/%ED%A0%80", "/api/%ED%A0%80",
])
def test_query_strings_no_encoder_can_write_are_never_a_500(client, path):
    """A lone surrogate cannot travel in a URL: its UTF-8 bytes (%ED%A0%80) are read as
    U+FFFD, and the answer is the usual 4xx naming it."""
    r = client.get(path)
    assert 400 <= r.status_code < 500 and "\ufffd" in r.json()["error"], r.text


def test_the_server_is_read_only(client):
    for method in ("DELETE", "PUT", "PATCH"):
        r = client.request(method, "/api/collections")
        assert r.status_code == 405 and "read-only" in r.json()["error"]
    assert client.post("/api/build", json={}).status_code in (404, 405)
    assert client.post("/api/drop", json={"strategy": "headers"}).status_code in (404, 405)


def test_cors_is_off_unless_an_origin_is_given(client, db):
    preflight = {"Origin": "http://app.example", "Access-Control-Request-Method": "POST"}
    assert "access-control-allow-origin" not in client.options("/api/search", headers=preflight).headers
    assert "access-control-allow-origin" not in client.get("/api/health", headers={"Origin": "http://app.example"}).headers
    open_to = make_client(db, cors=("http://app.example",), token=TOKEN)
    r = open_to.options("/api/search", headers=preflight)
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "http://app.example"
    r = open_to.options("/api/search", headers={**preflight, "Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in r.headers


def test_a_web_page_of_another_origin_cannot_make_the_server_work_or_write(client, db):
    """Trial 2, M2: a page on another site POSTed text/plain (no preflight) to
    /api/evaluation/generate: 200, a minute of CPU and question files in the index folder.
    A POST must be JSON, and one with an Origin must come from the server's own origin (or
    a --cors one); requests without an Origin (curl, scripts) are served as before."""
    def files() -> list[Path]:
        return sorted(Path(db).rglob("*"))

    before = files()
    generate = json.dumps({"n": 1, "strategies": ["fixed64"], "modes": ["bm25"]}).encode()
    search = {"query": "kargo", "strategy": "fixed64", "k": 2}
    evil = {"Origin": "http://evil.example"}
    for headers in ({**evil, "content-type": "text/plain"}, {**evil, "content-type": "application/json"}):
        r = client.post("/api/evaluation/generate", content=generate, headers=headers)
        assert r.status_code == 403 and r.json()["status"] == 403, r.text
        assert "'http://evil.example'" in r.json()["error"] and "\n" not in r.json()["error"]
    assert client.post("/api/search", json=search, headers=evil).status_code == 403
    for kind in ("text/plain", "application/x-www-form-urlencoded", None):
        r = client.post("/api/evaluation/generate", content=generate, headers={"content-type": kind} if kind else {})
        assert r.status_code == 415 and "Content-Type: application/json" in r.json()["error"], r.text
    assert files() == before  # nothing written
    # the server's own page (same scheme, host and port), a client with no Origin, --cors origins
    own = {"Origin": "http://127.0.0.1", "content-type": "application/json; charset=utf-8"}
    assert client.post("/api/search", content=json.dumps(search), headers=own).status_code == 200
    assert client.post("/api/search", json=search, headers={"Host": "localhost:8765",
                                                           "Origin": "http://localhost:8765"}).status_code == 200
    assert client.post("/api/search", json=search, headers={"Origin": "http://127.0.0.1:8765"}).status_code == 403
    assert client.post("/api/search", json=search, headers={"Origin": "null"}).status_code == 403
    assert client.post("/api/search", json=search).status_code == 200
    opened = make_client(db, cors=("http://app.example",))
    assert opened.post("/api/search", json=search, headers={"Origin": "http://app.example"}).status_code == 200
    assert opened.post("/api/search", json=search, headers=evil).status_code == 403


def test_a_loopback_server_refuses_other_host_names(db):
    from indexer.serve.guard import LOOPBACK_HOSTS

    local = make_client(db, allowed_hosts=LOOPBACK_HOSTS)
    for host in ("127.0.0.1:8765", "localhost", "[::1]:8765"):
        assert local.get("/api/health", headers={"Host": host}).status_code == 200, host
    refused = local.get("/api/health", headers={"Host": "rebound.example:8765"})
    assert refused.status_code == 400 and "rebound.example" in refused.json()["error"]


def test_the_page_comes_with_a_strict_content_policy(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/app.js").status_code == 200


# -- the command -------------------------------------------------------------------------------
def test_serve_refuses_a_public_address_without_a_token_and_short_tokens(db):
    from click.testing import CliRunner

    from indexer.cli import cli

    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "--token" in result.output and "0.0.0.0" in result.output
    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--host", "0.0.0.0", "--token", "short"])
    assert result.exit_code == 2 and "at least 16" in result.output


def test_serve_reads_a_token_file_and_refuses_two_tokens(db, tmp_path):
    from click.testing import CliRunner

    from indexer.cli import cli

    short = tmp_path / "token"
    short.write_text("abc\n")
    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--host", "0.0.0.0", "--token-file", str(short)])
    assert result.exit_code == 2 and "the token is 3 characters" in result.output
    result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--token", TOKEN, "--token-file", str(short)])
    assert result.exit_code == 2 and "not both" in result.output


def test_serve_says_when_the_port_is_busy(db):
    import socket

    from click.testing import CliRunner

    from indexer.cli import cli

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--db", str(db), "--port", str(port)])
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.output


def test_serve_without_an_index_says_to_build_one(tmp_path):
    from click.testing import CliRunner

    from indexer.cli import cli

    result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "none")])
    assert result.exit_code == 1 and "build one first" in result.output


def test_help_does_not_import_the_web_stack():
    code = "import sys; from indexer.cli import cli; print('starlette' in sys.modules, 'uvicorn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_server_on_another_loopback_address_answers_to_that_address(db, tmp_path):
    """`--host 127.0.0.2`: requests to the address it listens on are served; a host name
    rebound to it is still refused, and the refusal names the address to open."""
    import time
    import urllib.error
    import urllib.request

    from tests.conftest import free_port

    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "serve", "--db", str(db), "--host", "127.0.0.2",
                             "--port", str(port), "-q"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.2:{port}/api/"

    def get(path: str, host: str | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(url + path, headers={"Host": host} if host else {})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    try:
        deadline = time.time() + 60
        while True:
            try:
                status, body = get("health")
                break
            except (urllib.error.URLError, ConnectionError):
                log.seek(0)
                assert proc.poll() is None and time.time() < deadline, log.read()[-2000:]
                time.sleep(0.2)
        assert status == 200, body
        status, body = get("collections")
        assert status == 200 and {"headers", "fixed64"} <= {c["strategy"] for c in body["collections"]}
        status, body = get("collections", host=f"rebound.example:{port}")
        assert status == 400 and f"open it as http://127.0.0.2:{port}/" in body["error"], body
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def test_a_name_that_is_no_strategy_is_answered_as_mcp_answers_it(client, db):
    """Trial 2: `{"strategy": "nope"}` was advised `indexer build PATH --strategy nope`,
    which fails too; serve now says what MCP says: an unknown strategy, the presets and
    kinds, what is built."""
    from indexer.agents.tools import Tools
    from indexer.errors import UsageError

    r = client.post("/api/search", json={"query": "kargo", "strategy": "nope"})
    message = r.json()["error"]
    assert r.status_code == 400 and message.startswith("unknown strategy 'nope'; presets: "), r.text
    assert message.endswith("; built: fixed64, headers, parent") and "indexer build" not in message
    compared = client.post("/api/compare", json={"query": "kargo", "strategies": ["nope"]}).json()["results"][0]
    assert (compared["status"], compared["error"]) == (400, message)
    chunks = client.get("/api/chunks", params={"strategy": "nope", "doc": "kargo-ve-teslimat.md"})
    assert (chunks.status_code, chunks.json()["error"]) == (400, message)
    with pytest.raises(UsageError) as mcp:
        Tools(Settings.load(db=db)).search("kargo", "nope")
    assert str(mcp.value) == message


def test_a_junk_strategy_name_is_no_strategy_and_no_command(client):
    """A strategy that no collection can be named by is said to be none; it is never
    pasted into a suggested command."""
    r = client.post("/api/search", json={"query": "kargo", "strategy": "../../../etc"})
    assert r.status_code == 400 and r.json()["error"].startswith("unknown strategy '../../../etc'; presets: ")
    assert "indexer build" not in r.json()["error"]
    r = client.get("/api/chunks", params={"strategy": "../../../etc", "doc": "kargo-ve-teslimat.md"})
    assert r.status_code == 400 and "indexer build" not in r.json()["error"], r.text
