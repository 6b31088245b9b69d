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
    # the CLI: query answers from it (and says so when it is one of several)
    code, out, err = run_cli("query", QUERY, "--db", db, "--json")
    assert code == 0, err
    assert ("note: reading auto of auto, fixed64, headers: the default strategy" in err) == (state == "auto"), err
    code, named, _ = run_cli("query", QUERY, "-s", default, "--db", db, "--json")
    assert code == 0 and out == named
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




ORDER = "first in the order code > blocks > headers > contextual > parent > semantic > fixed"


def test_over_several_strategies_every_door_reads_the_documented_choice_and_says_so(stores):
    """README's first command builds headers, fixed64 and blocks, and every bare command
    then refused ("several strategies are built ... and none is auto"), MCP's search too.
    Nothing evaluated and no `auto`: every door reads the first of the documented order of
    kinds (headers before fixed64), and says which and why."""
    db, _ = stores["several"]
    for command, args in (("query", [QUERY]), ("dump", [])):
        code, out, err = run_cli(command, *args, "--db", db, "--json")
        assert code == 0, err
        assert f"note: reading headers of fixed64, headers: {ORDER}; no evaluation has ranked them" in err
        code, named, _ = run_cli(command, *args, "-s", "headers@use-m3", "--db", db, "--json")
        assert code == 0 and out == named
    with web(db) as client:
        assert client.get("/api/collections").json()["default_strategy"] == "headers@use-m3"
        searched = client.post("/api/search", json={"query": QUERY}).json()
        named = client.post("/api/search", json={"query": QUERY, "strategy": "fixed64"}).json()
    assert searched["strategy"] == "headers@use-m3" and searched["chosen_by"].startswith(ORDER)
    assert named["strategy"] == "fixed64" and "chosen_by" not in named
    assert mcp(db, "list_collections")["default_strategy"] == "headers@use-m3"
    found = mcp(db, "search", query=QUERY)
    assert (found["strategy"], found["embedder"]) == ("headers", "use-m3") and found["chosen_by"].startswith(ORDER)
    named = mcp(db, "search", query=QUERY, strategy="fixed64")
    assert named["strategy"] == "fixed64" and "chosen_by" not in named  # named: nothing to explain


def doors_read(db: Path) -> dict[str, str]:
    """The strategy each door reads for a call naming none."""
    code, out, err = run_cli("query", QUERY, "--db", db, "--json", "-k", "1")
    assert code == 0, err
    with web(db) as client:
        label = client.post("/api/search", json={"query": QUERY}).json()["strategy"]
    return {"cli": err.split("note: reading ", 1)[1].split()[0], "web": label.partition("@")[0],
            "mcp": mcp(db, "search", query=QUERY)["strategy"]}


def test_the_ranking_of_the_last_evaluation_is_what_every_door_reads(stores, tmp_path):
    from indexer.indexing.options import BuildOptions
    from indexer.retrieval.evaluated import Placing, record_ranking
    from indexer.store import Store

    db, docs = tmp_path / "db", stores["several"][1]
    shutil.copytree(stores["several"][0], db)
    store = Store(Settings.load(db=db))
    first = [Placing("fixed64", "use-m3", 0.9, "hybrid"), Placing("headers", "use-m3", 0.8, "hybrid")]
    assert record_ranking(store, first, "mine.jsonl") == []
    assert doors_read(db) == dict.fromkeys(("cli", "web", "mcp"), "fixed64")  # not headers, the order's first
    found = mcp(db, "search", query=QUERY)
    assert found["chosen_by"].startswith("ranked best by the last evaluation (mine.jsonl, ")
    assert found["chosen_by"].endswith(": MRR@10 0.900, hybrid)")
    # rebuilding the collections keeps the record
    for strategy in ("fixed64", "headers"):
        build([docs], [strategy], BuildOptions(full=True), settings=Settings.load(db=db))
    assert doors_read(db) == dict.fromkeys(("cli", "web", "mcp"), "fixed64")
    # a later evaluation's ranking wins
    assert record_ranking(store, first[::-1], "later.jsonl") == []
    assert doors_read(db) == dict.fromkeys(("cli", "web", "mcp"), "headers")
    assert mcp(db, "search", query=QUERY)["chosen_by"].startswith("ranked best by the last evaluation (later.jsonl, ")


def test_a_bare_eval_scores_every_strategy_built_and_records_which_ranked_best(stores, tmp_path):
    db, docs = tmp_path / "db", stores["several"][1]
    shutil.copytree(stores["several"][0], db)
    questions = stores["several"][0].parent / "questions.jsonl"
    code, out, err = run_cli("eval", questions, "--corpus", docs, "-k", "1", "--db", db, "--json")
    assert code == 0, err
    assert "evaluating every strategy built: fixed64, headers (name some with -s S)\n" in err
    rows = [r for r in map(json.loads, out.splitlines()) if "mrr@10" in r and "mode" in r]
    assert {(r["strategy"], r["embedder"], r["mode"]) for r in rows} == {
        (s, "use-m3", m) for s in ("fixed64", "headers") for m in ("embedding", "bm25", "hybrid")}
    hybrid = {r["strategy"]: r["mrr@10"] for r in rows if r["mode"] == "hybrid"}  # what a bare query uses
    best = max(sorted(hybrid), key=lambda s: hybrid[s])
    assert f"{best} (use-m3) ranked best (MRR@10 {hybrid[best]:.3f}, hybrid); commands naming no strategy read it now" in err
    code, out, err = run_cli("query", QUERY, "--db", db, "--json")
    assert code == 0 and f"note: reading {best} of fixed64, headers: ranked best by the last evaluation " \
                          f"(questions.jsonl, " in err, err
    assert out == run_cli("query", QUERY, "-s", f"{best}@use-m3", "--db", db, "--json")[1]
