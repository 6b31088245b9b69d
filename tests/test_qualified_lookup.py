"""A module-qualified symbol (`pagekit.echo_via_pager`, `termui.echo_via_pager`,
`pagekit.get_current_context()`, `pagekit::BadParameter`) is a lookup of its last part:
its definition ranks first, above the tests that call it by that very name (which hold the
qualified name verbatim, and used to take the first places)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexer import build
from indexer.cli import cli
from indexer.retrieval import Index
from indexer.retrieval.exact.index import ExactIndex
from indexer.settings import Settings
from tests.conftest import write_file

TERMUI = '''"""Showing text to a person at a terminal."""

import itertools
import os
import sys


def echo_via_pager(text, color=None):
    """Show `text` through the pager the environment names ($PAGER), or print it when
    standard output is not a terminal."""
    pager = os.environ.get("PAGER", "less")
    lines = itertools.chain([text], ["\\n"])
    if not sys.stdout.isatty():
        for line in lines:
            sys.stdout.write(line)
        return
    with os.popen(pager, "w") as pipe:
        for line in lines:
            pipe.write(line)


def confirm(question, default=False):
    """Ask a yes/no question until the answer is one."""
    while True:
        answer = input(question + " [y/n] ").strip().lower()
        if answer in ("y", "n"):
            return answer == "y"
        if not answer:
            return default
'''

EXCEPTIONS = '''"""The errors a command raises for its user."""


class UsageError(Exception):
    """The command line was wrong: say what, and how to get help."""

    def __init__(self, message, hint=""):
        super().__init__(message)
        self.hint = hint


class BadParameter(UsageError):
    """A parameter's value was refused by its type or its callback."""

    def __init__(self, message, param_name=None):
        super().__init__(message)
        self.param_name = param_name

    def format_message(self):
        return f"Invalid value for {self.param_name}: {self}"
'''

GLOBALS = '''"""The context of the command being run, reachable from anywhere."""

_stack = []


def get_current_context(silent=False):
    """The innermost context on the stack; None when `silent` and there is none."""
    if _stack:
        return _stack[-1]
    if silent:
        return None
    raise RuntimeError("There is no active context.")


def push_context(ctx):
    _stack.append(ctx)
'''

INIT = '''from .exceptions import BadParameter, UsageError
from .globals import get_current_context, push_context
from .termui import confirm, echo_via_pager
'''


def _tests(i: int) -> str:
    return f'''

def test_pager_case_{i}(monkeypatch, capsys):
    monkeypatch.setenv("PAGER", "cat")
    pagekit.echo_via_pager("page {i}")
    pagekit.echo_via_pager(["line {i}", "more"])
    assert capsys.readouterr().out.count("{i}") == 2


def test_bad_parameter_case_{i}():
    with pytest.raises(pagekit.BadParameter):
        raise pagekit.BadParameter("value {i}", param_name="n")
    assert pagekit.get_current_context(silent=True) is None
    pagekit.push_context({i})
    assert pagekit.get_current_context() == {i}
