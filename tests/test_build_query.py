"""Build and query against a real embedded Chroma and a real `chroma run` server, with
the real default embedder (USE multilingual)."""

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.errors import CollectionNotFound, EmbedderError, StoreError, UsageError
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.indexing.pipeline import chunk
from indexer.retrieval import DEFAULTS, Index, SearchOptions, search
from indexer.retrieval.fusion import FUSION_BY_KIND, adaptive_alpha, weighted
from indexer.settings import Settings
from indexer.store import Records, Store
from tests.conftest import CORPUS, open_store, raw_chroma
from tests.ollama_standin import StandInOllama

VAN = "Siparişim Van'ın bir köyüne kaç günde gelir?"
SHIPPING_TABLE = "Kargo ve Teslimat › Bölgelere Göre Teslim Süreleri"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def snapshot(db, strategy):
    index = Index.open(strategy, settings=Settings.load(db=db))
    got = raw_chroma(db).collection(index.entry.collection).get(include=["embeddings", "documents", "metadatas"])
    order = np.argsort(got["ids"])
    return ([got["ids"][i] for i in order], [got["documents"][i] for i in order],
            np.asarray(got["embeddings"])[order], index.entry)


def test_first_build_reports_what_it_did(built_db):
    _, reports = built_db
    expected, _, _ = chunk([CORPUS], ["headers", "fixed64"])
    for report in reports:
        assert report.mode == "full" and report.reason == "first build"
        assert report.files == 10
        assert report.chunks == len(expected[report.strategy])
        assert report.embedded == report.chunks - report.cache_hits
        assert report.max_tokens <= 512
        assert report.timings["embed"] > 0


def test_a_store_opens_one_way_and_hands_out_its_roles(built_db):
    """`Store(settings)`: a path is refused with the way to say it; the front holds the
    catalogue, the writer, the reads and the side files."""

    db, _ = built_db
    with pytest.raises(TypeError, match=r"Store\(Settings.load\(db=...\)\)"):
        Store(db)
    store = Store(Settings.load(db=db))
    entry = store.catalogue.find("headers")
    assert store.side.manifest(entry).files
    assert store.records.count(entry) == entry.chunks + len(entry.pending_ids)
    assert [e.strategy for e in store.catalogue.entries()] == ["fixed64", "headers"]
    assert store.builds.physical.unpublished() == {}  # nothing a killed build left


def test_van_village_question_finds_the_shipping_table(built_db):
    db, _ = built_db
    hits = search(VAN, "headers", k=3, settings=Settings.load(db=db))
    assert SHIPPING_TABLE in [h.chunk.heading_path for h in hits]
    table = next(h for h in hits if h.chunk.heading_path == SHIPPING_TABLE)
    assert "| İlçe ve köyler | 3-5 iş günü | Yok |" in table.chunk.text
    assert all(0 < h.score <= 1 for h in hits)
    assert [h.rank for h in hits] == [1, 2, 3]
    # every search option, not only mode and k, through the one-shot search
    options = SearchOptions(mode="hybrid", k=4, fusion="rrf", rrf_k=10)
    rrf = search(VAN, "headers", options=options, settings=Settings.load(db=db))
    opened = Index.open("headers", settings=Settings.load(db=db)).search(VAN, options)
    assert [(h.chunk.id, h.score) for h in rrf] == [(h.chunk.id, h.score) for h in opened]
    assert len(rrf) == 4 and max(h.score for h in rrf) <= 2 / 11  # RRF scores, not the default fusion's


def test_hits_are_exact_document_slices(built_db):
    db, _ = built_db
    texts = {p.name: p.read_text(encoding="utf-8") for p in CORPUS.glob("*.md")}
    for mode in ("embedding", "bm25", "hybrid"):
        for hit in search("iade süresi kaç gün", "fixed64", mode=mode, k=5, settings=Settings.load(db=db)):
            c = hit.chunk
            assert texts[c.doc_id][c.start : c.end] == c.text


