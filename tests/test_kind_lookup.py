"""A lookup that names a kind and a symbol (`class Option`, `def option`) ranks the
definition of that kind first, on click's own source (installed with the tests: its files
copied into a folder and built through the real pipeline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from indexer import build
from indexer.cli import cli
from indexer.retrieval import Index
from indexer.retrieval.exact.kind import defines, named_kind
from indexer.settings import Settings

CLICK = Path(click.__file__).parent


@pytest.fixture(scope="module")
def click_source(tmp_path_factory) -> Path:
    """click's core.py (`class Option`) and decorators.py (`def option`), as a repository
    holds them, built with the code strategy: the index folder."""
    base = tmp_path_factory.mktemp("click")
    (base / "repo" / "click").mkdir(parents=True)
    for name in ("core.py", "decorators.py"):
        shutil.copy(CLICK / name, base / "repo" / "click" / name)
    build([base / "repo"], ["code"], settings=Settings.load(db=base / "db"))
    return base / "db"


def first_definitions(db: Path, query: str, mode: str) -> list[tuple[str, str, str]]:
    """(file, kind, symbol) of the hits an exact symbol tier ranked, best first."""
    hits = Index.open("code", settings=Settings.load(db=db)).search(query, mode=mode, k=6)
    return [(h.chunk.doc_id, h.chunk.kind, h.chunk.symbol) for h in hits if h.match == "exact symbol"]


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_class_option_ranks_the_class_before_the_option_decorator(click_source, mode):
    """`class Option` put `def option` (decorators.py) first and the class second to
    fourth: the user typed `class`. Every chunk of the class (split into its methods, each
    headed `core.py · class Option`) now comes before the decorator."""
    found = first_definitions(click_source, "class Option", mode)
    assert found[0] == ("click/core.py", "class", "Option"), found
    kinds = [kind for _, kind, _ in found]
    assert kinds.index("function") == len(kinds) - 1 and kinds.count("class") >= 2, found


@pytest.mark.parametrize("query", ["def option", "function option", "fn option"])
def test_a_function_word_ranks_the_function_first(click_source, query):
    assert first_definitions(click_source, query, "hybrid")[0] == ("click/decorators.py", "function", "option")


def test_the_cli_answers_class_option_with_the_class(click_source):
    done = CliRunner().invoke(cli, ["query", "class Option", "-s", "code", "--db", str(click_source), "--json"])
    assert done.exit_code == 0, done.output
    first = json.loads(done.stdout.splitlines()[0])
    assert (first["doc_id"], first["symbol"], first["match"]) == ("click/core.py", "Option", "exact symbol")
    assert first["text"].startswith("class Option(Parameter):")


def test_which_kind_a_query_names_and_what_defines_it():
    assert named_kind("class Option") == ("class",) and named_kind("Option") == named_kind("class") == ()
    assert named_kind("def option") == named_kind("func option") == named_kind("`fn option`")
    header = "core.py · class Option\nimports: typing"
    assert defines(header, named_kind("class Option"), "option")
    assert not defines("def option(*decls):", named_kind("class Option"), "option")
    assert defines("    def option(*decls):", named_kind("function option"), "option")
    assert not defines("def options(*decls):", named_kind("def option"), "option")  # another name
    assert defines("func (q *Queue) Put(x int) {}", named_kind("func Put"), "put")
    assert defines("type Queue struct {\n\titems []int\n}", named_kind("struct Queue"), "queue")
    assert defines("pub struct Queue {", named_kind("struct Queue"), "queue")
    assert defines("export interface Reader {", named_kind("interface Reader"), "reader")
    assert not defines("type Reader interface {", named_kind("struct Reader"), "reader")
