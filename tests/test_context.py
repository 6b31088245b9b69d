"""Answer-sized context (issue 37): units recorded at build, spans packed under a budget
through the library, the command line and `eval --budget`, scored against answer spans."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from indexer.errors import QuestionSetError, UsageError
from indexer.evaluation.context_eval import score_context
from indexer.evaluation.scoring import TokenSpans
from indexer.evaluation.sets import load_questions, resolve
from indexer.loaders import load_documents
from indexer.retrieval import Index
from indexer.settings import Settings
from indexer.text.tokens import get_tokenizer
from tests.conftest import CORPUS, ROOT, write_file

GUIDE = """# Kurulum Rehberi

Bu rehber kurulumu anlatır. Önce paketi indirin. Sonra ayarları yapın.

## Gereksinimler

- Python 3.10 veya üstü gerekir.
- En az 2 GB bellek gerekir.
- Disk alanı 500 MB olmalıdır.

## Sürümler

| Sürüm | Çıkış | Destek |
|-------|-------|--------|
| 1.0 | 2023 | bitti |
| 2.0 | 2024 | 2026 sonuna kadar |
| 3.0 | 2025 | 2028 sonuna kadar |

## Örnek

```python
def kur(hedef):
    indir(hedef)
    ayarla(hedef)
```

