"""The file manifest beside each version as typed records (`store.Manifest`, `FileEntry`):
what a build writes reads back to the same JSON, byte for byte, and a manifest written by
an older build (fewer fields per file, no labels) still reads and updates incrementally."""

import json

from indexer.indexing.building import build
from indexer.settings import Settings
from indexer.store import FileEntry, Manifest, Store
from indexer.store.layout import MANIFEST
from tests.test_reliability import change_corpus, make_corpus


def _manifest_path(db):
    store = Store(Settings.load(db=db))
    return store.side.path(store.catalogue.find("fixed64"), MANIFEST)


def test_a_manifest_reads_back_to_the_json_it_was_written_as(tmp_path):
    corpus, db = make_corpus(tmp_path / "corpus"), tmp_path / "db"
    (corpus / "broken.md").write_bytes(b"\xff\xfe\x00broken \x00\x00 binary")
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    text = _manifest_path(db).read_text(encoding="utf-8")
    manifest = Manifest.from_json(json.loads(text))
    assert manifest is not None and manifest.labels == [""] and list(manifest.skipped) == ["broken.md"]
    entry = manifest.files["kargo-ve-teslimat.md"]
    assert isinstance(entry, FileEntry) and entry.chunks > 0 and entry.newline == "lf"
    assert json.dumps(manifest.to_json(), ensure_ascii=False) == text


def test_an_older_builds_manifest_still_reads_and_updates(tmp_path):
    corpus, db = make_corpus(tmp_path / "corpus"), tmp_path / "db"
    build([corpus], ["fixed64"], settings=Settings.load(db=db))
    path = _manifest_path(db)
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["labels"]
    for entry in data["files"].values():  # as a build before identities and newlines wrote it
        for key in ("stat", "newline", "mtime"):
            del entry[key]
    path.write_text(json.dumps(data), encoding="utf-8")
    change_corpus(corpus)
    [report] = build([corpus], ["fixed64"], settings=Settings.load(db=db))
    assert report.mode == "incremental", report.reason
    assert (report.added, report.changed, report.removed) == (1, 1, 1)
    written = Manifest.from_json(json.loads(_manifest_path(db).read_text(encoding="utf-8")))
    assert written.files["kargo-ve-teslimat.md"].newline == "lf"
    assert "hediye-kartlari.md" not in written.files and "magaza-teslim.md" in written.files
