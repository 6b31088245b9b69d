"""semantic, parent-child and contextual strategies, end to end with the real embedder
and (for the LLM path) the stand-in Ollama server."""


import numpy as np
import pytest

from indexer.chunkers import parse_strategy
from indexer.chunkers.contexts import extractive_context
from indexer.chunkers.units import sentence_units
from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from indexer.evaluation import evaluate
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.loaders import make_document
from indexer.retrieval import Index, SearchOptions
from indexer.settings import Settings
from tests.conftest import CORPUS
from tests.ollama_standin import StandInOllama

DOC = make_document(
    "k.md",
    "# Kargo\n\nStandart kargo üç iş gününde teslim edilir. Kargo ücreti 39,90 TL'dir. "
    "Ücretsiz kargo 500 TL üzerindedir.\n\n## Puanlar\n\nPuanlar nakde çevrilemez. Puanların süresi 12 aydır. "
    "Puan kazanmak için üye olmak gerekir.\n\n## Webhook\n\n```json\n{\"event\": \"order.created\"}\n```\n",
)


class CountingEmbedder:
    """The real default embedder behind a counter, to see what the chunker embeds."""

    def __init__(self):
        self.inner = CachedEmbedder(get_embedder(), EmbeddingCache(None))
        self.seen = []

    def embed_documents(self, texts):
        self.seen.append(list(texts))
        return self.inner.embed_documents(texts)


def test_semantic_threshold_and_percentile_modes():
    units = list(sentence_units(DOC))
    texts = [DOC.text[u.start : u.end] for u in units]
    model = get_embedder()
    vectors = model.embed_documents(texts)
    sims = (vectors[:-1] * vectors[1:]).sum(axis=1)
    # threshold above every similarity: every neighbour pair is a break, min_tokens=0 -> one unit per chunk
    every = parse_strategy(f"semantic:threshold={float(sims.max()) + 0.01},min_tokens=0").create(embedder=model)
    assert [c.text for c in every.chunk(DOC)] == texts
    # threshold below every similarity: no breaks -> one chunk (it fits max_tokens)
    none = parse_strategy(f"semantic:threshold={float(sims.min()) - 0.01},min_tokens=0").create(embedder=model)
    assert len(none.chunk(DOC)) == 1
    # percentile: breaks exactly at the lowest-similarity pair(s)
    p = parse_strategy("semantic:percentile=1,min_tokens=0").create(embedder=model).chunk(DOC)
    weakest = int(np.argmin(sims))
    assert len(p) == 2 and p[0].end == units[weakest].end
    # min_tokens merges fragments, max_tokens caps
    capped = parse_strategy("semantic:threshold=1.0,min_tokens=20,max_tokens=40").create(embedder=model).chunk(DOC)
    assert all(c.n_tokens <= 40 for c in capped)
    assert all(c.n_tokens >= 20 for c in capped[:-1])


def test_semantic_embeds_every_sentence_through_the_cache():
    embedder = CountingEmbedder()
    chunker = parse_strategy("semantic").create(embedder=embedder)
    chunker.chunk(DOC)
    chunker.chunk(DOC)
    assert len(embedder.seen[0]) == len(list(sentence_units(DOC)))
    assert embedder.inner.computed == len(list(sentence_units(DOC)))
    assert embedder.inner.cached == len(list(sentence_units(DOC)))  # the second pass was free


def test_parent_children_are_sentence_windows_inside_their_section():
    chunker = parse_strategy("parent").create()
    parents = chunker.parent_chunks(DOC)
    children = chunker.chunk(DOC)
    assert [p.header for p in parents] == ["Kargo", "Kargo › Puanlar", "Kargo › Webhook"]
    by_id = {p.id: p for p in parents}
    for child in children:
        parent = by_id[child.parent_id]
        assert parent.start <= child.start < child.end <= parent.end
        assert child.header == parent.header
    puanlar = [c.text for c in children if by_id[c.parent_id].header == "Kargo › Puanlar"]
    assert puanlar == ["## Puanlar\n\nPuanlar nakde çevrilemez.",
                       "Puanlar nakde çevrilemez. Puanların süresi 12 aydır.",
                       "Puanların süresi 12 aydır. Puan kazanmak için üye olmak gerekir."]
    singles = parse_strategy("parent1").create().chunk(DOC)
    assert len(singles) == len(list(sentence_units(DOC)))


