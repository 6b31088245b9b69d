import json
import math
import re
import shutil
import sys

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.errors import CollectionNotFound, QuestionSetError
from indexer.evaluation import Question, evaluate, load_questions, resolve
from indexer.evaluation.scoring import TokenSpans, score_question
from indexer.loaders import load_documents, make_document
from indexer.settings import Settings
from indexer.types import Chunk, Hit
from tests.conftest import CORPUS, ROOT

DOC = make_document("k.md", "# Kargo\n\nGiriş.\n\n## Süreler\n\n| Bölge | Gün |\n|---|---|\n| Köy | 3-5 |\n\n## İade\n\nOn dört gün.\n")


def chunk(start, end, doc=DOC):
    return Chunk(id=f"{start}-{end}", doc_id=doc.doc_id, text=doc.text[start:end], start=start, end=end,
                 start_line=1, end_line=1, kind="window", n_tokens=end - start)


def test_hit_and_strict_hit_rules_on_hand_made_spans():
    q = Question("q", "köy kaç gün", "k.md", section="Kargo › Süreler", answer="| Köy | 3-5 |")
    resolve([q], {"k.md": DOC})
    sec_start = DOC.text.index("## Süreler")
    ans = DOC.text.index("| Köy | 3-5 |")
    assert q.target == (sec_start, DOC.text.index("## İade") - 2)
    assert q.answer_span == (ans, ans + len("| Köy | 3-5 |"))
    miss = chunk(0, 10)  # the intro: no overlap with the section
    touches = chunk(sec_start - 3, sec_start + 2)  # overlaps the section, not the answer
    holds = chunk(ans - 2, ans + len("| Köy | 3-5 |"))  # contains the whole answer
    r = score_question(q, [Hit(rank=1, score=1, chunk=miss), Hit(rank=2, score=1, chunk=touches), Hit(rank=3, score=1, chunk=holds)], 5, None, TokenSpans({"k.md": DOC}))
    assert (r.first_hit, r.first_strict) == (2, 3)
    assert r.ctx_tokens == 10 + 5 + len("| Köy | 3-5 |") + 2
    budget = score_question(q, [Hit(rank=1, score=1, chunk=miss), Hit(rank=2, score=1, chunk=touches), Hit(rank=3, score=1, chunk=holds)], 5, 12, TokenSpans({"k.md": DOC}))
    assert budget.budget_hit is None and budget.budget_tokens == 10  # the second hit would exceed 12 tokens


def test_document_targets_are_hit_by_any_chunk_and_scored_with_graded_ndcg(tmp_path):
    other = make_document("o.md", "# Other\n\nNothing about cargo.\n")
    third = make_document("t.md", "# Third\n\nMore.\n")
    docs = {"k.md": DOC, "o.md": other, "t.md": third}
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "g", "question": "?", "targets": [{"doc_id": "o.md", "grade": 1}, {"doc_id": "k.md", "grade": 2}]}\n'
        '{"id": "w", "question": "?", "doc_id": "t.md"}\n'  # a bare doc_id: the whole document, grade 1
        '{"id": "p", "question": "?", "doc_id": "k.md", "section": "Kargo › İade"}\n', encoding="utf-8")
    graded, whole, passage = load_questions(path)
    resolve([graded, whole, passage], docs)
    assert (graded.doc_id, graded.documents) == ("k.md", {"k.md": 2, "o.md": 1})  # the best grade first
    assert whole.documents == {"t.md": 1} and passage.documents == {}
    assert graded.target == (0, len(DOC.text)) and graded.hits("o.md", 0, 1) and not graded.hits("t.md", 0, 1)
    k1, k2, o1, t1 = chunk(0, 10), chunk(20, 40), chunk(0, 5, other), chunk(0, 5, third)
    spans = TokenSpans(docs)
    # ranks: t (not relevant), k (grade 2), k again (counts once), o (grade 1)
    r = score_question(graded, [Hit(rank=1, score=1, chunk=t1), Hit(rank=2, score=1, chunk=k1), Hit(rank=3, score=1, chunk=k2), Hit(rank=4, score=1, chunk=o1)], 5, None, spans)
    assert (r.first_hit, r.first_strict) == (2, None)
    log2 = math.log2
    assert r.ndcg == pytest.approx((2 / log2(3) + 1 / log2(5)) / (2 / log2(2) + 1 / log2(3)))
    assert score_question(whole, [Hit(rank=1, score=1, chunk=k1), Hit(rank=2, score=1, chunk=t1)], 5, None, spans).ndcg == pytest.approx(1 / log2(3))
    # a passage target: binary, the first hit is the relevant item (ideal DCG 1)
    iade = DOC.text.index("## İade")
    r = score_question(passage, [Hit(rank=1, score=1, chunk=k1), Hit(rank=2, score=1, chunk=o1), Hit(rank=3, score=1, chunk=chunk(iade, iade + 9)), Hit(rank=4, score=1, chunk=chunk(iade, iade + 5))],
               5, None, spans)
    assert r.first_hit == 3 and r.ndcg == pytest.approx(1 / log2(4))
    with pytest.raises(QuestionSetError, match=r"g: no document 'o.md'"):
        resolve(load_questions(path)[:1], {"k.md": DOC})



