"""Stale-index warnings for an index built from several folders (issue 51, G1): a query
warns of the files that changed since the build, and only of those; `eval
--require-fresh` sees them too. Real folders, real `indexer` processes."""

from __future__ import annotations

import json
import os
import shlex

from .faultkit import indexer, one_line_error


def _two_folders(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "a.md").write_text("# A\n\nZebras live here.\n", encoding="utf-8")
    (tmp_path / "b" / "b.md").write_text("# B\n\nYaks live here.\n", encoding="utf-8")


def _query(tmp_path, db="g1.idx"):
    done = indexer("query", "yaks", "-s", "headers", "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_build_from_two_folders_is_fresh_until_a_file_changes(tmp_path):
    _two_folders(tmp_path)
    for _ in range(2):  # the first build, then an unchanged one
        done = indexer("build", "a", "b", "-s", "headers", "--db", "g1.idx", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "warning" not in _query(tmp_path)
    with open(tmp_path / "b" / "b.md", "a", encoding="utf-8") as fh:
        fh.write("\nAnd goats.\n")
    assert "warning: 1 file(s) changed since headers was built (b/b.md)" in _query(tmp_path)
    (tmp_path / "a" / "a.md").unlink()
    assert "2 file(s) changed since headers was built (a/a.md, b/b.md)" in _query(tmp_path)
    # asked from another folder: the hint names the index, or it would build ./.indexer there
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    db = tmp_path.resolve() / "g1.idx"
    said = _query(elsewhere, db=db)
    a, b = tmp_path.resolve() / "a", tmp_path.resolve() / "b"
    assert said.rstrip().endswith(f"rebuild: indexer build {a} {b} -s headers --embedder use-m3 --db {db}"), said
    # pasted as it is, the advice rebuilds the stale collection, not another strategy
    advised = shlex.split(said.rstrip().rsplit("rebuild: ", 1)[1])
    assert advised[:2] == ["indexer", "build"]
    assert indexer(*advised[1:], cwd=elsewhere).returncode == 0
    assert "warning" not in _query(elsewhere, db=db)
    listed = indexer("list", "--db", db, "--json", cwd=elsewhere).stdout
    assert [json.loads(line)["strategy"] for line in listed.splitlines()] == ["headers"]


def test_eval_require_fresh_sees_a_change_in_a_build_from_two_folders(tmp_path):
    _two_folders(tmp_path)
    (tmp_path / "q.jsonl").write_text(
        '{"id": "q1", "question": "where do yaks live", "doc_id": "b/b.md", '
        '"answer": "Yaks live here."}\n',
        encoding="utf-8",
    )
    assert indexer("build", "a", "b", "-s", "headers", "--db", "g1.idx", cwd=tmp_path).returncode == 0
    args = ("eval", "q.jsonl", "-s", "headers", "--db", "g1.idx", "-m", "bm25", "-q", "--require-fresh")
    fresh = indexer(*args, cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    with open(tmp_path / "b" / "b.md", "a", encoding="utf-8") as fh:
        fh.write("\nAnd goats.\n")
    line = one_line_error(indexer(*args, cwd=tmp_path))
    a, b = tmp_path.resolve() / "a", tmp_path.resolve() / "b"
    assert line.endswith(f"(b/b.md); rebuild it: indexer build {a} {b} -s headers --embedder use-m3 --db g1.idx")


def test_folders_given_through_links_keep_the_names_they_were_built_under(tmp_path):
    """The doc_ids start with the names given (`one/docs/...`), not the resolved ones."""
    (tmp_path / "real" / "content").mkdir(parents=True)
    (tmp_path / "real" / "content" / "a.md").write_text("# A\n\nZebras.\n", encoding="utf-8")
    (tmp_path / "one").mkdir()
    os.symlink(tmp_path / "real" / "content", tmp_path / "one" / "docs")
    (tmp_path / "two" / "docs").mkdir(parents=True)
    (tmp_path / "two" / "docs" / "b.md").write_text("# B\n\nYaks live here.\n", encoding="utf-8")
    done = indexer("build", "one/docs", "two/docs", "-s", "headers", "--db", "x.idx", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in _query(tmp_path, "x.idx")