Kurulumdan sonra sistemi yeniden başlatın. Sorun çıkarsa destek ekibine yazın.
"""


@pytest.fixture(scope="module")
def guide_db(tmp_path_factory):
    from indexer.indexing.building import build

    root = tmp_path_factory.mktemp("guide")
    write_file(root, "rehber.md", GUIDE)
    write_file(root, "notlar.md", "# Notlar\n\nKargo ücreti 39,90 TL'dir. İade 14 gündür.\n")
    db = tmp_path_factory.mktemp("guide-db") / "index"
    build([root], ["headers", "fixed:size=32,overlap=0", "parent"], settings=Settings.load(db=db))
    return root, db


def _exact(span, root) -> None:
    document = (root / span.doc_id).read_text(encoding="utf-8")
    assert document[span.start:span.end] == span.text


@pytest.mark.parametrize("strategy", ["headers", "fixed:size=32,overlap=0", "parent"])
def test_every_span_is_an_exact_slice_and_the_budget_is_never_exceeded(guide_db, strategy):
    root, db = guide_db
    index = Index.open(strategy, settings=Settings.load(db=db))
    tokenizer = get_tokenizer()
    for query in ("Hangi Python sürümü gerekir?", "2.0 sürümünün desteği ne zaman biter?", "kur fonksiyonu",
                  "kargo ücreti"):
        for budget in (16, 40, 80, 200, 2000):
            context = index.context(query, budget)
            assert context.tokens == tokenizer.count(context.text()) <= budget
            for span in context.spans:
                _exact(span, root)
                assert span.label and span.n_tokens == tokenizer.count(span.text)
    # at a budget that holds it, the answer's sentence comes first, under its heading path
    context = index.context("Hangi Python sürümü gerekir?", 80)
    assert "Python 3.10 veya üstü gerekir." in context.spans[0].text
    assert context.spans[0].label.endswith("Gereksinimler")


def test_a_table_row_comes_with_its_header_row_and_units_are_never_cut(guide_db):
    root, db = guide_db
    context = Index.open("headers", settings=Settings.load(db=db)).context("2.0 sürümünün desteği ne zaman biter?", 60)
    text = context.text()
    assert "| 2.0 | 2024 | 2026 sonuna kadar |" in text
    assert "| Sürüm | Çıkış | Destek |" in text  # the row's header, so the numbers mean something
    for span in context.spans:
        _exact(span, root)
        for line in span.text.splitlines():  # rows are whole lines: never cut inside a unit
            assert line.startswith("|") == line.endswith("|")


def test_code_is_handed_over_as_whole_lines(guide_db):
    root, db = guide_db
    context = Index.open("headers", settings=Settings.load(db=db)).context("kur fonksiyonu indir ayarla", 60)
    code = [s for s in context.spans if "code" in s.kinds]
    assert code and "def kur(hedef):" in code[0].text and "ayarla(hedef)" in code[0].text


def test_the_command_line_prints_spans_and_json_lines(guide_db):
    root, db = guide_db
    args = [sys.executable, "-m", "indexer", "query", "Hangi Python sürümü gerekir?", "-s", "headers",
            "--db", str(db), "--budget", "80"]
    shown = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "[rehber.md] Kurulum Rehberi › Gereksinimler" in shown.stdout
    assert "Python 3.10 veya üstü gerekir." in shown.stdout
    assert " of 80 tokens" in shown.stdout and "top 5 whole chunks" in shown.stdout
    lines = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=120)
    spans = [json.loads(line) for line in lines.stdout.splitlines()]
    assert spans and all({"doc_id", "start", "end", "start_line", "label", "text"} <= set(s) for s in spans)
    document = (root / "rehber.md").read_text(encoding="utf-8")
    assert all(document[s["start"]:s["end"]] == s["text"] for s in spans if s["doc_id"] == "rehber.md")
    filled = subprocess.run(args + ["--fill", "--json"], capture_output=True, text=True, timeout=120)
    used = sum(json.loads(line)["n_tokens"] for line in filled.stdout.splitlines())
    assert used >= sum(s["n_tokens"] for s in spans)  # the whole budget used: never fewer spans' tokens
    alone = subprocess.run(args[:-2] + ["--fill"], capture_output=True, text=True, timeout=120)
    assert alone.returncode == 2 and "--fill goes with --budget N" in alone.stderr
    tiny = subprocess.run(args[:-1] + ["8"], capture_output=True, text=True, timeout=120)
    assert tiny.returncode == 2 and "8 is not in the range x>=16" in tiny.stderr


def test_an_index_opened_by_a_relative_path_reads_its_unit_vectors(guide_db, monkeypatch):
    root, db = guide_db
    monkeypatch.chdir(db.parent)
    context = Index.open("headers", settings=Settings.load(db=db.name)).context("Hangi Python sürümü gerekir?", 80)
    assert context.scoring == "bm25+embedding" and "Python 3.10" in context.text()


def test_a_budget_below_the_minimum_is_one_clear_error(guide_db):
    _, db = guide_db
    with pytest.raises(UsageError, match="at least 16 tokens"):
        Index.open("headers", settings=Settings.load(db=db)).context("kur", 8)


def test_context_scores_count_every_answer_span(tmp_path):
    doc_text = "Birinci cümle burada. İkinci cümle orada. Üçüncü cümle şurada."
    (tmp_path / "a.md").write_text(doc_text, encoding="utf-8")
    docs = {d.doc_id: d for d in load_documents([tmp_path])[1]}
    spans = TokenSpans(docs)
    first = ("a.md", 0, doc_text.index(" İkinci"))
    third = ("a.md", doc_text.index("Üçüncü"), len(doc_text))
    both = score_context([first, third], [first, third], 20, spans)
    assert both.strict and both.recall == 1.0 and both.precision == 1.0 and both.iou == 1.0
    one = score_context([first, third], [first], 10, spans)
    assert not one.strict and 0.3 < one.recall < 0.7 and one.precision == 1.0
    everything = score_context([first], [("a.md", 0, len(doc_text))], 30, spans)
    assert everything.strict and everything.recall == 1.0 and everything.precision < 0.5


def test_questions_may_name_several_answers(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nKargo 3 günde gelir. İade 14 gündür.\n", encoding="utf-8")
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "1", "question": "kargo ve iade", "doc_id": "a.md",
                                "answers": ["Kargo 3 günde gelir.", "İade 14 gündür."]}) + "\n", encoding="utf-8")
    questions = load_questions(path)
    resolve(questions, {d.doc_id: d for d in load_documents([tmp_path])[1]})
    text = (tmp_path / "a.md").read_text(encoding="utf-8")
    assert [text[s:e] for s, e in questions[0].answer_spans] == ["Kargo 3 günde gelir.", "İade 14 gündür."]
    path.write_text(json.dumps({"id": "1", "question": "q", "doc_id": "a.md", "answers": 5}) + "\n")
    with pytest.raises(QuestionSetError, match="line 1: answers must be a list of excerpts"):
        load_questions(path)
    path.write_text(json.dumps({"id": "1", "question": "q", "doc_id": "a.md", "answers": ["yok böyle"]}) + "\n")
    with pytest.raises(QuestionSetError, match="1: answer not found in a.md: 'yok böyle'"):
        resolve(load_questions(path), {d.doc_id: d for d in load_documents([tmp_path])[1]})


def test_eval_scores_packed_context_against_whole_chunks_at_every_budget(built_db):
    db, _ = built_db
    args = [sys.executable, "-m", "indexer", "eval", str(CORPUS / "questions.jsonl"), "-s", "headers", "-m",
            "hybrid", "--db", str(db), "--budget", "100,400", "-q"]
    done = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in done.stdout.splitlines() if '"strategy"' in line]
    cells = {c["budget"]: c for c in row["context"]}
    assert set(cells) == {100, 400}
    for budget, cell in cells.items():
        assert cell["packed"]["questions"] == cell["whole"]["questions"] > 50
        assert 0 < cell["packed"]["tokens"] <= budget and cell["whole"]["tokens"] <= budget
        assert cell["packed"]["iou"] > cell["whole"]["iou"]  # spans waste less of the budget than chunks
    assert cells[400]["packed"]["strict"] >= cells[100]["packed"]["strict"]
    shown = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert "answer-sized context (indexer query --budget) against whole chunks" in shown.stdout


def test_a_budget_nothing_fits_in_says_so_and_claims_no_saving(guide_db):
    from click.testing import CliRunner

    from indexer.cli import cli

    _, db = guide_db
    args = ["query", "Hangi Python sürümü gerekir?", "-s", "headers", "--db", str(db)]
    result = CliRunner().invoke(cli, [*args, "--budget", "16"])
    assert result.exit_code == 0, result.output
    assert "no results" not in result.output  # the search found 20 chunks: nothing fitted
    assert "no span fits in 16 tokens with its label line" in result.output
    assert "--budget" in result.output and "saved" not in result.output
    as_json = CliRunner().invoke(cli, [*args, "--budget", "16", "--json"])
    assert as_json.exit_code == 0 and as_json.stdout == ""  # no span: no JSON line
    assert "no span fits in 16 tokens" in as_json.stderr  # ...and the reason, beside it


def test_near_zero_units_are_not_filler_where_the_likely_ones_do_not_fit():
    """A unit far less likely than the best is not handed over just because the budget has
    room (the likely unit was too big); filling the budget (mass 1) still takes it."""
    from indexer.retrieval.context.pack import pack
    from indexer.retrieval.context.units import Unit

    tokenizer = get_tokenizer()
    text = "A long answer. " * 40 + "Likely second. Noise nobody asked for."
    big_end = len("A long answer. " * 40) - 1
    second = text.index("Likely second.")
    noise = text.index("Noise")
    units = [Unit("d.md", 0, big_end, "sentence", "Doc", text[:big_end], tokenizer.count(text[:big_end])),
             Unit("d.md", second, second + 14, "sentence", "Doc", "Likely second.", 3),
             Unit("d.md", noise, len(text), "sentence", "Doc", text[noise:], 6)]
    probs = np.array([0.95, 0.045, 0.0001])
    spans, _ = pack(units, probs, 40, tokenizer, mass=0.97)
    assert [s.text for s in spans] == ["Likely second."]
    filled, _ = pack(units, probs, 40, tokenizer, mass=1.0)
    assert [s.text for s in filled] == ["Likely second.", "Noise nobody asked for."]


def test_an_exact_symbol_lookup_gets_the_definition_from_its_first_line(tmp_path):
    """`def dedent` names a definition: the packed context holds it from its `def` line
    on, in order (an empty line ends a run of code lines, so the lines before the
    definition are not glued to it)."""
    source = ("import re\n\n_PATTERN = re.compile('x')\n_OTHER = re.compile('y')\n\n"
              "def dedent(text):\n    \"\"\"Remove the common leading whitespace of every line.\"\"\"\n"
              "    margin = None\n    for line in text.splitlines():\n        margin = line\n"
              "    return margin\n\n\ndef indent(text, prefix):\n    \"\"\"Add prefix to lines.\"\"\"\n"
              "    return ''.join(prefix + line for line in text.splitlines(True))\n\n\n"
              "if __name__ == '__main__':\n    print(dedent('  a'))\n    print(dedent(' b'))\n"
              "    print(dedent('   c'))\n")
    write_file(tmp_path / "src", "wrap.py", source)
    settings = Settings.load(db=tmp_path / "db")
    from indexer.indexing.building import build

    build([tmp_path / "src"], ["auto"], settings=settings)
    index = Index.open("auto", settings=settings)
    ctx = index.context("def dedent", 60)
    assert any(s.text.startswith('def dedent(text):\n    """Remove the common') for s in ctx.spans), ctx.text()
    assert all(s.text == source[s.start:s.end] for s in ctx.spans)
    # a code span is labelled with the definition holding it, not the file's name again
    # (a stranger's trial got `[textwrap.py] textwrap.py` above every span)
    labels = {s.label for s in ctx.spans if s.text.startswith("def dedent")}
    assert labels == {"dedent"}, ctx.text()
    assert "[wrap.py] dedent\n" in ctx.text()
    outside = index.context("print dedent main", 400)
    assert {s.label for s in outside.spans if "__main__" in s.text} == {"wrap.py"}, outside.text()
