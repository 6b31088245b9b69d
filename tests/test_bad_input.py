"""The bad-input matrix, through a real `indexer build` and real queries.

One folder holds every kind of bad input at once — binary, undecodable, UTF-16, legacy
Windows-1254, empty, over the size cap, unreadable, symlink loops and links out of the
folder, odd file names, hostile Markdown, a broken source file, and PDFs that are
encrypted, truncated, corrupt, scanned (no text layer) or over the page cap. The build must finish,
name every file it did not index with its reason (in the BuildReport and in the CLI
output), index the good files so they can be queried back, and keep the chunk
invariants on the hostile files. Then the query side: every bad request is one line
`Error: ...` with the documented exit code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.chunkers import parse_strategy
from indexer.cli import cli
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.loaders import discover, load_documents
from indexer.loaders.markdown import blocks_of
from indexer.retrieval import Index
from indexer.settings import Settings
from indexer.text.tokens import get_tokenizer
from tests import test_pdf as pdfs
from tests.conftest import write_file
from tests.test_chunkers import limit_of

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ["headers", "fixed64", "blocks", "parent", "semantic"]
MAX_FILE_SIZE = 256 * 1024
MAX_PDF_PAGES = 3
AS_ROOT = os.geteuid() == 0

# a 20,000-word paragraph without a single punctuation mark
_WORDS = ("kargo teslimat süresi iş günü müşteri ödeme iade ürün şikâyet ağırlık ışık öğrenci çağrı "
          "bölge ilçe köy fatura adres paket").split()
LONG_PARAGRAPH = " ".join(_WORDS[i % len(_WORDS)] for i in range(20_000))


def _nested_list(levels: int) -> str:
    lines = []
    for d in range(levels):
        lines.append("  " * d + f"- seviye {d + 1} madde kestanekabuğu")
    for d in range(levels):
        lines.append("   " * d + f"{d + 1}. sıralı seviye {d + 1}")
    return "\n".join(lines)


# good files: doc_id -> (content, a word found only in that file, for BM25 to find it)
GOOD: dict[str, tuple[str | bytes, str]] = {
    "good.md": ("# İyi Belge\n\nBu dosya düzgün. Anahtar sözcük zeytinlikler burada.\n", "zeytinlikler"),
    "isim boşluklu ğüşİ 🙂.md": ("# Emoji adı\n\nİçerik lavantatarlası ile dolu.\n", "lavantatarlası"),
    "alt klasör/çalışma notları 📦.md": ("# Notlar\n\nToplantı notu: fesleğenli 5.000 TL.\n", "fesleğenli"),
    "utf16.txt": ("UTF-16 metin: ğüşİ ve mandalinalar.\n".encode("utf-16"), "mandalinalar"),
    "cp1254.md": ("# Eski kodlama\n\nTürkçe karakterler ğışçöüİ ve çınaraltı.\n".encode("cp1254"), "çınaraltı"),
    # hostile but valid files: indexed, and their chunks must keep the invariants
    "unclosed-fence.md": (
        "# Kod örneği\n\nGiriş metni fındıkkabuğu anlatır.\n\n```python\n# bu bir başlık değil\n"
        "| a | b |\n|---|---|\ndef f(x):\n    return {'{': x}\n\n## hâlâ kodun içinde\n",
        "fındıkkabuğu",
    ),
    "rapor ğüş.pdf": (
        pdfs.pdf_bytes(pdfs.one_page_pdf, [["Bu rapor, zerdalibahçesi projesinin ilk çeyrek sonuçlarını", "özetler."],
                                           ["Sonuçlar beklenenden iyi çıktı."]]),
        "zerdalibahçesi",
    ),
    "ragged-table.md": (
        "# Tablo\n\nBölge tablosu portakallık:\n\n| Bölge | Standart | Ekspres |\n|---|---|---|\n"
        "| İlçe ve köyler | 3-5 iş günü |\n| KKTC | 5-8 iş günü | Yok | fazladan | hücre |\n| Van |\n"
        "| | | |\n| yalnız bir hücre\n\nTablo sonrası.\n",
        "portakallık",
    ),
    "nested-list.md": ("# Liste\n\n" + _nested_list(10) + "\n\nListe sonrası paragraf.\n", "kestanekabuğu"),
    "long-paragraph.md": ("# Uzun paragraf\n\nbaşlangıç ıhlamurağacı " + LONG_PARAGRAPH + "\n", "ıhlamurağacı"),
    "broken.py": (
        "import os\n\n\ndef broken(x:\n    return [1, 2, (3\n\n\nclass Eksik{\n    '''kapanmayan dize\n"
        "    def method(self) -> None\n        print(\"ayvalıklı\"\n}}}\n",
        "ayvalıklı",
    ),
}
EDGE_CASES = ["unclosed-fence.md", "ragged-table.md", "nested-list.md", "long-paragraph.md", "broken.py", "rapor ğüş.pdf"]

# bad files: doc_id -> the reason the build gives
SKIPPED_ON_LOAD = {
    "binary.md": "binary file (contains NUL bytes)",
    "invalid-utf8.md": "not valid UTF-8 nor Windows-1254; re-save it as UTF-8 or pass --encoding",
    "empty.md": "empty or whitespace-only file",
    "blank.txt": "empty or whitespace-only file",
    "secret.md": "unreadable (permission denied); fix its permissions or exclude it",
    "şifreli.pdf": pdfs.ENCRYPTED,
    "yarım.pdf": pdfs.TRUNCATED,
    "bozuk.pdf": pdfs.CORRUPT,
    "taranmış.pdf": pdfs.NO_TEXT,
}
SKIPPED_ON_DISCOVERY = {
    "big.md": "over the size cap (342 KB > 256 KB); raise --max-file-size to include it",
    "self-link.md": "symlink loop (not followed)",
    "loop": "folder already indexed through another path (symlink loop?)",
    "outside-link.md": "symlink points outside the indexed folder (not followed)",
    "outside-dir": "symlink points outside the indexed folder (not followed)",
    "uzun.pdf": "4 pages, over the cap of 3; raise --max-pdf-pages to include it",
}
WARNINGS = {"cp1254.md": "not valid UTF-8; read as Windows-1254 (Turkish), so letters of another language may be wrong: re-save it as UTF-8, or pass --encoding (e.g. latin-1)"}


@pytest.fixture(scope="module")
def corpus():
    """The folder of every bad input at once. It lives in a world-readable temporary
    folder (not pytest's tmp_path, which is private to root) so that the build can run
    as `nobody`, for whom the permission-denied file really is unreadable."""
    top = Path(tempfile.mkdtemp(prefix="indexer-bad-input-"))
    os.chmod(top, 0o755)
    root = top / "docs"
    root.mkdir()
    for rel, (content, _) in GOOD.items():
        write_file(root, rel, content)
    write_file(root, "binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01binary")
    write_file(root, "invalid-utf8.md", b"# Bozuk\n\nabc \x81\x8d\x90 def")
    write_file(root, "empty.md", "")
    write_file(root, "blank.txt", "  \n\t\n   \n")
    write_file(root, "big.md", "# Büyük\n\n" + "kelime " * 50_000)  # 0.3 MB, over the 256 KB cap
    write_file(root, "şifreli.pdf", pdfs.encrypted_pdf())
    write_file(root, "yarım.pdf", pdfs.truncated_pdf())
    write_file(root, "bozuk.pdf", pdfs.garbage_pdf())
    write_file(root, "taranmış.pdf", pdfs.pdf_bytes(pdfs.image_only_pdf))
    write_file(root, "uzun.pdf", pdfs.pdf_bytes(pdfs.make_policy_pdf, n_pages=4))  # over MAX_PDF_PAGES
    write_file(root, "secret.md", "# Gizli\n\ngizlisözcük")
    os.chmod(root / "secret.md", 0o000)
    os.symlink(root, root / "loop")  # a folder link back to the root
    os.symlink("self-link.md", root / "self-link.md")  # a link to itself
    outside = top / "outside"
    outside.mkdir()
    (outside / "secret-outside.md").write_text("# Dışarıda\n\ndışarıdakisözcük")
    os.symlink(outside / "secret-outside.md", root / "outside-link.md")
    os.symlink(outside, root / "outside-dir")
    for folder, _, _ in os.walk(top):
        os.chmod(folder, 0o755)
    yield root
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def api_build(corpus, tmp_path_factory):
    db = tmp_path_factory.mktemp("bad-input") / "index"
    reports = build([corpus], STRATEGIES, BuildOptions(max_file_size=MAX_FILE_SIZE, max_pdf_pages=MAX_PDF_PAGES), settings=Settings.load(db=db))
    return db, {r.strategy: r for r in reports}


@pytest.fixture(scope="module")
def cli_build(corpus):
    """`indexer build` in a subprocess. Root reads any file whatever its mode, so as root
    the build runs as `nobody` (setpriv), as tests/test_loaders.py does; the socket guard
    of conftest.py is installed in the subprocess too."""
    home = Path(tempfile.mkdtemp(prefix="indexer-bad-input-home-"))
    db = home / "index"
    code = "import tests.conftest; from indexer.cli import cli; cli(prog_name='indexer')"
    cmd = [sys.executable, "-c", code, "build", str(corpus), "--db", str(db), "--strategy", "headers",
           "--max-file-size", "256KB", "--max-pdf-pages", str(MAX_PDF_PAGES), "--quiet"]
    if AS_ROOT:
        if not Path("/usr/bin/setpriv").exists():
            pytest.skip("running as root without setpriv: cannot make a file unreadable")
        os.chown(home, 65534, 65534)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "XDG_CACHE_HOME", "INDEXER_DB")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=home, timeout=300)
    yield out, db
    shutil.rmtree(home, ignore_errors=True)


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


# -- the build ---------------------------------------------------------------------------

def test_build_completes_and_indexes_every_good_file(api_build):
    _, reports = api_build
    assert set(reports) == set(STRATEGIES)
    readable_secret = 1 if AS_ROOT else 0  # root reads the mode-000 file (see the CLI test)
    for report in reports.values():
        assert report.mode == "full" and report.chunks > 0
        assert report.files == len(GOOD) + readable_secret
        assert report.max_tokens <= limit_of(parse_strategy(report.strategy).create())


def test_every_file_skipped_on_load_is_reported_with_its_reason(api_build):
    _, reports = api_build
    expected = dict(SKIPPED_ON_LOAD)
    if AS_ROOT:
        del expected["secret.md"]  # root can read it; the CLI test runs as nobody instead
    for report in reports.values():
        reasons = {s.doc_id: s.reason for s in report.skipped}
        assert {k: reasons.get(k) for k in expected} == expected
        # everything else it skipped was turned away on discovery
        assert set(reasons) - set(expected) <= set(SKIPPED_ON_DISCOVERY) | ({"secret.md"} if AS_ROOT else set())
        assert {w.doc_id: w.reason for w in report.warnings} == WARNINGS


def test_a_file_s_caveat_is_listed_by_every_build_until_it_changes(tmp_path):
    """Like a skipped file, a file indexed with a caveat is listed again by the builds that
    do not read it (it is unchanged), not only by the one that did."""
    folder, db = tmp_path / "docs", tmp_path / "db"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nBir paragraf.\n", encoding="utf-8")
    (folder / "cp1254.md").write_bytes("# Eski\n\nŞişli çalışma ğışçöü.\n".encode("cp1254"))
    [first] = build([folder], ["fixed64"], settings=Settings.load(db=db))
    assert {w.doc_id: w.reason for w in first.warnings} == WARNINGS
    (folder / "a.md").write_text("# A\n\nBaşka bir paragraf.\n", encoding="utf-8")
    [second] = build([folder], ["fixed64"], settings=Settings.load(db=db))
    assert second.mode == "incremental" and second.changed == 1
    assert {w.doc_id: w.reason for w in second.warnings} == WARNINGS
    (folder / "cp1254.md").write_text("# Eski\n\nŞişli çalışma.\n", encoding="utf-8")  # re-saved as UTF-8
    [third] = build([folder], ["fixed64"], settings=Settings.load(db=db))
    assert third.warnings == []


def test_the_counts_of_a_build_leave_out_skipped_files(tmp_path):
    """added / changed / removed count what entered and left the index: a new file skipped
    on load was not added, and a file that now fails to load left it (was removed)."""
    folder, db = tmp_path / "docs", tmp_path / "db"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nBir paragraf.\n", encoding="utf-8")
    (folder / "b.md").write_text("# B\n\nİkinci paragraf.\n", encoding="utf-8")
    (folder / "empty.md").write_text("", encoding="utf-8")
    [first] = build([folder], ["fixed64"], settings=Settings.load(db=db))
    assert (first.added, first.files) == (2, 2)
    (folder / "c.md").write_text("# C\n\nÜçüncü.\n", encoding="utf-8")
    (folder / "binary.md").write_bytes(b"\x00\x01\x02" * 100)
    (folder / "b.md").write_bytes(b"\x00\xff" * 100)  # was indexed; now cannot be
    [second] = build([folder], ["fixed64"], settings=Settings.load(db=db))
    assert second.mode == "incremental"
    assert (second.added, second.changed, second.removed, second.files) == (1, 0, 1, 2)


def test_discovery_names_every_file_it_leaves_out(corpus):
    found = discover([corpus], max_file_size=MAX_FILE_SIZE, max_pdf_pages=MAX_PDF_PAGES)
    assert {s.doc_id: s.reason for s in found.skipped} == SKIPPED_ON_DISCOVERY
    assert {f.doc_id for f in found.files} == set(GOOD) | set(SKIPPED_ON_LOAD)


def test_cli_chunk_reports_every_bad_file(corpus):
    result = run("chunk", corpus, "--strategy", "blocks", "--max-file-size", "256KB", "--max-pdf-pages", MAX_PDF_PAGES)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    expected = {**SKIPPED_ON_DISCOVERY, **SKIPPED_ON_LOAD}
    if AS_ROOT:
        del expected["secret.md"]  # root reads it
    for doc_id, reason in expected.items():
        assert f"skipped {doc_id}: {reason}" in lines
    for doc_id, reason in WARNINGS.items():
        assert f"warning {doc_id}: {reason}" in lines


def test_files_skipped_on_discovery_are_reported_too(api_build):
    _, reports = api_build
    for report in reports.values():
        reasons = {s.doc_id: s.reason for s in report.skipped}
        assert {k: reasons.get(k) for k in SKIPPED_ON_DISCOVERY} == SKIPPED_ON_DISCOVERY


def test_cli_build_reports_every_bad_file_on_its_own_line(cli_build):
    out, _ = cli_build
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["strategy", "mode"]
    assert lines[1].split()[:3] == ["headers", "full", str(len(GOOD))]
    for doc_id, reason in SKIPPED_ON_LOAD.items():
        assert f"skipped {doc_id}: {reason}" in lines
    for doc_id, reason in WARNINGS.items():
        assert f"warning {doc_id}: {reason}" in lines
    assert out.stderr == ""  # --quiet


def test_cli_build_reports_files_skipped_on_discovery(cli_build):
    out, _ = cli_build
    lines = out.stdout.splitlines()
    missing = [f"skipped {d}: {r}" for d, r in SKIPPED_ON_DISCOVERY.items() if f"skipped {d}: {r}" not in lines]
    assert not missing


def test_cli_built_index_answers_queries(cli_build):
    _, db = cli_build
    result = run("query", "lavantatarlası", "--db", db, "--mode", "bm25", "--json")
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert hits[0]["doc_id"] == "isim boşluklu ğüşİ 🙂.md"
    every = run("query", "gizlisözcük", "--db", db, "--mode", "bm25", "-k", 1000, "--json")
    assert "secret.md" not in every.stdout  # the unreadable file was not indexed


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_good_files_can_be_queried_back(api_build, strategy):
    db, _ = api_build
    for doc_id, (_, word) in GOOD.items():
        result = run("query", word, "--db", db, "--strategy", strategy, "--mode", "bm25", "-k", 1, "--json")
        assert result.exit_code == 0, result.output
        hits = [json.loads(line) for line in result.stdout.splitlines()]
        assert [h["doc_id"] for h in hits] == [doc_id], (strategy, word)
        assert word in hits[0]["text"]  # parent returns the section around the child


def test_outside_and_skipped_content_is_not_indexed(api_build):
    db, _ = api_build
    index = Index.open("headers", settings=Settings.load(db=db))
    doc_ids = {c.doc_id for c in index.chunks()}
    expected = set(GOOD) | ({"secret.md"} if AS_ROOT else set())
    assert doc_ids == expected
    assert not any("dışarıdakisözcük" in c.text for c in index.chunks())


def test_decoded_files_are_stored_as_text(api_build):
    db, _ = api_build
    index = Index.open("headers", settings=Settings.load(db=db))
    [utf16] = index.chunks("utf16.txt")
    assert utf16.text == "UTF-16 metin: ğüşİ ve mandalinalar."
    cp1254 = "\n".join(c.text for c in index.chunks("cp1254.md"))
    assert "ğışçöüİ ve çınaraltı." in cp1254


@pytest.fixture(scope="module")
def documents(corpus):
    _, docs = load_documents([corpus], max_file_size=MAX_FILE_SIZE, max_pdf_pages=MAX_PDF_PAGES)
    return {d.doc_id: d for d in docs}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("doc_id", EDGE_CASES)
def test_hostile_files_keep_the_chunk_invariants(api_build, documents, strategy, doc_id):
    db, _ = api_build
    doc = documents[doc_id]
    index = Index.open(strategy, settings=Settings.load(db=db))
    chunks = index.chunks(doc_id)
    chunker = parse_strategy(strategy).create()
    limit = limit_of(chunker)
    tk = get_tokenizer()
    covered = bytearray(len(doc.text))
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
        assert c.text and c.text == c.text.strip()
        assert c.n_tokens <= limit
        if strategy != "fixed64":
            assert tk.count(c.text) <= limit
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    missing = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
    assert not missing, f"{strategy}: uncovered {doc.text[missing[0] : missing[0] + 40]!r}"
    if strategy == "parent":
        parents = index.fetch_parents(sorted({c.parent_id for c in chunks}))
        assert len(parents) == len({c.parent_id for c in chunks})
        for p in parents.values():
            assert doc.text[p.start : p.end] == p.text


def test_hostile_markdown_keeps_its_structure(api_build, documents):
    db, _ = api_build
    # the unclosed fence runs to the end of the file: `## hâlâ kodun içinde` is code, not a heading
    fence = documents["unclosed-fence.md"]
    assert [s.path for s in fence.sections] == ["Kod örneği"]
    assert [b.kind for b in blocks_of(fence)] == ["heading", "paragraph", "code"]
    assert all("hâlâ" not in c.heading_path for c in Index.open("blocks", settings=Settings.load(db=db)).chunks("unclosed-fence.md"))
    # ten nested levels are parsed to the bottom (markdown-it's default nesting limit
    # used to swallow the ordered list and the paragraph after it into the bullet list)
    assert [b.kind for b in blocks_of(documents["nested-list.md"])] == ["heading", "list", "list", "paragraph"]
    # a ragged table is one table, every row of it a part; it fits, so blocks keeps it whole
    table = documents["ragged-table.md"]
    [block] = [b for b in blocks_of(table) if b.kind == "table"]
    assert len(block.parts) == 6
    table_text = table.text[block.start : block.end]
    assert sum(table_text in c.text for c in Index.open("blocks", settings=Settings.load(db=db)).chunks("ragged-table.md")) == 1
    # 20,000 words without punctuation: windows of at most 512 tokens that cover it all
    long_ = Index.open("headers", settings=Settings.load(db=db)).chunks("long-paragraph.md")
    assert len(long_) > 20 and all(c.kind == "window" and c.n_tokens <= 512 for c in long_)


# -- the query side ------------------------------------------------------------------------

def test_empty_query_is_a_usage_error(api_build):
    db, _ = api_build
    assert one_line_error(run("query", "", "--db", db), 2) == "Error: the query is empty"
    assert one_line_error(run("query", "  \n ", "--db", db), 2) == "Error: the query is empty"


def test_100kb_query_is_a_usage_error(api_build):
    db, _ = api_build
    query = ("kargo nerede " * 8000)[:100_000]  # 100 KB
    line = one_line_error(run("query", query, "--db", db), 2)
    assert line == "Error: the query is 100,000 characters; the limit is 20,000 (ask a question, not a document)"


def test_k_zero_is_a_usage_error(api_build):
    db, _ = api_build
    assert one_line_error(run("query", "kargo", "--db", db, "-k", 0), 2) == "Error: -k must be at least 1, not 0"


@pytest.mark.parametrize("mode", ["embedding", "hybrid"])
def test_huge_k_returns_every_chunk(api_build, mode):
    """Every chunk's text, each once: a passage repeated in the corpus is one hit."""
    db, reports = api_build
    result = run("query", "kargo teslimat", "--db", db, "--strategy", "blocks", "--mode", mode, "-k", 100_000, "--json")
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    chunks = Index.open("blocks", settings=Settings.load(db=db)).chunks()
    assert len(chunks) == reports["blocks"].chunks
    assert sorted(h["text"] for h in hits) == sorted({c.text for c in chunks})
    assert len({h["id"] for h in hits}) == len(hits)
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))


