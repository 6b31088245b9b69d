"""A file is indexed once and a text shown once: a symlink to a file of the folder is
skipped with its reason, overlapping inputs index a file once, two inputs holding the same
relative path keep both (under ids that start with the input's name), and a search never
returns the same text twice — byte-identical files at two paths are both indexed, their
hits folded into the first, which names the other documents in `same_text`."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.indexing.watching import EventPaths
from indexer.loaders import discover
from indexer.retrieval import Index
from indexer.settings import Settings
from tests.conftest import CORPUS, write_file

FAQ = (CORPUS / "kargo-ve-teslimat.md").read_text(encoding="utf-8")


def _ids(found) -> list[str]:
    return [f.doc_id for f in found.files]


def test_a_symlink_to_a_file_of_the_folder_is_indexed_once_under_the_file_s_own_path(tmp_path):
    root = tmp_path / "docs"
    write_file(root, "a.md", "# A\n\nalpha\n")
    write_file(root, "sub/z.md", "# Z\n\nzeta\n")
    os.symlink(root / "a.md", root / "alias.md")  # after its target
    os.symlink("sub/z.md", root / "0-first.md")  # before it, relative
    os.symlink(root / "sub", root / "mirror")  # a folder link: its files too
    found = discover([root])
    assert _ids(found) == ["a.md", "sub/z.md"]
    reasons = {s.doc_id: s.reason for s in found.skipped}
    assert reasons == {"0-first.md": "symlink to sub/z.md, indexed there",
                       "alias.md": "symlink to a.md, indexed there",
                       "mirror/z.md": "symlink to sub/z.md, indexed there"}


def test_two_inputs_holding_the_same_relative_path_keep_both_under_their_names(tmp_path):
    write_file(tmp_path / "one", "guide.md", "# One\n\nthe first guide\n")
    write_file(tmp_path / "two", "guide.md", "# Two\n\nthe second guide\n")
    write_file(tmp_path / "a/docs", "x.md", "# A\n\na\n")
    write_file(tmp_path / "b/docs", "x.md", "# B\n\nb\n")
    write_file(tmp_path, "README.md", "# Readme\n\nr\n")
    found = discover([tmp_path / "one", tmp_path / "two"])
    assert _ids(found) == ["one/guide.md", "two/guide.md"] and not found.skipped
    assert _ids(discover([tmp_path / "one"])) == ["guide.md"]  # one input: ids unchanged
    assert _ids(discover([tmp_path / "a/docs", tmp_path / "b/docs", tmp_path / "README.md"])) == [
        "a/docs/x.md", "b/docs/x.md", "README.md"]
    nested = discover([tmp_path / "a", tmp_path / "a/docs"])  # overlapping inputs: each file once
    assert _ids(nested) == ["a/docs/x.md"]
    assert [(s.doc_id, s.reason) for s in nested.skipped] == [("docs/x.md", "the same file as a/docs/x.md "
                                                                           "(the inputs overlap)")]


def test_watch_names_a_changed_file_as_discovery_does(tmp_path):
    write_file(tmp_path / "one", "guide.md", "x")
    write_file(tmp_path / "two", "guide.md", "y")
    events = EventPaths([tmp_path / "one", tmp_path / "two"], tmp_path / "db")
    assert events.doc_id(str(tmp_path / "two" / "guide.md")) == "two/guide.md"
    assert events.path_of("two/guide.md") == (tmp_path / "two" / "guide.md").absolute()
    assert EventPaths([tmp_path / "one"], tmp_path / "db").doc_id(str(tmp_path / "one" / "guide.md")) == "guide.md"


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """The same policy at two paths, a symlink to it, and another page."""
    base = tmp_path_factory.mktemp("copies")
    root = base / "docs"
    write_file(root, "kargo.md", FAQ)
    write_file(root, "arsiv/kargo-eski.md", FAQ)  # byte-identical, another path
    write_file(root, "iade.md", (CORPUS / "iade-ve-geri-odeme.md").read_text(encoding="utf-8"))
    os.symlink(root / "kargo.md", root / "kargo-link.md")
    db = base / "db"
    built = CliRunner().invoke(cli, ["build", str(root), "-s", "headers", "--db", str(db), "--json"])
    assert built.exit_code == 0, built.output
    return db, json.loads(built.output)


def test_the_build_reports_the_symlink_and_indexes_both_copies(copies):
    db, reports = copies
    report = reports[0] if isinstance(reports, list) else reports
    assert {"doc_id": "kargo-link.md", "reason": "symlink to kargo.md, indexed there"} in report["skipped"]
    docs = {c.doc_id for c in Index.open("headers", settings=Settings.load(db=db)).chunks()}
    assert docs == {"kargo.md", "arsiv/kargo-eski.md", "iade.md"}


@pytest.mark.parametrize("mode", ["embedding", "bm25", "hybrid"])
def test_a_search_never_returns_the_same_text_twice(copies, mode):
    db, _ = copies
    hits = Index.open("headers", settings=Settings.load(db=db)).search("ekspres kargo teslim süresi", mode=mode, k=6)
    texts = [h.chunk.text for h in hits]
    assert len(texts) == len(set(texts)) == 6
    assert [h.rank for h in hits] == list(range(1, 7))
    copied = [h for h in hits if h.chunk.doc_id in ("kargo.md", "arsiv/kargo-eski.md")]
    assert copied and all(len(h.same_text) == 1 for h in copied)
    assert {copied[0].chunk.doc_id, *copied[0].same_text} == {"kargo.md", "arsiv/kargo-eski.md"}
    rows = [json.loads(line) for line in CliRunner().invoke(
        cli, ["query", "ekspres kargo teslim süresi", "-s", "headers", "--db", str(db), "--mode", mode,
              "-k", "6", "--json"]).output.splitlines()]
    assert [r["text"] for r in rows] == texts and rows[texts.index(copied[0].chunk.text)]["same_text"]