def test_a_hit_shown_once_for_identical_texts_counts_for_the_copy_a_question_targets():
    """Search shows a text once and names its other documents in `same_text` (issue 35,
    item 13): a question about the copy is hit by it, for document and passage targets."""
    copy = make_document("copy.md", DOC.text)
    docs = {"k.md": DOC, "copy.md": copy}
    whole = Question("w", "?", "copy.md", documents={"copy.md": 1})
    passage = Question("p", "köy kaç gün", "copy.md", section="Kargo › Süreler", answer="| Köy | 3-5 |")
    resolve([whole, passage], docs)
    ans = DOC.text.index("| Köy | 3-5 |")
    shown = Hit(rank=1, score=1, chunk=chunk(ans - 2, ans + 20), same_text=["copy.md"])
    alone = Hit(rank=1, score=1, chunk=chunk(ans - 2, ans + 20))
    spans = TokenSpans(docs)
    assert score_question(whole, [shown], 5, None, spans).first_hit == 1
    assert score_question(whole, [shown], 5, None, spans).ndcg == pytest.approx(1.0)
    r = score_question(passage, [shown], 5, None, spans)
    assert (r.first_hit, r.first_strict) == (1, 1) and r.span[0] == pytest.approx(1.0)
    assert score_question(passage, [alone], 5, None, spans).first_hit is None

@pytest.mark.parametrize("line, problem", [
    ('{"id": "a", "question": "?", "targets": []}', "targets must be a non-empty list"),
    ('{"id": "a", "question": "?", "targets": [{"grade": 1}]}', "each target needs a doc_id"),
    ('{"id": "a", "question": "?", "targets": [{"doc_id": "k.md", "grade": 0}]}', "grade of 'k.md' must be a whole number"),
    ('{"id": "a", "question": "?", "targets": [{"doc_id": "k.md", "grade": 1.5}]}', "grade of 'k.md' must be a whole"),
    ('{"id": "a", "question": "?", "targets": [{"doc_id": "k.md"}, {"doc_id": "k.md"}]}', "target 'k.md' is listed twice"),
    ('{"id": "a", "question": "?", "doc_id": "k.md", "answer": "x", "targets": [{"doc_id": "k.md"}]}',
     "targets name whole documents"),
])
def test_bad_document_targets_are_named(tmp_path, line, problem):
    path = tmp_path / "q.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match=f"line 1: {problem}"):
        load_questions(path)


def test_question_set_problems_fail_loudly(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "a", "question": "x"}\nnot json\n{"id": "a", "question": "y", "doc_id": "k.md", "answer": "z"}\n')
    with pytest.raises(QuestionSetError, match=r"line 1: missing doc_id; line 2: not JSON"):
        load_questions(bad)
    q = Question("q9", "?", "k.md", section="Kargo › İade", answer="Giriş.")
    with pytest.raises(QuestionSetError, match=r"q9: answer not found in section 'Kargo › İade'"):
        resolve([q], {"k.md": DOC})
    with pytest.raises(QuestionSetError, match=r"no section 'Kargo › Yok'"):
        resolve([Question("q1", "?", "k.md", section="Kargo › Yok")], {"k.md": DOC})


def test_a_question_file_with_a_byte_order_mark_is_read(tmp_path):
    line = '{"id": "a", "question": "iade kaç gün", "doc_id": "k.md", "section": "Kargo › İade"}'
    path = tmp_path / "q.jsonl"
    second = line.replace('"a"', '"b"')
    path.write_bytes(b"\xef\xbb\xbf" + f"{line}\r\n{second}\r\n".encode())  # as Windows Notepad saves it
    assert [q.id for q in load_questions(path)] == ["a", "b"]
    path.write_bytes(b"\xff\xfe" + line.encode("utf-16-le"))  # UTF-16: a one-line error, not a traceback
    with pytest.raises(QuestionSetError, match=r"q.jsonl is not UTF-8 text \(byte 0\); save it as UTF-8$"):
        load_questions(path)