def test_strategy_that_is_not_built_is_a_runtime_error(api_build, corpus):
    db, _ = api_build
    line = one_line_error(run("query", "kargo", "--db", db, "--strategy", "fixed256"), 1)
    assert line.startswith("Error: no collection for strategy 'fixed256' in ")
    assert line.endswith("(built: blocks, fixed64, headers, parent, semantic); build it: "
                         f"indexer build {corpus.resolve()} --strategy fixed256 --db {db}")  # built from it


def test_unknown_strategy_in_build_is_a_usage_error(corpus, tmp_path):
    db = tmp_path / "never"
    line = one_line_error(run("build", corpus, "--db", db, "--strategy", "nope"), 2)
    assert line.startswith("Error: unknown strategy 'nope'; presets: fixed64, ")
    assert not db.exists()  # nothing was created for a request that could not run


def test_missing_db_folder_is_a_runtime_error(tmp_path):
    db = tmp_path / "missing"
    line = one_line_error(run("query", "kargo", "--db", db), 1)
    assert line == f"Error: no index at {db}; build one first: indexer build PATH --db {db}"
    assert not db.exists()  # a query never creates an index


def test_db_folder_that_is_not_ours_is_a_runtime_error(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    line = one_line_error(run("query", "kargo", "--db", foreign), 1)
    assert line == f"Error: {foreign} is not an indexer database (no indexer.json in it); pass another --db"
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]  # left untouched


