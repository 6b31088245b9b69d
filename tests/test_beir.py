"""`indexer import-beir`: BEIR folders (corpus, queries, qrels) written in the tests become
documents and a question set with graded whole-document targets, which `eval` scores."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from indexer.cli import cli
from indexer.errors import QuestionSetError, UsageError
from indexer.evaluation import evaluate, load_questions
from indexer.evaluation.beir import doc_file_name, doc_id_of, import_beir
from indexer.retrieval import Index
from indexer.settings import Settings


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write_beir(root: Path, corpus: list[dict], queries: list[dict], qrels: str, split: str = "test",
               gz: bool = False) -> Path:
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus)
    if gz:
        (root / "corpus.jsonl.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        (root / "corpus.jsonl").write_text(text, encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in queries),
                                        encoding="utf-8")
    (root / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return root


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_file_names_stay_inside_the_folder_come_back_to_their_id_and_never_meet(a, b):
    for fold_case in (False, True):
        name = doc_file_name(a, fold_case)
        assert "/" not in name and "\\" not in name and not name.startswith(".") and "\x00" not in name
        assert name.endswith(".md") and doc_id_of(name) == a
        if a != b:
            other = doc_file_name(b, fold_case)
            assert name != other
            if fold_case:  # on a file system that ignores case, names must differ by more than case
                assert name.lower() != other.lower()


def test_file_names_by_example():
    assert doc_file_name("MED-10") == "MED-10.md" and doc_file_name("4983") == "4983.md"
    assert doc_file_name("a/b c") == "a%2Fb%20c.md"
    assert doc_file_name("..") == "%2E..md" and doc_file_name("../../etc/passwd") == "%2E.%2F..%2Fetc%2Fpasswd.md"
    assert doc_file_name("100%") == "100%25.md" and doc_file_name("ş") == "%C5%9F.md"
    assert doc_file_name("Aids", fold_case=True).startswith("Aids~") and doc_file_name("aids", fold_case=True) == "aids.md"


CORPUS = [
    {"_id": "d1", "title": "Shipping", "text": "Parcels to villages arrive in five working days."},
    {"_id": "d/2", "title": "Returns", "text": "You can return a product within fourteen days."},
    {"_id": "..", "title": "Payment\nterms", "text": "Card payments can be split into instalments."},
    {"_id": "d4", "title": "", "text": "Electronics carry a two year warranty."},
    {"_id": "empty", "title": "", "text": "  "},
    {"_id": "d1", "title": "Again", "text": "A repeated id."},
]
QUERIES = [{"_id": "q1", "text": "village parcels"}, {"_id": "q2", "text": "return\ta product"},
           {"_id": "q3", "text": "instalments"}, {"_id": "q4", "text": "not judged in test"},
           {"_id": "q6", "text": "judged only on a missing document"}]
QRELS = ("query-id\tcorpus-id\tscore\n"
         "q1\td1\t2\nq1\td/2\t1\nq1\td4\t0\n"  # graded; a 0 is not relevant
         "q2\td/2\t2\nq2\tnowhere\t1\n"  # a judged document the corpus does not have
         "q3\t..\t1\nq3\t..\t2\n"  # judged twice: the higher grade stays
         "q5\td1\t1\n"  # a query queries.jsonl does not have
         "q6\tnowhere\t1\n"
         "broken line\n")


def test_import_writes_documents_and_graded_questions_and_says_what_it_skipped(tmp_path):
    src = write_beir(tmp_path / "src", CORPUS, QUERIES, QRELS, gz=True)
    result = import_beir(src, tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["%2E..md", "d%2F2.md", "d1.md", "d4.md", "questions.jsonl"]
    assert (out / "d1.md").read_text(encoding="utf-8") == "# Shipping\n\nParcels to villages arrive in five working days.\n"
    assert (out / "%2E..md").read_text(encoding="utf-8").startswith("# Payment terms\n\n")
    assert (out / "d4.md").read_text(encoding="utf-8") == "Electronics carry a two year warranty.\n"
    lines = [json.loads(line) for line in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {"id": "q1", "question": "village parcels",
         "targets": [{"doc_id": "d1.md", "grade": 2}, {"doc_id": "d%2F2.md", "grade": 1}]},
        {"id": "q2", "question": "return a product", "targets": [{"doc_id": "d%2F2.md", "grade": 2}]},
        {"id": "q3", "question": "instalments", "targets": [{"doc_id": "%2E..md", "grade": 2}]},
    ]
    assert (result.documents, result.questions, result.judgements) == (4, 3, 4)
    assert dict(result.grades) == {2: 3, 1: 1}
    assert dict(result.skipped) == {
        "judgements with grade 0 or below (not relevant)": 1,
        "repeated judgements (the higher grade kept)": 1,
        "qrels lines that are not query, document, grade": 1,
        "queries without a judgement in test": 1,
        "judged queries missing from queries.jsonl": 1,
        "documents with no title and no text": 1,
        "repeated document _ids (the first kept)": 1,
        "judgements of documents not in the corpus": 2,
        "queries left with no judged document in the corpus": 1,
    }
    assert result.examples["judged queries missing from queries.jsonl"] == ["q5"]
    assert result.examples["judgements of documents not in the corpus"] == ["q2/nowhere", "q6/nowhere"]
    questions = load_questions(out / "questions.jsonl")
    assert questions[0].documents == {"d1.md": 2, "d%2F2.md": 1}


def test_import_errors_name_the_file_and_leave_nothing_behind(tmp_path):
    src = write_beir(tmp_path / "src", CORPUS, QUERIES, QRELS, split="dev")
    with pytest.raises(QuestionSetError, match=r"has no qrels/test.tsv .*splits there: dev \(pick one with --split\)"):
        import_beir(src, tmp_path / "out")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.md").write_text("mine")
    with pytest.raises(UsageError, match="is not an empty folder"):
        import_beir(src, tmp_path / "full", split="dev")
    with pytest.raises(QuestionSetError, match="is it a BEIR folder"):
        import_beir(tmp_path / "full", tmp_path / "out")
    # a line that is not UTF-8 is skipped and reported
    (src / "corpus.jsonl").write_bytes((src / "corpus.jsonl").read_bytes() + b'{"_id": "x", "text": "\xff\xfe"}\n')
    result = import_beir(src, tmp_path / "out", split="dev")
    assert result.documents == 4 and result.examples["lines that are not UTF-8"] == ["corpus.jsonl:7"]
    # a corpus that breaks half-way (a cut gzip file): no folder, no partial one
    data = (src / "corpus.jsonl").read_bytes() * 50
    (src / "corpus.jsonl").unlink()
    (src / "corpus.jsonl.gz").write_bytes(gzip.compress(data)[:-40])
    with pytest.raises(QuestionSetError, match=r"corpus.jsonl.gz: cannot read past line \d+: Compressed file ended"):
        import_beir(src, tmp_path / "again", split="dev")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "out", "src"]


def test_import_writes_the_questions_elsewhere_when_asked(tmp_path):
    src = write_beir(tmp_path / "src", CORPUS, QUERIES, QRELS)
    out = run("import-beir", src, "-o", tmp_path / "docs", "--questions", tmp_path / "q.jsonl", "--json", "-q")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert (report["documents"], report["questions"], report["grades"]) == (4, 3, {"1": 1, "2": 3})
    assert not (tmp_path / "docs" / "questions.jsonl").exists() and (tmp_path / "q.jsonl").is_file()
    again = CliRunner().invoke(cli, ["import-beir", str(src), "-o", str(tmp_path / "new"), "--questions",
                                     str(tmp_path / "q.jsonl")])
    assert again.exit_code == 2 and "exists already" in again.output and not (tmp_path / "new").exists()
    inside = CliRunner().invoke(cli, ["import-beir", str(src), "-o", str(tmp_path / "new"), "--questions",
                                      str(tmp_path / "new" / "questions.md")])
    assert inside.exit_code == 2 and "would be read as a document" in inside.output


def test_import_build_and_eval_end_to_end_with_graded_ndcg(tmp_path):
    """Two relevant documents for q1 (grade 2 and 1). The grade-1 one repeats the query's
    words, so it ranks first; cut into 16-token windows it fills the first ranks, which
    count once: the grade-2 document's gain comes at its own first window's rank."""
    corpus = [
        {"_id": "shipping/villages", "title": "Shipping to villages",
         "text": "Parcels to villages arrive in five working days. Village deliveries use a partner courier."},
        {"_id": "returns", "title": "Returns", "text": "You can return a product within fourteen days."},
        {"_id": "cargo-faq", "title": "Cargo questions", "text": " ".join(  # numbered: no two windows alike
            f"Village parcels and village deliveries: village parcels arrive late, village parcels take days ({i})."
            for i in range(1, 7))},
        {"_id": "payment", "title": "Payment", "text": "Card payments can be split into instalments."},
        {"_id": "warranty", "title": "Warranty", "text": "Electronics carry a two year warranty."},
    ]
    queries = [{"_id": "q1", "text": "how many days do village parcels take"},
               {"_id": "q2", "text": "can I return a product"}, {"_id": "q3", "text": "instalments for card payment"}]
    qrels = "query-id\tcorpus-id\tscore\nq1\tshipping/villages\t2\nq1\tcargo-faq\t1\nq2\treturns\t2\nq3\tpayment\t1\n"
    src = write_beir(tmp_path / "src", corpus, queries, qrels)
    docs, db = tmp_path / "docs", tmp_path / "db"
    out = run("import-beir", src, "-o", docs, "-q")
    assert out.exit_code == 0 and "wrote 5 documents" in out.output and "3 questions" in out.output
    out = run("build", docs, "-s", "headers", "-s", "fixed:size=16,overlap=0", "--db", db, "-q")
    assert out.exit_code == 0, out.output
    ev = evaluate(docs / "questions.jsonl", ["headers", "fixed:size=16,overlap=0"], ("bm25",), (1, 5), settings=Settings.load(db=db))
    log2 = math.log2
    ideal = 2 / log2(2) + 1 / log2(3)
    for row in ev.rows:
        where = {c.id: c.doc_id for c in Index.open(row.strategy, settings=Settings.load(db=db)).chunks()}
        q1 = row.results[0]
        ranked = [where[i] for i in q1.retrieved[:10]]
        first = {d: ranked.index(d) + 1 for d in ("cargo-faq.md", "shipping%2Fvillages.md")}
        assert first["cargo-faq.md"] == 1 and q1.first_hit == 1
        if row.strategy == "headers":  # one chunk a document: grade 1 at rank 1, grade 2 at rank 2
            assert first["shipping%2Fvillages.md"] == 2
            assert q1.ndcg == pytest.approx((1 / log2(2) + 2 / log2(3)) / ideal)
        else:  # the FAQ's six windows take ranks 1-6; the grade-2 document comes at 7
            assert ranked[:6] == ["cargo-faq.md"] * 6 and first["shipping%2Fvillages.md"] == 7
            assert q1.ndcg == pytest.approx((1 / log2(2) + 2 / log2(8)) / ideal)
        assert [r.ndcg for r in row.results[1:]] == [1.0, 1.0] and row.recall(1) == 3
        assert row.ndcg == pytest.approx((q1.ndcg + 2) / 3)
    # the CLI shows it, strict columns say there is no answer to hold
    shown = run("eval", docs / "questions.jsonl", "-s", "headers", "-m", "bm25", "--db", db, "-q").output.splitlines()
    assert shown[1].split()[6:9] == ["MRR@10", "nDCG@10", "strict@1"]
    assert shown[2].split()[6:9] == ["1.000", f"{(2 + (1 + 2 / log2(3)) / ideal) / 3:.3f}", "-"]


def test_qrels_fields_split_on_any_whitespace_and_a_bad_line_is_named(tmp_path):
    """Public copies put spaces inside the tab-separated fields (`1\\t 0 317\\t1`): a line
    is split on any run of tabs and spaces, three fields (query, doc, grade) or four
    (query, 0, doc, grade); the header is skipped; a line that still does not parse is
    reported by its line number."""
    qrels = ("query-id \t corpus-id\tscore\n"
             "q1\t 0 d1\t2\n"  # four fields, a space inside a tab-separated one
             "q2 d/2  1\n"  # three, spaces only
             "q3\t0\t..\t1\n"  # four TREC columns
             "q1\td4 1\r\n"  # tabs and spaces mixed, a CRLF
             "15818\t1\n")  # two fields: named
    src = write_beir(tmp_path / "src", CORPUS, QUERIES, qrels)
    result = import_beir(src, tmp_path / "out")
    lines = [json.loads(line) for line in (tmp_path / "out" / "questions.jsonl").read_text().splitlines()]
    assert [(q["id"], q["targets"]) for q in lines] == [
        ("q1", [{"doc_id": "d1.md", "grade": 2}, {"doc_id": "d4.md", "grade": 1}]),
        ("q2", [{"doc_id": "d%2F2.md", "grade": 1}]),
        ("q3", [{"doc_id": "%2E..md", "grade": 1}]),
    ]
    assert result.examples["qrels lines that are not query, document, grade"] == ["test.tsv:6"]


def test_qrels_that_match_nothing_show_what_was_read(tmp_path):
    """Ids of another dataset: the error shows the qrels' first lines and the ids the
    queries and the corpus hold, in one line, and leaves nothing behind."""
    qrels = "query-id\tcorpus-id\tscore\n1\t31715818\t1\n3\t14717500\t1\n"
    src = write_beir(tmp_path / "src", CORPUS, QUERIES, qrels)
    with pytest.raises(QuestionSetError) as caught:
        import_beir(src, tmp_path / "out")
    message = str(caught.value)
    assert "\n" not in message and "no question of test has a judged document" in message
    assert r"'1\t31715818\t1'" in message  # what was read, as it was read
    assert "queries.jsonl holds ids q1, q2, q3" in message and "corpus.jsonl holds ids d1, d/2, .." in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    # nothing parses at all: the first lines are shown too
    (src / "qrels" / "test.tsv").write_text("query-id,corpus-id,score\nq1,d1,1\n", encoding="utf-8")
    with pytest.raises(QuestionSetError) as caught:
        import_beir(src, tmp_path / "out")
    assert "holds no judgement with a grade above 0" in str(caught.value)
    assert "'q1,d1,1'" in str(caught.value) and "not parsed: test.tsv:2" in str(caught.value)
