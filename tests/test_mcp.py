"""`indexer mcp`: a real MCP client (the official SDK) starts the server as a subprocess and
talks to it over stdio; results are exact slices of the documents, sized by a token
budget, and stdout carries nothing but the protocol."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from indexer.agents.results import document_lines, fit
from indexer.agents.server import Tools
from indexer.errors import CollectionNotFound, UsageError
from indexer.indexing.options import BuildOptions
from indexer.settings import Settings
from indexer.types import Chunk
from tests.conftest import CORPUS, ROOT

TOOLS = {"search", "compare_strategies", "list_collections", "get_chunk", "get_document_span"}


def child_env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def file_lines(doc_id: str, start: int, end: int) -> str:
    return "\n".join((CORPUS / doc_id).read_text(encoding="utf-8").split("\n")[start - 1 : end])


@pytest.fixture(scope="module")
def rebuilt_db(built_db, tmp_path_factory):
    """headers and fixed64, no `auto`, nothing evaluated (a copy of the shared index, for
    this module alone: an `indexer eval` of another module may have ranked them there)."""
    from indexer.retrieval.evaluated import KEY
    from indexer.store import Store

    db = tmp_path_factory.mktemp("mcp") / "index"
    shutil.copytree(built_db[0], db)
    store = Store(Settings.load(db=db))
    for entry in store.catalogue.entries():
        if entry.extra.pop(KEY, None):
            store.catalogue.publish(entry)
    return db


async def talk(db) -> dict:
    """One client session: everything the test checks, gathered."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(command=sys.executable, args=["-m", "indexer", "mcp", "--db", str(db)],
                                   env=child_env(), cwd=str(ROOT))

    async def call(session, name, **arguments):
        result = await session.call_tool(name, arguments)
        error = getattr(result, "is_error", None) or getattr(result, "isError", False)
        text = result.content[0].text
        return {"error": text} if error else json.loads(text)

    got: dict = {}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(server, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                got["init"] = await session.initialize()
                got["tools"] = {t.name: t for t in (await session.list_tools()).tools}
                got["collections"] = await call(session, "list_collections")
                got["search"] = await call(session, "search", query="Van'ın köyüne kargo kaç günde gelir?",
                                           strategy="headers", k=3)
                hit = got["search"]["results"][0]
                got["chunk"] = await call(session, "get_chunk", chunk_id=hit["id"], strategy="headers")
                got["span"] = await call(session, "get_document_span", doc_id=hit["doc_id"], strategy="headers",
                                         start_line=hit["start_line"], end_line=hit["end_line"])
                got["budget"] = await call(session, "search", query="kargo", strategy="fixed64", k=10, max_tokens=150)
                got["no_strategy"] = await call(session, "search", query="Van'ın köyüne kargo kaç günde gelir?")
                got["chunk_no_strategy"] = await call(session, "get_chunk", chunk_id=hit["id"])
                got["missing"] = await call(session, "get_chunk", chunk_id="nope", strategy="headers")
                got["bad_type"] = await call(session, "search", query="kargo", k="five")
                got["bad_mode"] = await call(session, "search", query="kargo", mode="fuzzy")
                got["unknown"] = await call(session, "search", query="kargo", stratgy="headers")
                got["no_query"] = await call(session, "search", k=3)
                got["bad_lines"] = await call(session, "get_document_span", doc_id="x.md", start_line="one", end_line=2)
    return got


def test_a_real_client_searches_over_stdio(rebuilt_db):
    db = rebuilt_db
    got = anyio.run(talk, db)
    assert set(got["tools"]) == TOOLS
    assert "query" in json.dumps(got["tools"]["search"].model_dump(by_alias=True)["inputSchema"])
    assert {c["strategy"] for c in got["collections"]["collections"]} == {"headers", "fixed64"}
    # the folder the collections were built from, relative to the server's folder: no absolute server path
    assert {tuple(c["source"]) for c in got["collections"]["collections"]} == {("corpus",)}
    assert str(ROOT) not in json.dumps(got["collections"])

    result = got["search"]
    assert result["strategy"] == "headers" and result["mode"] == "hybrid" and len(result["results"]) == 3
    hit = result["results"][0]
    assert hit["header"] == "Kargo ve Teslimat › Bölgelere Göre Teslim Süreleri"
    assert "| İlçe ve köyler | 3-5 iş günü | Yok |" in hit["text"]
    text = (CORPUS / hit["doc_id"]).read_text(encoding="utf-8")
    assert hit["text"] in text  # an exact slice of the file...
    assert file_lines(hit["doc_id"], hit["start_line"], hit["end_line"]).strip() == hit["text"].strip()  # ...at its lines
    assert hit["n_tokens"] > 0 and result["tokens"] == sum(r["n_tokens"] for r in result["results"])

    assert got["chunk"]["text"] == hit["text"] and got["chunk"]["id"] == hit["id"]
    span = got["span"]
    assert span["text"] == file_lines(hit["doc_id"], hit["start_line"], hit["end_line"])
    assert (span["start_line"], span["end_line"], span["truncated"]) == (hit["start_line"], hit["end_line"], False)

    budget = got["budget"]  # max_tokens given: answer-sized context, exact spans, never over the budget
    assert 0 < budget["tokens"] <= 150 and budget["budget"] == 150 and budget["spans"]
    assert budget["tokens"] < budget["whole_chunks_tokens"]
    for span in budget["spans"]:
        assert span["text"] in budget["context"]
        assert span["text"] in (ROOT / "corpus" / span["doc_id"]).read_text(encoding="utf-8")
    # several collections, no auto, none evaluated, no strategy: the documented order of kinds
    # picks headers over fixed64, and the answer says so
    assert got["collections"]["default_strategy"] == "headers"
    assert got["no_strategy"]["strategy"] == "headers"
    assert got["no_strategy"]["chosen_by"].startswith("first in the order code > blocks > headers")
    assert got["chunk_no_strategy"]["id"] == hit["id"]
    schema = got["tools"]["search"].model_dump(by_alias=True)
    assert "strategy" not in schema["inputSchema"].get("required", [])
    assert "the one the last `indexer eval` ranked best, else auto if it is built" in schema["description"]
    assert all(t.model_dump(by_alias=True)["inputSchema"]["additionalProperties"] is False for t in got["tools"].values())
    assert "no chunk 'nope' in headers" in got["missing"]["error"]
    # argument errors: one line naming the argument and what it takes; unknown ones listed
    accepted = "accepted: query, strategy, mode, k, max_tokens, paths"
    assert got["bad_type"] == {"error": 'search: argument \'k\' must be an integer, not "five"'}
    assert got["bad_mode"] == {"error": "search: argument 'mode' must be one of \"hybrid\", \"embedding\", "
                                        "\"bm25\" or null, not \"fuzzy\""}
    assert got["unknown"] == {"error": f"search: unknown argument 'stratgy'; {accepted}"}
    assert got["no_query"] == {"error": f"search: missing argument 'query' (a string); {accepted}"}
    assert got["bad_lines"]["error"] == 'get_document_span: argument \'start_line\' must be an integer, not "one"'
    for key in ("bad_type", "bad_mode", "unknown", "no_query", "bad_lines"):
        assert "\n" not in got[key]["error"] and "pydantic" not in got[key]["error"]


def test_the_default_collection_is_the_only_then_auto_then_the_first_kind(tmp_path, rebuilt_db):
    from indexer.indexing.building import build

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kargo-ve-teslimat.md").write_text((CORPUS / "kargo-ve-teslimat.md").read_text(encoding="utf-8"),
                                               encoding="utf-8")
    build([docs], ["headers"], settings=Settings.load(db=tmp_path / "db"))
    tools = Tools(Settings.load(db=tmp_path / "db"))
    assert tools.default_strategy() == "headers"  # the only one
    build([docs], ["fixed64"], settings=Settings.load(db=tmp_path / "db"))
    build([docs], ["auto"], settings=Settings.load(db=tmp_path / "db"))
    time.sleep(1.1)
    build([docs], ["fixed64"], BuildOptions(full=True), settings=Settings.load(db=tmp_path / "db"))
    assert tools.default_strategy() == "auto"  # auto wins over the newer fixed64
    assert tools.search("ekspres teslimat")["strategy"] == "auto"
    # no auto, several, none evaluated: the first of the documented order of kinds
    assert Tools(Settings.load(db=rebuilt_db)).default_strategy() == "headers"
    assert Tools(Settings.load(db=rebuilt_db), strategy="fixed64").default_strategy() == "fixed64"
    with pytest.raises(CollectionNotFound, match="nothing is built"):
        Tools(Settings.load(db=rebuilt_db), built_with="e5-small").default_strategy()  # only its collections count