def test_compare_operands_are_checked_before_anything_is_evaluated(built_db):
    from indexer.errors import UsageError
    from indexer.evaluation.run import compare_pairs

    db, _ = built_db
    args = ["eval", str(CORPUS / "questions.jsonl"), "-s", "headers", "-s", "fixed64", "-m", "bm25", "--db", str(db)]
    result = CliRunner().invoke(cli, [*args, "--compare", "foo", "bar"])
    # the one line, and nothing before it: no row ran (each says "evaluated headers/bm25 ... in 0.4s")
    assert result.exit_code == 2 and result.output == result.stderr == (
        "Error: --compare foo bar: foo and bar name no strategy, mode or row of this evaluation; compare two modes "
        "(bm25), two strategies (headers, fixed64) or two rows as strategy/mode\n")
    result = CliRunner().invoke(cli, [*args, "--compare", "hybrid", "bm25"])  # a mode not requested
    assert result.exit_code == 2 and "hybrid names no strategy, mode or row" in result.output
    assert len(result.output.splitlines()) == 1
    with pytest.raises(UsageError, match="they are not of one kind"):  # the library checks first too
        evaluate(CORPUS / "questions.jsonl", ["headers"], ("bm25", "hybrid"), compare=(("bm25", "headers"),), settings=Settings.load(db=db))
    assert compare_pairs("fixed:size=64,overlap=16/bm25", "headers/bm25", ["headers", "fixed64"], ["bm25"]) == \
        [("fixed64/bm25", "headers/bm25")]
    assert compare_pairs("hybrid", "bm25", ["headers", "fixed64"], ["bm25", "hybrid"]) == \
        [("headers/hybrid", "headers/bm25"), ("fixed64/hybrid", "fixed64/bm25")]
    assert compare_pairs("headers", "fixed:size=64,overlap=16", ["headers", "fixed64"], ["bm25", "hybrid"]) == \
        [("headers/bm25", "fixed64/bm25"), ("headers/hybrid", "fixed64/hybrid")]


@pytest.mark.parametrize("folder", [CORPUS, CORPUS / "en"])
def test_bundled_question_sets_match_their_corpus(folder):
    questions = load_questions(folder / "questions.jsonl")
    _, docs = load_documents([folder])
    resolve(questions, {d.doc_id: d for d in docs})
    assert all(q.answer_span and q.target[0] <= q.answer_span[0] < q.answer_span[1] <= q.target[1] for q in questions)
    tables = [q for q in questions if "table" in q.tags]
    assert len(questions) >= (40 if folder == CORPUS else 30) and len(tables) >= 8


def test_end_to_end_eval_of_two_strategies(built_db, tmp_path):
    db, _ = built_db
    ev = evaluate(CORPUS / "questions.jsonl", ["headers", "fixed64"], ("embedding", "bm25", "hybrid"), (1, 5), settings=Settings.load(db=db))
    n = len(ev.questions)
    assert [r.label for r in ev.rows] == [f"{s}/{m}" for s in ("headers", "fixed64") for m in ("embedding", "bm25", "hybrid")]
    for row in ev.rows:
        assert 0 <= row.recall(1) <= row.recall(5) <= n
        assert row.recall(1, strict=True) <= row.recall(1)
        assert 0 < row.mrr <= 1
        lo, hi = row.interval("mrr@10")
        assert lo <= row.mrr <= hi
        assert 0 < row.sections <= 5 and row.ctx_tokens > 0
    compare = ev.compare("hybrid", "embedding")
    assert {c["a"] for c in compare} == {"headers/hybrid", "fixed64/hybrid"}
    with pytest.raises(CollectionNotFound, match=re.escape(f"not built yet: blocks; run: indexer build {CORPUS.resolve()} --strategy blocks --db {db}") + "$"):
        evaluate(CORPUS / "questions.jsonl", ["headers", "blocks"], settings=Settings.load(db=db))


def test_a_question_naming_a_missing_document_is_named(built_db, tmp_path):
    """A question file kept away from its corpus finds it where the collection was built
    from even when one question names a document that is not there, and says which."""
    db, _ = built_db
    lines = (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    lines.insert(3, '{"id": "q-missing", "question": "x?", "doc_id": "yok/boyle-bir-belge.md", "answer": "x"}')
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r"q-missing: no document 'yok/boyle-bir-belge.md'"):
        evaluate(path, ["headers"], ("bm25",), settings=Settings.load(db=db))


