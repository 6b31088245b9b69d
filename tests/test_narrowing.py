"""A search narrowed to documents by path globs (`SearchOptions.paths`): applied inside
each side, so k hits come back whenever k exist among those documents, in every mode and
on both ways the embedding side is searched (the stored rows scanned, Chroma's index
asked with `where` on the stored path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import indexer.retrieval.searching.sides as sides_module
from indexer.errors import UsageError
from indexer.indexing.building import build
from indexer.retrieval import Index, SearchOptions
from indexer.settings import Settings
from tests.conftest import write_file

KARGO = "# Kargo {n}\n\nKargo {n} numaralı depodan üç iş gününde teslim edilir. Ücretsiz kargo {n}.\n"
FILES = {
    **{f"docs/api/kargo-{n}.md": KARGO.format(n=n) for n in range(3)},
    **{f"docs/guide/kargo-{n}.md": KARGO.format(n=n + 10) for n in range(3)},
    **{f"notes/kargo-{n}.txt": KARGO.format(n=n + 20) for n in range(3)},
    "src/shipping.py": "def ship_order(order):\n    '''Kargo ile gönder.'''\n    return order\n",
    "docs/api/shipping.py": "def ship_order(order, fast=False):\n    '''Hızlı kargo.'''\n    return order\n",
}
QUERY = "kargo kaç günde teslim edilir"
MODES = ("embedding", "bm25", "hybrid")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> tuple[Path, Settings]:
    root = tmp_path_factory.mktemp("narrow")
    for rel, text in FILES.items():
        write_file(root / "docs-in", rel, text)
    settings = Settings.load(db=root / "db")
    build([root / "docs-in"], ["headers", "parent"], settings=settings)
    return root, settings


def docs_of(hits) -> set[str]:
    return {h.chunk.doc_id for h in hits}


@pytest.mark.parametrize("mode", MODES)
def test_a_narrowed_search_returns_k_hits_from_the_matching_documents_only(folder, mode):
    _, settings = folder
    index = Index.open("headers", settings=settings)
    everywhere = index.search(QUERY, SearchOptions(mode=mode, k=3))
    assert not docs_of(everywhere) <= {f"notes/kargo-{n}.txt" for n in range(3)}  # not trivial
    hits = index.search(QUERY, SearchOptions(mode=mode, k=3, paths=("notes/",)))
    assert len(hits) == 3 and docs_of(hits) == {f"notes/kargo-{n}.txt" for n in range(3)}
    # more than there are: all of them, and nothing from elsewhere
    hits = index.search(QUERY, SearchOptions(mode=mode, k=10, paths=("*.txt",)))
    assert len(hits) == 3 and all(h.chunk.doc_id.endswith(".txt") for h in hits)


@pytest.mark.parametrize("mode", MODES)
def test_several_globs_are_alternatives(folder, mode):
    _, settings = folder
    index = Index.open("headers", settings=settings)
    hits = index.search(QUERY, SearchOptions(mode=mode, k=10, paths=("docs/api/*.md", "notes/kargo-1.txt")))
    assert docs_of(hits) == {f"docs/api/kargo-{n}.md" for n in range(3)} | {"notes/kargo-1.txt"}


def test_globs_follow_git_s_rules(folder):
    _, settings = folder
    index = Index.open("headers", settings=settings)

    def found(*paths: str) -> set[str]:
        return docs_of(index.search(QUERY, SearchOptions(mode="bm25", k=50, paths=paths)))

    assert found("*.py") == {"src/shipping.py", "docs/api/shipping.py"}  # a name at any depth
    assert found("/*.py") == set()  # anchored at the root: nothing there
    assert found("docs/**/kargo-1*") == {"docs/api/kargo-1.md", "docs/guide/kargo-1.md"}
    assert found("docs/a*/kargo-0.md") == {"docs/api/kargo-0.md"}  # * inside one folder
    assert found("docs/*/kargo-0.md") == {"docs/api/kargo-0.md", "docs/guide/kargo-0.md"}
    assert found("missing/") == set()


def test_the_exact_tiers_stay_inside_the_scope(folder):
    """A symbol query adds its definitions to the candidates: only those in the scope."""
    _, settings = folder
    index = Index.open("headers", settings=settings)
    both = index.search("ship_order", SearchOptions(k=5))
    assert {"src/shipping.py", "docs/api/shipping.py"} <= docs_of(both)
    narrowed = index.search("ship_order", SearchOptions(k=5, paths=("src/",)))
    assert docs_of(narrowed) == {"src/shipping.py"} and narrowed[0].match == "exact symbol"


@pytest.mark.parametrize("route", ["scope rows", "chroma asked deeper", "every row masked", "chroma where"])
def test_every_way_the_embedding_side_is_narrowed_finds_the_same(folder, monkeypatch, route):
    """The embedding side of a narrowed search over a collection served by Chroma's index:
    the scope's rows read alone (a small scope), Chroma asked for more neighbours until k
    of the scope's are among them, every row scanned with the others masked, or (no rows
    on this machine) Chroma's `where` on the stored path: the same nearest chunks."""
    from indexer.retrieval.rows.table import RowStore

    _, settings = folder
    exact = Index.open("headers", settings=settings).search(QUERY, SearchOptions(mode="embedding", k=3, paths=("notes/",)))
    monkeypatch.setattr(sides_module, "EXACT_UNDER", 0)  # a collection HNSW serves
    calls: list[str] = []
    for name in ("nearest", "nearest_among"):
        real = getattr(RowStore, name)
        monkeypatch.setattr(RowStore, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    if route != "scope rows":
        monkeypatch.setattr(sides_module, "GATHER", 0)
    if route == "every row masked":
        monkeypatch.setattr(sides_module, "MAX_ASK", 0)
    index = Index.open("headers", settings=settings)
    if route == "chroma where":
        monkeypatch.setattr(type(index.snapshot().parts), "rows", property(lambda self: None))
    hits = index.search(QUERY, SearchOptions(mode="embedding", k=3, paths=("notes/",)))
    assert [h.chunk.id for h in hits] == [h.chunk.id for h in exact]
    assert calls == {"scope rows": ["nearest_among"], "every row masked": ["nearest"]}.get(route, [])


def test_a_parent_child_collection_returns_parents_of_the_scope(folder):
    _, settings = folder
    index = Index.open("parent", settings=settings)
    hits = index.search(QUERY, SearchOptions(k=3, paths=("docs/guide/",)))
    assert len(hits) == 3 and docs_of(hits) == {f"docs/guide/kargo-{n}.md" for n in range(3)}


def test_answer_sized_context_is_cut_from_the_scope(folder):
    _, settings = folder
    packed = Index.open("headers", settings=settings).context(QUERY, 120, SearchOptions(paths=("notes/",)))
    assert packed.spans and all(s.doc_id.startswith("notes/") for s in packed.spans)


@pytest.mark.parametrize("paths, problem", [
    (["!docs/"], "no negation"), ([""], "non-empty"), (["\\"], "not a glob"), (["x"] * 65, "at most 64"),
    (["d" * 1001], "a glob of 1,001 characters, over the 1,000"),
])
def test_a_bad_glob_is_a_usage_error(paths, problem):
    with pytest.raises(UsageError, match=problem):
        SearchOptions(paths=paths)


def test_one_glob_given_as_text_is_one_glob():
    assert SearchOptions(paths="docs/**").paths == ("docs/**",)


# -- the front doors ------------------------------------------------------------------------
def _only(docs: set[str], allowed: tuple[str, ...]) -> bool:
    return bool(docs) and all(any(d.startswith(a) for a in allowed) for d in docs)


def test_the_cli_query_takes_path_globs(folder):
    from tests.test_front_doors import run_cli

    root, settings = folder
    code, out, err = run_cli("query", QUERY, "-s", "headers", "--path", "notes/kargo-1.txt",
                             "--path", "src/", "-k", "5", "--db", root / "db", "--json")
    assert code == 0, err
    docs = {json.loads(line)["doc_id"] for line in out.splitlines()}
    assert docs == {"notes/kargo-1.txt", "src/shipping.py"}
    code, _, err = run_cli("query", QUERY, "--path", "!notes/", "--db", root / "db")
    assert code == 2 and "no negation" in err


def test_the_web_api_and_mcp_take_paths(folder):
    from tests.test_front_doors import mcp, web

    root, _ = folder
    db = root / "db"
    with web(db) as client:
        searched = client.post("/api/search", json={"query": QUERY, "strategy": "headers", "k": 10,
                                                    "paths": ["notes/", "docs/api/*.md"]})
        compared = client.post("/api/compare", json={"query": QUERY, "strategies": ["headers", "parent"],
                                                     "paths": ["notes/"]})
        refused = client.post("/api/search", json={"query": QUERY, "paths": ["!x"]})
    assert searched.status_code == 200, searched.text
    assert _only({h["doc_id"] for h in searched.json()["hits"]}, ("notes/", "docs/api/kargo"))
    assert len(searched.json()["hits"]) == 6
    for result in compared.json()["results"]:
        assert _only({h["doc_id"] for h in result["hits"]}, ("notes/",)), result
    assert refused.status_code == 400 and "paths" in refused.json()["error"]
    found = mcp(db, "search", query=QUERY, strategy="headers", k=4, paths=["docs/guide/"])
    assert len(found["results"]) == 3 and _only({r["doc_id"] for r in found["results"]}, ("docs/guide/",))
    packed = mcp(db, "search", query=QUERY, strategy="headers", max_tokens=200, paths=["*.txt"])
    assert packed["spans"] and _only({s["doc_id"] for s in packed["spans"]}, ("notes/",))
    assert "no negation" in mcp(db, "search", query=QUERY, paths=["!x"])["error"]


def test_eval_scores_the_questions_inside_the_paths(folder, tmp_path):
    from tests.test_front_doors import run_cli

    root, _ = folder
    questions = tmp_path / "q.jsonl"
    rows = [{"id": f"n{n}", "question": f"kargo {n + 20} teslim", "doc_id": f"notes/kargo-{n}.txt"} for n in range(3)]
    rows += [{"id": "api0", "question": "kargo 0 teslim", "doc_id": "docs/api/kargo-0.md"}]
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    code, out, err = run_cli("eval", questions, "--corpus", root / "docs-in", "-s", "headers", "-m", "bm25",
                             "--path", "notes/", "--db", root / "db", "--json")
    assert code == 0, err
    assert "1 question(s) about documents --path leaves out are not scored" in err
    row = next(json.loads(line) for line in out.splitlines() if json.loads(line).get("row") == "result")
    assert row["questions"] == 3 and row["recall@1"] == 3  # hits counted, of 3
    code, _, err = run_cli("eval", questions, "--corpus", root / "docs-in", "-s", "headers", "--path", "src/",
                           "--db", root / "db")
    assert code == 2 and "no question" in err