def test_sources_are_never_absolute_server_paths(rebuilt_db, tmp_path):
    tools = Tools(Settings.load(db=rebuilt_db))
    for base, shown in ((ROOT, "corpus"), (ROOT.parent, f"{ROOT.name}/corpus"), (tmp_path, "corpus"),
                        (CORPUS, "corpus")):
        tools.base = base
        listing = tools.list_collections()
        assert {tuple(c["source"]) for c in listing["collections"]} == {(shown,)}
        assert str(CORPUS) not in json.dumps(listing)


def test_stdout_is_the_protocol_only():
    """While serving, prints and writes to file descriptor 1 go to stderr; only the
    transport's own writes reach stdout."""
    script = ("import os, sys\n"
              "from indexer.agents.server import protocol_stdout\n"
              "with protocol_stdout():\n"
              "    print('a print')\n"
              "    os.write(1, b'a C library write\\n')\n"
              "    sys.stdout.buffer.write(b'{\"jsonrpc\": \"2.0\"}\\n')\n"
              "    sys.stdout.buffer.flush()\n"
              "print('after')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"jsonrpc": "2.0"}\nafter\n'
    assert done.stderr.splitlines() == ["a print", "a C library write"]


def test_a_token_budget_cuts_results_in_process(built_db):
    db, _ = built_db
    tools = Tools(Settings.load(db=db), strategy="fixed64", max_tokens=10)  # the server's budget for whole chunks
    result = tools.search("iade süresi kaç gün", k=5)
    [only] = result["results"]
    assert only["truncated"] and only["n_tokens"] == 10 and result["omitted"] == 4
    full = Tools(Settings.load(db=db), strategy="fixed64").search("iade süresi kaç gün", k=1)["results"][0]
    assert full["text"].startswith(only["text"]) and len(only["text"]) < len(full["text"])
    packed = tools.search("iade süresi kaç gün", k=5, max_tokens=100)  # a caller's budget: packed spans
    assert packed["tokens"] <= 100 and "14 gün" in packed["context"]
    with pytest.raises(UsageError, match="max_tokens must be at least 16"):
        tools.search("iade süresi kaç gün", max_tokens=10)
    empty = tools.search("iade süresi kaç gün", max_tokens=16)  # no span fits with its label line
    assert empty["spans"] == [] and empty["context"] == ""
    assert "no span fits in 16 tokens with its label line" in empty["note"]
    assert "note" not in packed
    assert tools.list_collections()["default_strategy"] == "fixed64"
    span = tools.get_document_span("kargo-ve-teslimat.md", 1, 400, max_tokens=40)
    assert span["truncated"] and span["end_line"] < span["lines_in_document"]
    assert span["text"] == file_lines("kargo-ve-teslimat.md", 1, span["end_line"])


def test_parent_child_results_are_sections_with_their_matched_children(tmp_path):
    from indexer.indexing.building import build

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("kargo-ve-teslimat.md", "iade-ve-geri-odeme.md"):
        (docs / name).write_text((CORPUS / name).read_text(encoding="utf-8"), encoding="utf-8")
    build([docs], ["parent"], settings=Settings.load(db=tmp_path / "db"))
    tools = Tools(Settings.load(db=tmp_path / "db"))
    hit = tools.search("ekspres teslimat ücreti", k=2)["results"][0]
    assert hit["matched_children"] and "parent_id" not in hit
    assert hit["text"] in (docs / hit["doc_id"]).read_text(encoding="utf-8")
    child = tools.get_chunk(hit["matched_children"][0])
    assert child["parent_id"] == hit["id"] and child["text"] in hit["text"]
    assert tools.get_chunk(hit["id"])["text"] == hit["text"]


def chunk(start, text, line):
    return Chunk(id=f"c{start}", doc_id="d", text=text, start=start, end=start + len(text), start_line=line,
                 end_line=line + text.count("\n"), kind="x")


def test_document_lines_are_rebuilt_from_chunks():
    doc = "# T\n\nfirst para\nsecond line\n\n\n## S\n  indented\n"
    pieces = [chunk(0, "# T", 1), chunk(5, "first para\nsecond", 3), chunk(11, "para\nsecond line", 3),
              chunk(30, "## S", 7), chunk(35, "  indented", 8)]
    lines, gaps = document_lines(pieces)
    assert "\n".join(lines) == doc.rstrip("\n")
    assert gaps == []  # only line breaks between the chunks: rebuilt exactly
    lines, gaps = document_lines([chunk(9, "indented", 8)])  # "\n" * 7 + "  indented": the indentation unheld
    assert lines == [""] * 7 + ["  indented"] and gaps == [(1, 8)]


@pytest.mark.parametrize("budget, kept, omitted", [(100, 3, 0), (70, 2, 1), (30, 1, 2), (5, 1, 2)])
def test_fit_keeps_results_in_rank_order_within_the_budget(budget, kept, omitted):
    results = [{"text": "kelime " * 30, "n_tokens": 30, "start_line": 1, "end_line": 1} for _ in range(3)]
    got, left, used = fit(results, budget)
    assert (len(got), left) == (kept, omitted) and used <= max(budget, 0)
    if budget < 30:
        assert got[0]["truncated"] and got[0]["n_tokens"] == budget and results[0]["text"].startswith(got[0]["text"])


def test_paths_may_be_one_glob_as_a_string_as_in_the_web_api(rebuilt_db):
    """Trial 2: `"paths": "*.docx"` was refused ("must be a list") while /api/search took
    it; MCP's search and compare_strategies now take one glob as a string too."""
    from indexer.agents.server import create_server

    async def calls() -> list[dict]:
        server = create_server(Tools(Settings.load(db=rebuilt_db)))
        out = []
        for name, arguments in (("search", {"query": "kargo", "strategy": "headers", "paths": "kargo-*.md"}),
                                ("search", {"query": "kargo", "strategy": "headers", "paths": ["kargo-*.md"]}),
                                ("compare_strategies", {"query": "kargo", "paths": "kargo-*.md"})):
            result = await server.call_tool(name, arguments)  # its content: mcp 2, the list: mcp 1
            out.append(json.loads(getattr(result, "content", result)[0].text))
        return out

    one, listed, compared = anyio.run(calls)
    assert one == listed and one["results"], one
    assert {r["doc_id"] for r in one["results"]} == {"kargo-ve-teslimat.md"}
    for answer in compared["strategies"]:
        assert answer["results"] and {r["doc_id"] for r in answer["results"]} == {"kargo-ve-teslimat.md"}


def test_errors_never_show_the_servers_absolute_index_path(rebuilt_db):
    """A tool error names the index folder as an agent may see it (relative to the
    server's folder, else by its name), never by its absolute path on the server."""
    from indexer.agents.server import create_server, sdk

    _, tool_error = sdk()

    async def errors(tools: Tools) -> list[str]:
        server = create_server(tools)
        out = []
        for name, arguments in (("search", {"query": "kargo", "strategy": "semantic"}),
                                ("get_chunk", {"chunk_id": "x", "strategy": "semantic"}),
                                ("list_collections", {}), ("search", {"query": "kargo"})):
            try:
                result = await server.call_tool(name, arguments)
            except tool_error as exc:
                out.append(str(exc))
            else:
                out.append(getattr(result, "content", [result])[0].text if result else "")
        return out

    tools = Tools(Settings.load(db=rebuilt_db), built_with="e5-small")  # no collection of its embedder: errors
    got = anyio.run(errors, tools)
    failed = [m for m in got if "no collection" in m or "nothing is built" in m]
    assert len(failed) == 3, got
    sources = tools.store.catalogue.sources()  # an advised build names them: never absolute either
    assert sources and all(Path(src).is_absolute() for src in sources)
    for message in got:
        assert str(rebuilt_db) not in message and str(rebuilt_db.parent) not in message, message
        assert not [src for src in sources if src in message], message
    assert all(f"in {rebuilt_db.name}" in m for m in failed), failed


def test_requests_piped_in_are_all_answered_before_the_server_exits(rebuilt_db):
    """`indexer mcp < requests.jsonl`: stdin ends right after the last request, and every
    request still gets its answer (the SDK's transport alone dropped what was in flight),
    a cancelled one excepted; a line that is not JSON, not UTF-8 or not one object gets
    JSON-RPC's error (the SDK dropped it silently) and does not hold the exit up."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sh", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "iade süresi", "strategy": "headers", "k": 2}}},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "kargo", "strategy": "headers"}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}},
    ]
    encoded = [(json.dumps(m, ensure_ascii=False) + "\n").encode() for m in lines]
    sent = b"".join(encoded[:3]) + b"not json\n\xff\xfe garbage\n[1, 2]\n" + b"".join(encoded[3:])
    done = subprocess.run([sys.executable, "-m", "indexer", "mcp", "--db", str(rebuilt_db)], input=sent,
                          capture_output=True, timeout=120, env=child_env(), cwd=str(ROOT))
    assert done.returncode == 0, done.stderr.decode()
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    answers = {m["id"]: m for m in replies if "id" in m and m["id"] is not None}
    # the three bad lines are answered as JSON-RPC says, in order, not dropped
    assert [m["error"]["code"] for m in replies if m.get("id", 0) is None] == [-32700, -32700, -32600]
    assert {1, "list", 3, 4} <= set(answers)
    assert TOOLS <= {t["name"] for t in answers["list"]["result"]["tools"]}
    found = json.loads(answers[3]["result"]["content"][0]["text"])
    assert found["strategy"] == "headers" and len(found["results"]) == 2
    assert found["results"][0]["doc_id"] == "iade-ve-geri-odeme.md"
    assert "error" in answers[4]