'''


FILES = {
    "src/pagekit/__init__.py": INIT,
    "src/pagekit/termui.py": TERMUI,
    "src/pagekit/exceptions.py": EXCEPTIONS,
    "src/pagekit/globals.py": GLOBALS,
    "tests/test_pagekit.py": "import pytest\n\nimport pagekit\n" + "".join(_tests(i) for i in range(8)),
}

DEFINED = {  # query -> (file, symbol) of the definition it names
    "pagekit.echo_via_pager": ("src/pagekit/termui.py", "echo_via_pager"),
    "termui.echo_via_pager": ("src/pagekit/termui.py", "echo_via_pager"),
    "pagekit.echo_via_pager()": ("src/pagekit/termui.py", "echo_via_pager"),
    "pagekit.BadParameter": ("src/pagekit/exceptions.py", "BadParameter"),
    "pagekit::BadParameter": ("src/pagekit/exceptions.py", "BadParameter"),
    "pagekit.get_current_context()": ("src/pagekit/globals.py", "get_current_context"),
    "globals#get_current_context": ("src/pagekit/globals.py", "get_current_context"),
}


@pytest.fixture(scope="module")
def pagekit(tmp_path_factory):
    base = tmp_path_factory.mktemp("qualified")
    for path, text in FILES.items():
        write_file(base / "repo", path, text)
    db = base / "db"
    build([base / "repo"], ["code"], settings=Settings.load(db=db))
    return Index.open("code", settings=Settings.load(db=db))


@pytest.mark.parametrize("query", sorted(DEFINED))
@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_a_qualified_symbol_returns_its_definition_before_the_tests_that_call_it(pagekit, query, mode):
    hits = pagekit.search(query, mode=mode, k=5)
    doc_id, symbol = DEFINED[query]
    assert (hits[0].chunk.doc_id, hits[0].chunk.symbol.rsplit(".", 1)[-1]) == (doc_id, symbol), \
        [(h.chunk.doc_id, h.chunk.symbol) for h in hits]
    assert any(h.chunk.doc_id == "tests/test_pagekit.py" for h in hits)  # the uses are still there, below


def test_the_bare_name_and_the_tests_alone_still_rank_as_before(pagekit):
    assert pagekit.search("echo_via_pager", k=1)[0].chunk.doc_id == "src/pagekit/termui.py"
    ranked = pagekit.snapshot().sides.sparse("pagekit.echo_via_pager", 5)  # by term counts, the tests win
    assert pagekit.fetch([ranked[0][0]])[ranked[0][0]].doc_id == "tests/test_pagekit.py"


def test_the_cli_answers_a_qualified_symbol_with_its_definition(pagekit):
    db = str(pagekit.store.settings.db)
    out = CliRunner().invoke(cli, ["query", "pagekit.echo_via_pager", "-s", "code", "--db", db, "--json"])
    assert out.exit_code == 0, out.output
    first = json.loads(out.output.splitlines()[0])
    assert (first["doc_id"], first["symbol"]) == ("src/pagekit/termui.py", "echo_via_pager")


def test_a_qualifier_prefers_the_definition_whose_file_or_owner_it_names():
    index = ExactIndex()
    index.add("a", "render", "src/html/page.py")
    index.add("b", "render", "src/text/page.py")
    index.add("c", "render", "tests/test_html.py")
    index.add("d", "Widget.render", "src/ui/widget.py")
    by_id = dict(index.definitions("html.render"))
    assert by_id["a"] > by_id["b"] > by_id["c"]  # the file's folder named, then any other, then a test
    assert dict(index.definitions("text.page.render"))["b"] > dict(index.definitions("text.page.render"))["a"]
    assert dict(index.definitions("ui.widget.render")) == {"d": 3}  # the owner's key, its folder named
    assert index.definitions("cart.js") == [] and index.definitions("nothing.here") == []


def _in_rank_order(scores: list[float]) -> bool:
    return scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_scores_follow_the_rank_and_a_hit_an_exact_tier_ranked_says_so(pagekit, mode):
    """The definition is ranked by its exact tier above tests the search scored higher: its
    score is raised to the best one below it (its own kept in `search_score`) and `match`
    says why; it used to show its own, lower score (0.000 for a definition that was not
    among the candidates) above higher ones."""
    hits = pagekit.search("pagekit.echo_via_pager", mode=mode, k=5)
    assert _in_rank_order([h.score for h in hits])
    top = hits[0]
    assert (top.match, top.exact) == ("exact symbol", 3)
    assert top.search_score is not None and top.search_score < top.score == hits[1].score
    assert [h.match for h in hits[1:]] == ["exact term"] * 4 and all(h.search_score is None for h in hits[1:])
    plain = pagekit.search("show text through the pager", mode=mode, k=5)  # no exact tier: nothing raised
    assert all(h.match == "" and h.search_score is None for h in plain) and _in_rank_order([h.score for h in plain])


def test_every_front_door_shows_scores_in_rank_order_and_the_match(pagekit):
    from starlette.testclient import TestClient

    from indexer.agents.server import Tools
    from indexer.serve.app import create_app

    db, query = pagekit.store.settings.db, "pagekit.echo_via_pager"
    table = CliRunner().invoke(cli, ["query", query, "-s", "code", "--db", str(db)])
    lines = [line for line in table.output.splitlines() if line.startswith("#")]
    assert _in_rank_order([float(line.split()[1]) for line in lines]), lines
    assert "[function]  exact symbol, scored " in lines[0] and "exact term" in lines[1]
    as_json = CliRunner().invoke(cli, ["query", query, "-s", "code", "--db", str(db), "--json"])
    rows = [json.loads(line) for line in as_json.output.splitlines()]
    assert _in_rank_order([r["score"] for r in rows])
    assert rows[0]["match"] == "exact symbol" and rows[0]["search_score"] < rows[0]["score"]
    served = TestClient(create_app(Settings.load(db=db)), base_url="http://127.0.0.1").post(
        "/api/search", json={"query": query, "strategy": "code", "k": 5}).json()["hits"]
    assert _in_rank_order([h["score"] for h in served]) and served[0]["match"] == "exact symbol"
    mcp = Tools(Settings.load(db=db)).search(query, k=5)["results"]
    assert _in_rank_order([r["score"] for r in mcp]) and mcp[0]["match"] == "exact symbol"
    assert mcp[0]["doc_id"] == "src/pagekit/termui.py"
