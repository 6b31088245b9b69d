"""The three front doors, the CLI, the web API and MCP, read the same index the same way:
one rule picks the collection a call naming none reads (`retrieval.collections.choose`)
and one function says what a collection is (`describe`). Each door is driven as its
users drive it: the CLI through Click, the web API through Starlette's TestClient, MCP
through the SDK server's own tool dispatch (in process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from indexer.agents.server import Tools, create_server, sdk
from indexer.cli import cli
from indexer.indexing.building import build
from indexer.paths import shown_path
from indexer.serve.app import create_app
from indexer.settings import Settings

from tests.conftest import CORPUS

DOCS = ("kargo-ve-teslimat.md", "iade-ve-geri-odeme.md")
QUERY = "kargo kaç günde gelir"
SEVERAL = "several strategies are built (fixed64, headers) and none is auto; name one"


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """{state: (index folder, documents folder)} for the rule's three cases:
    `one`: only `headers` is built (with two embedders); `several`: headers and fixed64,
    no `auto`; `auto`: those and `auto`."""
    root = tmp_path_factory.mktemp("doors")
    docs = root / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(CORPUS / name, docs / name)
    questions = [line for line in (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip() and json.loads(line)["doc_id"] in DOCS]
    (root / "questions.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")
    out = {}
    for state, strategies, embedder in (("one", ["headers"], "use-m3"), ("one", ["headers"], "e5-small"),
                                        ("several", ["fixed64"], "use-m3"), ("auto", ["auto"], "use-m3")):
        db = root / state
        if not db.exists() and out:
            shutil.copytree(list(out.values())[-1][0], db)  # each state adds to the one before
        build([docs], strategies, settings=Settings.load(db=db, embedder=embedder))
        out[state] = (db, docs)
    return out


def run_cli(*args) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, [str(a) for a in args])
    return done.exit_code, done.stdout, done.stderr


def web(db: Path):
    from starlette.testclient import TestClient

    return TestClient(create_app(Settings.load(db=db)), base_url="http://127.0.0.1")


def mcp(db: Path, name: str, **arguments) -> dict:
    """A tool called as an MCP client calls it: {result} or {"error": its one line}."""
    _, tool_error = sdk()

    async def call() -> dict:
        server = create_server(Tools(Settings.load(db=db)))
        try:
            result = await server.call_tool(name, arguments)
        except tool_error as exc:
            return {"error": str(exc)}
        return json.loads(getattr(result, "content", [result])[0].text)

    return anyio.run(call)


@pytest.mark.parametrize("state, default, built_with", [("one", "headers@use-m3", "use-m3"),
                                                          ("auto", "auto", "use-m3")])
def test_every_door_reads_the_same_collection_when_none_is_named(stores, state, default, built_with):
    db, docs = stores[state]
    strategy = default.partition("@")[0]
    # the CLI: eval scores it, query answers from it
    code, out, err = run_cli("eval", db.parent / "questions.jsonl", "--corpus", docs, "-m", "bm25", "-k", "1",
                             "--db", db, "--json", "-q")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert {(r["strategy"], r["embedder"]) for r in rows} == {(strategy, built_with)}
    code, out, err = run_cli("query", QUERY, "--db", db, "--json")
    assert code == 0, err
    code, named, err = run_cli("query", QUERY, "-s", default, "--db", db, "--json")
    assert code == 0 and out == named, err
    # the web API: the listing names it, a search naming none reads it
    with web(db) as client:
        listing = client.get("/api/collections").json()
        searched = client.post("/api/search", json={"query": QUERY}).json()
    assert listing["default_strategy"] == default
    assert (searched["strategy"], searched["embedder"]) == (default, built_with)
    # MCP: the same
    assert mcp(db, "list_collections")["default_strategy"] == default
    found = mcp(db, "search", query=QUERY)
    assert (found["strategy"], found["embedder"]) == (strategy, built_with)
    assert [h["id"] for h in found["results"]] == [h["id"] for h in searched["hits"]][:len(found["results"])]


def test_a_query_says_which_embedder_answers_a_strategy_built_with_several(stores):
    """A stranger built a folder with use-m3 and e5-small: `query` without `--embedder`
    answered from use-m3 and nothing said so (serve names them `auto@e5-small`)."""
    db, _ = stores["one"]
    code, out, err = run_cli("query", QUERY, "--db", db)
    assert code == 0 and out.startswith("#1 "), err
    assert err == "note: headers is also built with e5-small; reading the use-m3 one (pick with --embedder NAME)\n"
    for picked in (["--embedder", "e5-small"], ["-s", "headers@e5-small"], ["-s", "headers@use-m3"]):
        code, out, err = run_cli("query", QUERY, "--db", db, *picked)
        assert code == 0 and out.startswith("#1 ") and err == "", (picked, err)
    code, _, err = run_cli("query", QUERY, "--db", stores["auto"][0], "-s", "fixed64")
    assert code == 0 and err == ""  # one embedder: nothing to say


def test_every_door_describes_a_collection_the_same_way(stores):
    db, docs = stores["auto"]
    code, out, err = run_cli("list", "--db", db, "--json")
    assert code == 0, err
    cli_listing = {c["name"]: c for c in map(json.loads, out.splitlines())}
    with web(db) as client:
        web_listing = {c["name"]: c for c in client.get("/api/collections").json()["collections"]}
    mcp_listing = {c["name"]: c for c in mcp(db, "list_collections")["collections"]}
    assert set(cli_listing) == {"auto", "fixed64", "headers@use-m3", "headers@e5-small"}
    assert web_listing == mcp_listing  # every field, source folders shown alike
    for name, described in cli_listing.items():
        # the CLI runs on the user's own machine: source folders as built (absolute)
        assert described["source"] == [str(docs.resolve())]
        assert web_listing[name]["source"] == [shown_path(docs)]
        assert {**described, "source": None} == {**web_listing[name], "source": None}
    headers = cli_listing["headers@use-m3"]
    assert (headers["strategy"], headers["embedder"], headers["files"]) == ("headers", "use-m3", len(DOCS))
    assert headers["search"].startswith("hybrid") and headers["tuned"] is False


def test_every_door_refuses_to_guess_among_several_in_the_same_line(stores):
    db, docs = stores["several"]
    lines = {}
    for command, args in (("query", [QUERY]), ("eval", [db.parent / "questions.jsonl", "--corpus", docs])):
        code, out, err = run_cli(command, *args, "--db", db)
        assert code == 2 and err.count("\n") == 1 and err.startswith("Error: "), err  # a usage error
        lines[f"cli {command}"] = err.removeprefix("Error: ").strip()
    with web(db) as client:
        assert client.get("/api/collections").json()["default_strategy"] is None
        answer = client.post("/api/search", json={"query": QUERY})
    assert answer.status_code == 400
    lines["web"] = answer.json()["error"]
    assert mcp(db, "list_collections")["default_strategy"] is None
    # each door frames its one line its own way: the CLI's "Error: ", the SDK's tool error
    lines["mcp"] = mcp(db, "search", query=QUERY)["error"].removeprefix("Error executing tool search: ")
    assert SEVERAL in lines["cli query"] and "\n" not in lines["cli query"]
    assert set(lines.values()) == {lines["cli query"]}, lines