def _furniture_only_pdf(path: Path) -> None:
    """Three pages of nothing but a running header and a page-number footer."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdfs.register_fonts()
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    for n in (1, 2, 3):
        pdfs.draw_furniture(c, n, 3, "Sayfa {n} / {total}")
        c.showPage()
    c.save()


ONLY_BAD = {  # doc_id -> (content, the reason the build gives)
    "binary.md": (b"\x00\x01", "binary file (contains NUL bytes)"),
    "empty.md": ("", "empty or whitespace-only file"),
    "invalid-utf8.md": (b"abc \x81\x8d\x90 def", SKIPPED_ON_LOAD["invalid-utf8.md"]),
    "kenar.pdf": (pdfs.pdf_bytes(_furniture_only_pdf), "no text but running headers, footers or page numbers"),
    "şifreli.pdf": (pdfs.encrypted_pdf(), pdfs.ENCRYPTED),
    "taranmış.pdf": (pdfs.pdf_bytes(pdfs.image_only_pdf), pdfs.NO_TEXT),
    "big.md": ("# Büyük\n\n" + "kelime " * 50_000, SKIPPED_ON_DISCOVERY["big.md"]),
    ".gizli.md": ("# Gizli\n\nmetin", "hidden file (index it with --include '.gizli.md')"),
}


@pytest.mark.parametrize("quiet", [[], ["--quiet"], ["--json"]])
def test_a_folder_of_only_bad_files_names_every_file_then_fails_in_one_line(tmp_path, quiet):
    root = tmp_path / "bad"
    for rel, (content, _) in ONLY_BAD.items():
        write_file(root, rel, content)
    result = run("build", root, "--db", tmp_path / "db", "--strategy", "headers", "--max-file-size", "256KB", *quiet)
    assert result.exit_code == 1 and result.stdout == ""
    *reasons, error = result.stderr.splitlines()
    assert sorted(reasons) == sorted(f"skipped {rel}: {reason}" for rel, (_, reason) in ONLY_BAD.items())
    assert error == f"Error: no chunks for strategy headers: every file was skipped ({len(ONLY_BAD)} skipped); " \
                    "see the reasons above"


def test_a_folder_where_discovery_left_everything_out_names_every_file(tmp_path):
    root = tmp_path / "bad"
    write_file(root, "big.md", "# Büyük\n\n" + "kelime " * 50_000)
    write_file(root, ".gizli.md", "# Gizli\n\nmetin")
    for command in (["build", "--db", tmp_path / "db"], ["chunk"]):
        result = run(command[0], root, "--max-file-size", "256KB", *command[1:])
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr.splitlines() == [
            "skipped .gizli.md: hidden file (index it with --include '.gizli.md')",
            f"skipped big.md: {SKIPPED_ON_DISCOVERY['big.md']}",
            f"Error: nothing to index in {root} (2 skipped; see the reasons above); point at a folder with Markdown, "
            "text, HTML, PDF or source files, or check --include/--exclude",
        ]


def test_files_left_out_of_a_build_are_listed_with_quiet_too(tmp_path):
    root = tmp_path / "some"
    write_file(root, "good.md", "# İyi\n\nBu dosya düzgün.\n")
    write_file(root, "binary.md", b"\x00\x01")
    for flags in ([], ["--quiet"]):
        result = run("build", root, "--db", tmp_path / "db", "--strategy", "headers", *flags)
        assert result.exit_code == 0, result.output
        assert "skipped binary.md: binary file (contains NUL bytes)" in result.stdout.splitlines()
    assert result.stderr == ""  # --quiet: no progress, no notes


# -- messages that advise what is true (issue 35, item 15) --------------------------------------
def test_advice_names_commands_that_work(tmp_path):
    """A build refused with --no-wait says to run it without --no-wait (not `drop`); an
    empty index suggests the default build; a strategy name that is no strategy is said
    to be none and never pasted into a command; a spec suggests itself, not its
    collection name (`fixed-7` is no strategy)."""
    from tests.conftest import open_store

    docs = tmp_path / "docs"
    write_file(docs, "kargo.md", "# Kargo\n\nKargo ücreti 150 TL üzeri siparişlerde alınmaz.\n")
    db = tmp_path / "db"
    assert run("build", docs, "-s", "fixed64", "--db", db, "-q").exit_code == 0
    with open_store(db).builds.lease("fixed64", "use-m3"):  # a build of fixed64 holds its lease
        line = one_line_error(run("build", docs, "-s", "fixed64", "--db", db, "--no-wait"), 1)
    assert line == f"Error: another build of fixed64 (use-m3) is running on {db}; wait for it, or run the build " \
                   "without --no-wait to queue behind it"
    for junk in ("../../../etc", "a b", "x;rm -rf", "nope"):
        line = one_line_error(run("query", "kargo", "-s", junk, "--db", db), 2)
        assert line.startswith(f"Error: unknown strategy {junk!r}; presets: ") and "--strategy" not in line
    assert line.endswith("; built: fixed64")  # a name that could be a strategy, but is none
    line = one_line_error(run("query", "kargo", "-s", "fixed:size=7,overlap=0", "--db", db), 1)
    assert line.endswith(f"build it: indexer build {docs.resolve()} --strategy fixed:size=7,overlap=0 --db {db}")
    assert run("drop", "-s", "fixed64", "--db", db).exit_code == 0
    empty = run("list", "--db", db)
    assert empty.exit_code == 0 and empty.stdout == f"no collections yet; build one: indexer build PATH --db {db}\n"


def test_a_one_sentence_file_is_a_document_to_ask_about(tmp_path):
    """A file whose only sentence is short (under the 4 words a passage needs beside longer
    ones) is what the document says: it gets its question. A file with nothing to ask
    about is refused with a reason that is true of it."""
    docs = tmp_path / "docs"
    write_file(docs, "kargo.txt", "Shipping is free.\n")
    made = run("questions", docs, "-o", tmp_path / "q.jsonl", "-n", "2")
    assert made.exit_code == 0, made.output
    [question] = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text(encoding="utf-8").splitlines()]
    assert question["doc_id"] == "kargo.txt" and question["answer"] == "Shipping is free."
    write_file(docs, "kargo.txt", "Free.\n")
    line = one_line_error(run("questions", docs, "-o", tmp_path / "q2.jsonl"), 1)
    assert line.endswith("but only headings, code blocks, link lists, licence text, test code or lines under 2 words")
