"""What strangers' trials of `indexer questions` found on real folders (man pages, a
missing folder): each test failed before its fix."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from indexer.cli import cli


@pytest.mark.parametrize("files, reason", [
    (None, "{folder}: no such file or folder"),
    ({"blob.txt": b"\x7fELF\x00\x01" * 50}, "blob.txt: binary file (contains NUL bytes)"),
], ids=["missing", "binary"])
def test_a_folder_without_documents_says_why_each_file_was_skipped(write_files, tmp_path, files, reason):
    """`indexer questions nosuch -o q.jsonl` said "1 skipped; see the reasons above" with no
    reason above it (`indexer build` prints "skipped nosuch: no such file or folder")."""
    folder = write_files(files) if files else tmp_path / "nosuch"
    result = CliRunner().invoke(cli, ["questions", str(folder), "-o", str(tmp_path / "q.jsonl")])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert "skipped " + reason.format(folder=folder) in lines
    assert lines[-1].startswith("Error: no documents to ask about")