@pytest.fixture(scope="module")
def parent_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("parent") / "db"
    build([CORPUS], ["parent"], settings=Settings.load(db=db))
    return db


@pytest.mark.parametrize("mode", ["embedding", "bm25", "hybrid"])
def test_parent_search_returns_distinct_parents_in_every_mode(parent_db, mode):
    index = Index.open("parent", settings=Settings.load(db=parent_db))
    hits = index.search("Puanlarımı paraya çevirebilir miyim?", SearchOptions(mode=mode, k=5))
    assert 1 <= len(hits) <= 5
    assert len({h.chunk.id for h in hits}) == len(hits)
    texts = {p.name: p.read_text(encoding="utf-8") for p in CORPUS.glob("*.md")}
    for h in hits:
        assert h.chunk.kind == "section" and h.child_ids
        assert texts[h.chunk.doc_id][h.chunk.start : h.chunk.end] == h.chunk.text
    assert any("nakde" in h.chunk.text.lower() for h in hits)


@pytest.mark.parametrize("mode", ["embedding", "bm25", "hybrid"])
def test_parent_search_returns_k_parents_when_there_are_k(parent_db, mode):
    index = Index.open("parent", settings=Settings.load(db=parent_db))
    children = {c.id: c for c in index.chunks()}
    query = "Puanlarımı paraya çevirebilir miyim?"
    if mode == "bm25":  # only children sharing a word with the query can be found
        available = {children[index.snapshot().parts.bm25.ids[i]].parent_id for i, _ in index.snapshot().parts.bm25.search(query, len(children))}
    else:
        available = {c.parent_id for c in children.values()}
    assert len(available) > 10
    # the 30 best children map to fewer than 20 sections: the search must keep taking children
    hits = index.search(query, SearchOptions(mode=mode, k=20, children_k=30))
    assert len({h.chunk.id for h in hits}) == len(hits) == min(20, len(available))
    everything = index.search(query, SearchOptions(mode=mode, k=10_000))
    assert {h.chunk.id for h in everything} == available


def test_parent_eval_counts_parent_text(parent_db):
    ev = evaluate(CORPUS / "questions.jsonl", ["parent"], ("embedding",), (1, 5), settings=Settings.load(db=parent_db))
    row = ev.rows[0]
    # children average ~40 tokens, the returned sections ~90: the cost is the parents'
    assert row.ctx_tokens > 5 * row.avg_tokens


def test_extractive_context_goes_to_indexed_text_only(tmp_path):
    chunker = parse_strategy("contextual:llm=extractive").create()
    chunks = chunker.chunk(DOC)
    base = parse_strategy("headers").create().chunk(DOC)
    assert [c.text for c in chunks] == [c.text for c in base]
    puanlar = chunks[1]
    assert puanlar.context == "Kargo › Puanlar: Puanlar nakde çevrilemez."
    assert puanlar.context == extractive_context(DOC, puanlar)
    assert puanlar.indexed_text == f"{puanlar.header}\n\n{puanlar.context}\n\n{puanlar.text}"
    assert puanlar.context not in puanlar.text


