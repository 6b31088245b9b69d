"""Document text shown to people cannot drive the terminal: escape sequences (clear the
screen, set the window title, write the clipboard) and bidi overrides in a chunk's text, its
heading path or a file name are shown escaped by query, query --budget and dump, while
--json and the stored chunks keep the exact text.

Click strips ANSI sequences when stdout is not a terminal, so these runs ask for what a
terminal gets (`color=True`), not what a pipe gets."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.tables import printable
from tests.conftest import CORPUS

RTL = "\u202e"
HOSTILE = "pineapple \x1b]0;PWNED\x07 \x1b[2J\x1b[31mred\x1b[0m \x1b]52;c;Y3VybA==\x07"
MARKDOWN = f"# T\n\n{HOSTILE}\n\n## Sub \x1b[31mhead\n\nmore pineapple\ttext\n"
PLAIN = "pineapple in a plain file\n"
RAW = ("\x1b", "\x07", RTL)
SHOWN = ("\\x1b]0;PWNED\\x07", "\\x1b[2J", "\\x1b]52;c;", "Sub \\x1b[31mhead", "t\\u202etxt")


def terminal(*args: object) -> str:
    """What `indexer ARGS` writes to a terminal (colours and escapes not stripped)."""
    result = CliRunner().invoke(cli, [str(a) for a in args], color=True, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("terminal")
    docs = root / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(MARKDOWN, encoding="utf-8")
    (docs / f"t{RTL}txt.txt").write_text(PLAIN, encoding="utf-8")
    terminal("build", docs, "--strategy", "headers", "--db", root / "db", "-q")
    return root / "db"


def assert_shown_escaped(out: str, shown: tuple[str, ...]) -> None:
    assert [ch for ch in RAW if ch in out] == []
    for form in shown:
        assert form in out, (form, out)


def test_query_shows_escapes_of_text_headings_and_names(db):
    out = terminal("query", "pineapple", "--db", db, "--mode", "bm25", "-k", 10)
    assert_shown_escaped(out, SHOWN)
    assert "more pineapple\ttext" in out  # tabs and newlines are kept as they are


def test_query_budget_shows_escapes_of_spans_and_labels(db):
    out = terminal("query", "pineapple", "--db", db, "--mode", "bm25", "--budget", 200, "--fill")
    assert_shown_escaped(out, SHOWN)


def test_dump_shows_escapes_of_text_headings_and_names(db):
    out = terminal("dump", "--db", db)
    assert_shown_escaped(out, SHOWN)
    assert "\n# T\n\npineapple " in out


def test_json_keeps_the_exact_text(db):
    out = terminal("query", "pineapple", "--db", db, "--mode", "bm25", "-k", 10, "--json")
    hits = {h["doc_id"]: h for h in map(json.loads, out.splitlines())}
    assert any(HOSTILE in h["text"] for h in hits.values())
    assert f"t{RTL}txt.txt" in hits and hits[f"t{RTL}txt.txt"]["header"] == f"t{RTL}txt"
    dumped = [json.loads(line) for line in terminal("dump", "--db", db, "--json").splitlines()]
    mine = [c for c in dumped if c["doc_id"] == "a.md"]
    assert [c["text"] for c in mine] == [MARKDOWN[c["start"] : c["end"]] for c in mine]
    assert any(c["text"] == f"# T\n\n{HOSTILE}" for c in mine)


def test_printable_keeps_lines_only_when_asked():
    text = "a\tb\nc\rd\x1b[2J\x9b\u2028\u2066e"
    assert printable(text) == "a\\tb\\nc\\rd\\x1b[2J\\x9b\\u2028\\u2066e"
    assert printable(text, lines=True) == "a\tb\nc\\rd\\x1b[2J\\x9b\\u2028\\u2066e"


def test_questions_shows_escapes_of_the_names_it_skips(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("kargo-ve-teslimat.md", "iade-ve-geri-odeme.md"):
        shutil.copy(CORPUS / name, docs / name)
    (docs / f"b{RTL}\x1b[2J.md").write_bytes(b"\x00\x01\x02binary\x00" * 64)  # skipped: not text
    result = CliRunner().invoke(
        cli, ["questions", str(docs), "-o", str(tmp_path / "q.jsonl"), "-n", "2", "--db", str(tmp_path / "db")],
        color=True, catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "skipped b\\u202e\\x1b[2J.md: " in result.stderr, result.stderr
    assert [ch for ch in RAW if ch in result.stderr] == []