def test_mrr_is_at_depth_10_whatever_k_and_budget_fetch(built_db):
    db, _ = built_db
    base = evaluate(CORPUS / "questions.jsonl", ["fixed64"], ("embedding",), (1, 5), settings=Settings.load(db=db)).rows[0]
    deep = evaluate(CORPUS / "questions.jsonl", ["fixed64"], ("embedding",), (1, 50), budget=300, settings=Settings.load(db=db)).rows[0]
    assert any(r.first_hit and r.first_hit > 10 for r in deep.results)  # hits below 10 exist and do not count
    assert deep.mrr == base.mrr
    assert [min(r.first_hit or 99, 11) for r in deep.results] == [min(r.first_hit or 99, 11) for r in base.results]


def test_eval_command_prints_the_table_and_writes_files(built_db, tmp_path):
    db, _ = built_db
    out_csv, out_html = tmp_path / "r.csv", tmp_path / "r.html"
    args = ["eval", str(CORPUS / "questions.jsonl"), "-s", "headers", "-s", "fixed64", "-m", "embedding", "-m", "hybrid",
            "--db", str(db), "--compare", "headers/hybrid", "fixed64/hybrid", "--budget", "400", "-q"]
    result = CliRunner().invoke(cli, [*args, "--csv", str(out_csv), "--plot", str(out_html), "--by-tag"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1].split() == ["strategy", "mode", "chunks", "avgTok", "recall@1", "recall@5", "MRR@10", "nDCG@10",
                                "strict@1", "strict@5", "ctxTok@5", "sections@5", "time"]
    assert [line.split()[:2] for line in lines[2:6]] == [["headers", "embedding"], ["headers", "hybrid"],
                                                        ["fixed64", "embedding"], ["fixed64", "hybrid"]]
    assert "95% bootstrap intervals over 65 questions" in result.output
    assert "equal budget: hits taken in rank order up to 400 context tokens" in result.output
    # a first hit over the budget still counts (whole), so the tokens column may exceed it
    assert "the first hit always counts, whole" in result.output
    assert "recall@5 and MRR@10 by question tag" in result.output
    # --json: JSON lines, one object per row, then one per comparison
    rows = [json.loads(line) for line in CliRunner().invoke(cli, [*args, "--json"]).output.splitlines()]
    assert [r["row"] for r in rows] == ["result"] * 4 + ["compare"] * 4
    row = rows[0]
    assert row["questions"] == 65 and len(row["per_question"]) == 65
    assert set(row) >= {"recall@1", "recall@5", "mrr@10", "mrr@10_ci95", "ndcg@10", "ndcg@10_ci95", "strict@1",
                        "ctx_tokens@5", "sections@5"}
    assert {r["metric"] for r in rows[4:]} == {"recall@1", "recall@5", "mrr@10", "ndcg@10"}
    # passage targets: binary nDCG@10, the first hit the one relevant item
    for q in row["per_question"]:
        assert q["ndcg@10"] == round(1 / math.log2(q["first_hit"] + 1) if q["first_hit"] and q["first_hit"] <= 10 else 0, 4)
    assert "ndcg@10" in out_csv.read_text().splitlines()[0].split(",")
    # an output into a missing folder fails before the evaluation runs
    missing = CliRunner().invoke(cli, [*args, "--plot", str(tmp_path / "nowhere" / "p.svg")])
    assert missing.exit_code == 2 and "the folder of" in missing.output and "does not exist" in missing.output
    assert out_csv.read_text().splitlines()[0].startswith("strategy,mode,embedder,questions,chunks")
    assert "<svg" in out_html.read_text()


def test_png_plot(built_db, tmp_path):
    pytest.importorskip("matplotlib")
    db, _ = built_db
    from indexer.evaluation import report

    ev = evaluate(CORPUS / "questions.jsonl", ["headers"], settings=Settings.load(db=db))
    report.plot(ev, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- a question set and the collections it is scored on (issue 35, item 2) ------------------------
def test_a_question_set_about_documents_the_collection_does_not_hold_is_refused(built_db):
    """The code sample's questions against the Turkish collection gave 0 in every row and
    exit 0, --require-fresh or not: now one line naming the file, the collection and what
    to do, from eval and tune alike."""
    from indexer.evaluation.tune import tune

    db, _ = built_db
    questions, code = CORPUS / "code" / "questions.jsonl", CORPUS / "code"
    want = (f"Error: {questions}: none of its questions is about a document in headers (use-m3) (built from {CORPUS}; "
            f"the questions are about {code}): build the folder the questions are about (indexer build {code} "
            "--strategy headers --db DIR) and pass --db DIR, or pass --db of an index built from it\n")
    for extra in ([], ["--require-fresh"], ["-s", "fixed64"]):
        result = CliRunner().invoke(cli, ["eval", str(questions), "-s", "headers", "-m", "bm25", "--db", str(db), *extra])
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", want), extra
    with pytest.raises(QuestionSetError, match=re.escape(want[7:-1])):
        tune(questions, ["headers"], settings=Settings.load(db=db))


def test_questions_about_documents_a_collection_lacks_are_left_out_and_counted(built_db, tmp_path):
    """Some questions about a document the collections do not hold: a warning counts them,
    every row is scored on the others (the same numbers as without them), JSON names them;
    --require-fresh makes it an error."""
    db, _ = built_db
    docs = tmp_path / "docs"
    shutil.copytree(CORPUS, docs, ignore=shutil.ignore_patterns("code", "en", "pdf"))
    (docs / "yeni.md").write_text("# Yeni\n\nKargo artık drone ile gelir.\n", encoding="utf-8")
    extra = {"id": "q-yeni", "question": "drone ile kargo", "doc_id": "yeni.md", "answer": "drone ile gelir"}
    path = docs / "questions.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + json.dumps(extra) + "\n", encoding="utf-8")
    args = ["-s", "headers", "-s", "fixed64", "-m", "bm25", "--db", str(db), "-q"]
    result = CliRunner().invoke(cli, ["eval", str(path), "--corpus", str(docs), *args])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "warning: 1 of 66 questions are about documents headers (use-m3) (1: q-yeni) and fixed64 (use-m3) (1: q-yeni) "
        "do not hold; every score is over the other 65 (build those documents in to score them all)"]
    assert result.stdout.splitlines()[0] == f"65 questions from {path} (1 left out, see the warning); documents in {docs}"
    rows = [json.loads(line) for line in
            CliRunner().invoke(cli, ["eval", str(path), "--corpus", str(docs), *args, "--json"]).stdout.splitlines()]
    plain = [json.loads(line) for line in
             CliRunner().invoke(cli, ["eval", str(CORPUS / "questions.jsonl"), *args, "--json"]).stdout.splitlines()]
    assert [(r["questions"], r["left_out"]) for r in rows] == [(65, ["q-yeni"])] * 2
    assert [(r["mrr@10"], r["recall@5"]) for r in rows] == [(r["mrr@10"], r["recall@5"]) for r in plain]
    fresh = CliRunner().invoke(cli, ["eval", str(path), "--corpus", str(docs), *args, "--require-fresh"])
    assert fresh.exit_code == 1 and fresh.stdout == "" and fresh.stderr == (
        "Error: 1 of 66 questions are about documents headers (use-m3) (1: q-yeni) and fixed64 (use-m3) (1: q-yeni) "
        "do not hold; build those documents in, or leave --require-fresh out to score the other 65\n")


# -- --plot (issue 35, item 7) ---------------------------------------------------------------------
def test_a_plot_that_cannot_be_written_fails_before_the_evaluation(built_db, tmp_path, monkeypatch):
    """Without matplotlib (an install without the plot extra) a .png plot failed after the
    whole evaluation, with no table; now the one line comes first, and .html needs nothing."""
    db, _ = built_db
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails, as where it is not installed
    args = ["eval", str(CORPUS / "questions.jsonl"), "-s", "headers", "-m", "bm25", "--db", str(db), "--plot"]
    png = CliRunner().invoke(cli, [*args, str(tmp_path / "r.png")])
    # nothing before it: no "evaluated headers/bm25 ..." note, no table
    assert (png.exit_code, png.stdout, png.stderr) == (2, "", 'Error: a .png plot needs matplotlib: pip install '
                                                              '"indexer-rag[plot]" (or write --plot report.html or report.svg, '
                                                              "which need nothing)\n")
    odd = CliRunner().invoke(cli, [*args, str(tmp_path / "r.txt")])
    assert (odd.exit_code, odd.stderr) == (2, "Error: --plot writes .html, .htm, .svg, .png, .pdf, .jpg, .jpeg files, "
                                              "not .txt (r.txt)\n")
    page = CliRunner().invoke(cli, [*args, str(tmp_path / "r.html"), "-q"])
    assert page.exit_code == 0 and "<svg" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_the_tour_plots_without_the_plot_extra(monkeypatch):
    """The tour (docs/cli.md) runs top to bottom in a fresh install: its --plot needs nothing
    extra."""
    from indexer.evaluation import report

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    tour = page.split("## A tour", 1)[1].split("```", 2)[1]
    plots = re.findall(r"--plot (\S+)", tour)
    assert plots
    for path in plots:
        report.check_plot(path)