def test_rebuild_changes_nothing_and_full_rebuild_hits_the_cache(built_db, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(built_db[0], db)
    before = snapshot(db, "headers")
    [again] = build([CORPUS], ["headers"], settings=Settings.load(db=db))
    assert again.mode == "unchanged" and again.embedded == 0
    [full] = build([CORPUS], ["headers"], BuildOptions(full=True), settings=Settings.load(db=db))
    assert full.mode == "full" and full.embedded == 0 and full.cache_hits == full.chunks
    after = snapshot(db, "headers")
    assert before[0] == after[0] and before[1] == after[1]
    assert np.allclose(before[2], after[2])
    assert after[3].collection != before[3].collection  # a new physical collection...
    names = [name for name, _ in raw_chroma(db).listing()]
    assert before[3].collection not in names  # ...and the old one is gone


def test_another_strategy_over_the_same_text_reuses_embeddings(built_db, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(built_db[0], db)
    # no section is over 512 tokens, so these chunks equal the headers chunks
    [report] = build([CORPUS], ["headers:overlap=32"], settings=Settings.load(db=db))
    assert report.strategy == "headers-overlap-32"
    assert report.embedded == 0 and report.cache_hits == report.chunks


def test_query_errors_are_one_line(built_db, tmp_path):
    db, _ = built_db
    with pytest.raises(CollectionNotFound, match=r"no collection for strategy 'blocks' .*built: fixed64, headers"):
        search(VAN, "blocks", settings=Settings.load(db=db))
    with pytest.raises(CollectionNotFound, match="no index at"):
        search(VAN, "headers", settings=Settings.load(db=tmp_path / "missing"))
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="is not an indexer database"):
        search(VAN, "headers", settings=Settings.load(db=foreign))
    with pytest.raises(UsageError, match="-k must be at least 1"):
        search(VAN, "headers", k=0, settings=Settings.load(db=db))
    with pytest.raises(UsageError, match="the query is empty"):
        search("   ", "headers", settings=Settings.load(db=db))
    with pytest.raises(UsageError, match="the limit is 20,000"):
        search("kargo " * 20_000, "headers", settings=Settings.load(db=db))
    with pytest.raises(CollectionNotFound, match="was built with use-m3, not e5-small"):
        search(VAN, "headers", built_with="e5-small", settings=Settings.load(db=db))


@pytest.mark.parametrize("mode", ["embedding", "bm25", "hybrid"])
def test_top_5_is_the_prefix_of_top_10_ties_included(built_db, mode):
    db, _ = built_db
    index = Index.open("fixed64", settings=Settings.load(db=db))
    # one-word queries give many equal BM25 scores (and equal fused scores): ties everywhere
    for query in ("kargo", "iade", "puan", "Siparişim Van'ın bir köyüne kaç günde gelir?", "zzzz kargo"):
        top10 = index.search(query, SearchOptions(mode=mode, k=10))
        top5 = index.search(query, SearchOptions(mode=mode, k=5))
        assert [h.chunk.id for h in top5] == [h.chunk.id for h in top10[:5]]
        scores = [h.score for h in top10]
        assert scores == sorted(scores, reverse=True)
        for a, b in zip(top10, top10[1:]):  # equal scores: document, then position
            if round(a.score, 9) == round(b.score, 9):
                assert (a.chunk.doc_id, a.chunk.start) <= (b.chunk.doc_id, b.chunk.start)


def test_a_parameterised_collection_is_found_by_the_spec_it_was_built_with(built_db, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(built_db[0], db)
    build([CORPUS], ["fixed:size=100"], settings=Settings.load(db=db))
    for args in (["query", VAN], ["dump"], ["drop"]):
        result = run(*args, "--strategy", "fixed:size=100", "--db", db)
        assert result.exit_code == 0, result.output
    assert "dropped fixed-100" in result.output


def test_a_spec_equal_to_a_preset_is_the_preset_in_every_command(built_db, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(built_db[0], db)
    spec = "fixed:size=64,overlap=16"  # exactly fixed64
    result = run("query", VAN, "--strategy", spec, "--mode", "bm25", "--db", db, "--json")
    assert result.exit_code == 0, result.output
    assert result.output == run("query", VAN, "--strategy", "fixed64", "--mode", "bm25", "--db", db, "--json").output
    result = run("dump", "--strategy", spec, "--doc", "kargo-ve-teslimat.md", "--db", db)
    assert result.exit_code == 0 and result.output.startswith("--- kargo-ve-teslimat.md [0..")
    assert run("dump", "kargo-ve-teslimat.md", "--strategy", spec, "--db", db).output == result.output  # as README says
    clash = run("dump", "iade-ve-geri-odeme.md", "--doc", "kargo-ve-teslimat.md", "--strategy", spec, "--db", db)
    assert clash.exit_code == 2 and "name two documents" in clash.output
    by_path = run("dump", "corpus/kargo-ve-teslimat.md", "--strategy", spec, "--db", db)  # a stranger's first try
    assert by_path.exit_code == 1
    assert "documents are named by their path inside the indexed folder: 'kargo-ve-teslimat.md'" in by_path.output
    result = run("eval", CORPUS / "questions.jsonl", "-s", spec, "-s", "headers", "-m", "bm25", "--db", db, "-q",
                 "--compare", "fixed:overlap=16,size=64", "headers", "--json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["strategy"] for r in rows if r["row"] == "result"] == ["fixed64", "headers"]
    assert {(r["a"], r["b"]) for r in rows if r["row"] == "compare"} == {("fixed64/bm25", "headers/bm25")}
    assert Index.open(spec, settings=Settings.load(db=db)).entry.strategy == "fixed64"  # what tune, serve and mcp open collections with
    # building the spec builds the preset's collection (here: nothing changed), not a second one
    [report] = build([CORPUS], ["fixed:overlap=16,size=64"], settings=Settings.load(db=db))
    assert (report.strategy, report.mode) == ("fixed64", "unchanged")
    assert sorted(e.strategy for e in open_store(db).catalogue.entries()) == ["fixed64", "headers"]
    result = run("drop", "--strategy", spec, "--db", db)
    assert result.exit_code == 0 and result.output.startswith("dropped fixed64 ")


def test_a_collection_named_before_names_were_canonical_is_still_found(tmp_path, write_files):
    root = write_files({"a.md": "# Başlık\n\nKısa bir metin burada duruyor.\n"})
    build([root], ["fixed"], BuildOptions(name="fixed"), settings=Settings.load(db=tmp_path / "db"))  # what `build -s fixed` used to name it
    assert Index.open("fixed", settings=Settings.load(db=tmp_path / "db")).entry.strategy == "fixed"
    result = run("drop", "--strategy", "fixed", "--db", tmp_path / "db")
    assert result.exit_code == 0 and result.output.startswith("dropped fixed ")


def test_names_with_control_characters_are_escaped_in_text_and_exact_in_json(tmp_path, write_files):
    root = write_files({"satır\nsonu.md": "# Yeni satır\n\nkarpuzlu içerik.\n",
                        "sekme\tadı.md": "# Sekme\n\nkavunlu içerik.\n"})
    db = tmp_path / "db"
    build([root], ["headers"], settings=Settings.load(db=db))
    result = run("query", "karpuzlu", "--strategy", "headers", "--mode", "bm25", "-k", 1, "--db", db)
    assert result.output.splitlines()[0].startswith("#1  ") and "  satır\\nsonu.md:1-3  [section]" in result.output
    result = run("dump", "--strategy", "headers", "--db", db)
    assert [line.split(" [")[0] for line in result.output.splitlines() if line.startswith("--- ")] == \
        ["--- satır\\nsonu.md", "--- sekme\\tadı.md"]
    rows = [json.loads(line) for line in run("dump", "--strategy", "headers", "--db", db, "--json").output.splitlines()]
    assert [r["doc_id"] for r in rows] == ["satır\nsonu.md", "sekme\tadı.md"]


def test_dump_says_when_offsets_index_a_file_read_with_its_crlf_as_newlines(tmp_path, write_files):
    root = write_files({"win.md": "# Windows\r\n\r\nBirinci satır.\r\nİkinci satır.\r\n\r\n## Alt\r\n\r\nSon.\r\n",
                        "unix.md": "# Unix\n\nSatır.\n"})
    db = tmp_path / "db"
    build([root], ["headers"], settings=Settings.load(db=db))
    rows = [json.loads(line) for line in run("dump", "--strategy", "headers", "--db", db, "--json").output.splitlines()]
    assert {r["doc_id"]: r["newline"] for r in rows} == {"unix.md": "lf", "win.md": "crlf"}
    for r in rows:  # offsets index the text as Python's open() reads it (universal newlines)...
        with open(root / r["doc_id"], encoding="utf-8") as fh:
            assert fh.read()[r["start"]:r["end"]] == r["text"]
    with open(root / "win.md", encoding="utf-8", newline="") as fh:  # ...not the file's own \r\n
        raw = fh.read()
    assert any(raw[r["start"]:r["end"]] != r["text"] for r in rows if r["doc_id"] == "win.md")
    text = run("dump", "--strategy", "headers", "--db", db).output.splitlines()
    assert text.count("=== win.md has CRLF newlines: offsets index its text with each newline read as \\n "
                      "(as Python's open() reads it)") == 1
    assert not any(line.startswith("=== unix.md") for line in text)


def test_k_larger_than_the_collection_returns_everything(built_db):
    db, reports = built_db
    n = next(r.chunks for r in reports if r.strategy == "headers")
    assert len(search(VAN, "headers", k=100_000, settings=Settings.load(db=db))) == n
    assert len(search(VAN, "headers", k=100_000, mode="bm25", settings=Settings.load(db=db))) <= n


def test_cli_query_list_dump_and_drop(built_db, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(built_db[0], db)
    result = run("query", VAN, "--strategy", "headers", "-k", "2", "--db", db, "--json")
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2]
    assert set(rows[0]) >= {"rank", "score", "id", "doc_id", "start", "end", "header", "text"}

    listing = run("list", "--db", db)
    lines = listing.output.splitlines()
    assert lines[0].split() == ["strategy", "embedder", "files", "chunks", "avgTok", "disk", "built", "search",
                                 "emb/bm25", "parameters"]
    assert "hybrid adaptive 0.05-0.5 by coverage 0.3-0.6" in lines[1]
    assert [line.split()[:3] for line in lines[1:-1]] == [["fixed64", "use-m3", "10"], ["headers", "use-m3", "10"]]
    assert lines[-1].startswith("index folder ") and "embedding cache" in lines[-1]

    dumped = run("dump", "--strategy", "fixed64", "--doc", "kargo-ve-teslimat.md", "--db", db, "--json")
    chunks = [json.loads(line) for line in dumped.output.splitlines()]
    text = (CORPUS / "kargo-ve-teslimat.md").read_text(encoding="utf-8")
    assert [c["start"] for c in chunks] == sorted(c["start"] for c in chunks)
    assert all(text[c["start"] : c["end"]] == c["text"] for c in chunks)

    dropped = run("drop", "--strategy", "fixed64", "--db", db)
    assert dropped.output.startswith("dropped fixed64 (use-m3, ")
    missing = run("query", VAN, "--strategy", "fixed64", "--db", db)
    assert missing.exit_code == 1
    assert missing.output == (
        f"Error: no collection for strategy 'fixed64' in {db} (built: headers); "
        f"build it: indexer build {CORPUS.resolve()} --strategy fixed64 --db {db}\n"
    )


def test_corrupt_database_is_a_one_line_error(built_db, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(built_db[0], db)
    (db / "chroma" / "chroma.sqlite3").write_bytes(b"this is not sqlite" * 100)
    result = run("query", VAN, "--db", db)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot open the Chroma database in {db / 'chroma'}")
    assert len(result.output.strip().splitlines()) == 1


def test_server_mode_build_and_query(chroma_server, tmp_path):
    db = tmp_path / "side"
    result = run("build", CORPUS, "--strategy", "headers", "--chroma-url", chroma_server, "--db", db, "-q")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].split()[:4] == ["headers", "full", "10", "65"]
    found = run("query", VAN, "--strategy", "headers", "-k", "3", "--chroma-url", chroma_server, "--db", db, "--json")
    paths = [json.loads(line)["heading_path"] for line in found.output.splitlines()]
    assert SHIPPING_TABLE in paths
    # another machine has no side files: BM25 is rebuilt from the stored indexed_text
    other = tmp_path / "other-machine"
    hybrid = run("query", VAN, "--strategy", "headers", "--mode", "hybrid", "--chroma-url", chroma_server,
                 "--db", other, "--json")
    assert hybrid.exit_code == 0 and len(hybrid.output.splitlines()) == 5
    entry = Index.open("headers", settings=Settings.load(db=other, chroma_url=chroma_server)).entry
    saved = open_store(other, chroma_server).side.folder(entry.collection, entry.generation) / "bm25" / "params.json"
    assert saved.exists()
    written = saved.stat().st_mtime_ns
    again = run("query", VAN, "--strategy", "headers", "--chroma-url", chroma_server, "--db", other, "--json")
    assert again.output == hybrid.output and saved.stat().st_mtime_ns == written  # found, not rebuilt again


def test_unreachable_chroma_server_is_a_one_line_error(tmp_path):
    from tests.conftest import free_port

    result = run("query", VAN, "--chroma-url", f"http://127.0.0.1:{free_port()}", "--db", tmp_path / "x")
    assert result.exit_code == 1
    assert "cannot reach the Chroma server" in result.output and len(result.output.splitlines()) == 1


def test_ollama_embedder_through_the_real_client_and_a_stand_in_server(tmp_path, write_files):
    """No Ollama server can run here; StandInOllama speaks its /api/embed wire format."""
    root = write_files({"a.md": "# Kargo\n\nTeslimat üç gün sürer.\n\n## İade\n\nİade on dört gün içinde yapılır.\n"})
    with StandInOllama() as server:
        ollama = Settings.load(db=tmp_path / "db", embedder="ollama:nomic-embed-text", ollama_host=server.url)
        [report] = build([root], ["headers"], settings=ollama)
        assert report.embedder == "ollama:nomic-embed-text" and report.embedded == 2
        embeds = [body for route, body in server.requests if route == "/api/embed"]
        sent = [t for body in embeds for t in body["input"]]
        assert all(t.startswith("search_document: ") for t in sent if t != "dimension probe")
        hits = search("on dört gün içinde", "headers", k=1, settings=Settings.load(db=tmp_path / "db", ollama_host=server.url),
                      built_with="ollama:nomic-embed-text")
        assert server.requests[-1][1]["input"] == ["search_query: on dört gün içinde"]
        assert hits[0].chunk.heading_path == "Kargo › İade"
        with pytest.raises(EmbedderError, match=r"has no model 'mxbai-embed-large': run `ollama pull mxbai-embed-large`"):
            build([root], ["headers"], settings=ollama.with_(db=tmp_path / "db2", embedder="ollama:mxbai-embed-large"))
    from tests.conftest import free_port

    with pytest.raises(EmbedderError, match="cannot reach the Ollama server at http://127.0.0.1:"):
        build([root], ["headers"], settings=Settings.load(db=tmp_path / "db3", embedder="ollama:nomic-embed-text",
                                                          ollama_host=f"http://127.0.0.1:{free_port()}"))


def test_hybrid_hits_say_why_they_ranked(built_db):
    db, _ = built_db
    result = run("query", VAN, "--strategy", "headers", "--fusion", "rrf", "-k", "5", "--db", db, "--json")
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert len(rows) == 5
    for row in rows:
        assert row["embedding_rank"] is not None or row["bm25_rank"] is not None
        k = DEFAULTS.rrf_k
        expected = sum(1 / (k + r) for r in (row["embedding_rank"], row["bm25_rank"]) if r is not None)
        assert row["score"] == pytest.approx(expected)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


@pytest.mark.parametrize("query", [VAN, "yurtdisina kargo var mi", "hediye kartı bakiyesi nasıl sorgulanır"])
def test_default_fusion_weighs_the_embedding_by_bm25_coverage(built_db, query):
    db, _ = built_db
    index = Index.open("headers", settings=Settings.load(db=db))
    assert index.options().describe() == "hybrid adaptive 0.05-0.5 by coverage 0.3-0.6"
    dense, sparse = index.snapshot().sides.dense(query, 50), index.snapshot().sides.sparse(query, 50)
    coverage = index.snapshot().parts.bm25.coverage(query, [index.snapshot().parts.bm25.position(sparse[0][0])])[0]
    assert index.snapshot().parts.fusion["kind"] == "prose" and index.snapshot().parts.fusion["lang"] == "tr"  # calibrated at build time
    share = adaptive_alpha(coverage, *FUSION_BY_KIND[("use-m3", "prose", "tr")])
    expected = weighted(dict(dense), dict(sparse), share)[:5]
    hits = index.search(query, k=5)
    assert [h.chunk.id for h in hits] == [cid for cid, _ in expected]
    assert [h.score for h in hits] == pytest.approx([score for _, score in expected])
    assert {h.embedding_share for h in hits} == {share}
    rows = [json.loads(line) for line in run("query", query, "-s", "headers", "--db", db, "--json").output.splitlines()]
    assert [r["id"] for r in rows] == [h.chunk.id for h in hits] and rows[0]["embedding_share"] == share


def test_a_query_reads_only_the_records_it_returns(built_db, monkeypatch):
    """No full scan on the query path: BM25 is mapped from its files, Chroma is asked for
    the nearest vectors only, and the records of the hits (and of tied candidates) only are
    read from the rows mapped beside the index."""
    from indexer.retrieval.rows.table import RowStore

    db, _ = built_db
    index = Index.open("headers", settings=Settings.load(db=db))
    read: list[list[str]] = []
    real = RowStore.records

    def records(self, ids):
        read.append(list(ids))
        return real(self, ids)

    def scan(*_args, **_kw):
        raise AssertionError("a full scan on the query path")

    def from_chroma(*_args, **_kw):
        raise AssertionError("records read from Chroma, not from the rows beside the index")

    monkeypatch.setattr(RowStore, "records", records)
    monkeypatch.setattr(Records, "get", from_chroma)
    monkeypatch.setattr(Records, "scan", scan)
    monkeypatch.setattr(Records, "indexed_texts", scan)
    for mode in ("embedding", "bm25", "hybrid"):
        assert len(index.search(VAN, mode=mode, k=5)) == 5
    assert read and all(len(ids) <= DEFAULTS.candidates for ids in read)
    assert index.count() == index.entry.chunks and index.snapshot().parts.bm25.engine == "postings"


def test_tied_candidates_below_the_hits_are_not_read(built_db, monkeypatch):
    """A one-word query ties many candidates at equal BM25 scores; only the groups of
    equal scores that reach into the top k are read to order them, not those cut below."""
    db, _ = built_db
    index = Index.open("fixed64", settings=Settings.load(db=db))
    ranking = [(index.snapshot().parts.bm25.ids[p], round(s, 9)) for p, s in index.snapshot().parts.bm25.search("kargo", DEFAULTS.candidates)]
    from indexer.retrieval.rows.table import RowStore

    read: list[str] = []
    real = RowStore.records

    def records(self, ids):
        read.extend(ids)
        return real(self, ids)

    monkeypatch.setattr(RowStore, "records", records)
    hits = index.search("kargo", SearchOptions(mode="bm25", k=2))
    floor = min(round(h.score, 9) for h in hits)
    below = [cid for cid, s in ranking if s < floor and sum(t == s for _, t in ranking) > 1]
    assert below, "the corpus should tie candidates below the hits"
    assert read and not set(read) & set(below)
    assert [h.chunk.id for h in hits] == [h.chunk.id for h in index.search("kargo", SearchOptions(mode="bm25", k=10))][:2]


def test_a_reader_brings_its_bm25_index_up_to_date_after_an_incremental_build(chroma_server, tmp_path, write_files):
    """A reader of a Chroma server (its own --db) rebuilds BM25 from the stored texts once;
    after the builder's incremental build it adds the new generation's records and drops
    the ones it retired (listed per generation in the catalogue) instead of rebuilding."""
    files = {f"not{i:02d}.md": f"# Not {i}\n\nBu not {i} numaralı kaydı anlatır.\n" for i in range(40)}
    root = write_files({**files, "kargo.md": "# Kargo\n\nTeslimat üç gün sürer. Kargo ücreti alıcıya aittir.\n",
                        "iade.md": "# İade\n\nİade on dört gün içinde yapılır.\n",
                        "garanti.md": "# Garanti\n\nGaranti iki yıldır.\n"})  # one change: under a tenth
    spec, builder, reader = "fixed:size=24,overlap=0", tmp_path / "builder", tmp_path / "reader"
    build([root], [spec], settings=Settings.load(db=builder, chroma_url=chroma_server))
    first = Index.open(spec, settings=Settings.load(db=reader, chroma_url=chroma_server))
    assert first.search("kargo ücreti", mode="bm25", k=1)[0].chunk.doc_id == "kargo.md"
    before = open_store(reader, chroma_server).side.folder(first.entry.collection, first.entry.generation) / "bm25"
    (root / "iade.md").write_text("# İade\n\nİade otuz gün içinde yapılır; kargo ücreti iade edilir.\n")
    [report] = build([root], [spec], settings=Settings.load(db=builder, chroma_url=chroma_server))
    assert report.mode == "incremental" and report.retired >= 1
    index = Index.open(spec, settings=Settings.load(db=reader, chroma_url=chroma_server))
    assert index.entry.generation == first.entry.generation + 1
    mine = Index.open(spec, settings=Settings.load(db=builder, chroma_url=chroma_server))
    for query in ("otuz gün", "kargo ücreti", "garanti", "on dört gün"):
        assert [(h.chunk.id, round(h.score, 5)) for h in index.search(query, mode="bm25")] == \
            [(h.chunk.id, round(h.score, 5)) for h in mine.search(query, mode="bm25")]
    after = open_store(reader, chroma_server).side.folder(index.entry.collection, index.entry.generation) / "bm25"
    assert index.count() == report.chunks and len(index.snapshot().parts.bm25.postings.segments) == 2  # a delta on the old base
    assert (after / "terms.npy").stat().st_ino == (before / "terms.npy").stat().st_ino  # linked, not rebuilt