def test_ollama_contextualizer_through_the_stand_in_server(tmp_path, write_files):
    """No Ollama server can run here; StandInOllama speaks its /api/chat wire format."""
    root = write_files({"k.md": DOC.text})
    with StandInOllama() as server:
        [first] = build([root], ["contextual:llm=ollama:gemma3:4b"], settings=Settings.load(db=tmp_path / "db", ollama_host=server.url))
        chats = [body for route, body in server.requests if route == "/api/chat"]
        assert len(chats) == 3
        for body in chats:
            assert body["options"]["temperature"] == 0 and body["options"]["seed"] == 42
            assert body["messages"][0]["role"] == "system" and "Turkish" in body["messages"][0]["content"]
            user = body["messages"][1]["content"]
            assert user.startswith("<document>\n" + DOC.text) and "<chunk>\n" in user
        assert first.notes and "3 LLM calls, 0 cached" in first.notes[0]
        index = Index.open("contextual", settings=Settings.load(db=tmp_path / "db"))  # that llm is the preset's: the collection is its
        stored = index.chunks()
        assert all(c.context.startswith("Bu bölüm şu konuyu anlatır: ") for c in stored)
        assert all(c.context not in c.text for c in stored)
        # a full rebuild costs no LLM call: contexts are cached
        [again] = build([root], ["contextual:llm=ollama:gemma3:4b"], BuildOptions(full=True),
                        settings=Settings.load(db=tmp_path / "db", ollama_host=server.url))
        assert len([r for r, _ in server.requests if r == "/api/chat"]) == 3
        assert "0 LLM calls, 3 cached" in again.notes[0]


def test_a_reply_that_repeats_the_chunk_falls_back_to_extractive(tmp_path, write_files):
    root = write_files({"k.md": DOC.text})

    def echo(messages):
        user = messages[-1]["content"]
        return user.split("<chunk>\n", 1)[1].split("\n</chunk>", 1)[0]

    with StandInOllama(chat_reply=echo) as server:
        [report] = build([root], ["contextual:llm=ollama:gemma3:4b"], settings=Settings.load(db=tmp_path / "db", ollama_host=server.url))
    assert "3 fallbacks to extractive" in report.notes[0]
    stored = Index.open("contextual:llm=ollama:gemma3:4b", settings=Settings.load(db=tmp_path / "db")).chunks()
    assert stored[1].context == "Kargo › Puanlar: Puanlar nakde çevrilemez."


def test_contextual_without_a_server_is_a_one_line_error(tmp_path, write_files):
    from click.testing import CliRunner

    from indexer.cli import cli
    from tests.conftest import free_port

    root = write_files({"k.md": DOC.text})
    result = CliRunner().invoke(cli, ["build", str(root), "-s", "contextual", "--db", str(tmp_path / "db"),
                                      "--ollama-host", f"http://127.0.0.1:{free_port()}", "-q"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot reach the Ollama server at http://127.0.0.1:")
    assert "contextual:llm=extractive" in result.output and len(result.output.splitlines()) == 1


def test_an_edited_section_s_unchanged_children_follow_it_to_its_new_parent(tmp_path):
    """A sentence appended to a section makes a new parent; the section's other children
    (same text, same place) must point at it, not at the section as it was: an incremental
    build then answers with one parent, as a build from scratch does."""
    from indexer.indexing.building import build
    from indexer.retrieval import Index

    folder = tmp_path / "docs"
    folder.mkdir()
    note = folder / "a.md"
    note.write_text("# Notlar\n\nBirinci cümle kargo hakkında. İkinci cümle iade hakkında. "
                    "Üçüncü cümle taksit hakkında.\n", encoding="utf-8")
    build([folder], ["parent"], settings=Settings.load(db=tmp_path / "db"))
    with open(note, "a", encoding="utf-8") as fh:
        fh.write("Dördüncü cümle ZEBRA hakkında.\n")
    build([folder], ["parent"], settings=Settings.load(db=tmp_path / "db"))
    build([folder], ["parent"], settings=Settings.load(db=tmp_path / "fresh"))

    def answer(db):
        return [(h.chunk.start, h.chunk.end, h.chunk.text) for h in
                Index.open("parent", settings=Settings.load(db=db)).search("kargo iade taksit ZEBRA", mode="bm25", k=5)]

    assert answer(tmp_path / "db") == answer(tmp_path / "fresh")
    assert len(answer(tmp_path / "db")) == 1
