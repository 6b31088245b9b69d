"""Boundary quality: where a strategy's cuts fall, on documents whose answers are known
by construction, then through `indexer chunk`, `indexer eval --boundaries` and the API."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import indexer
from indexer.chunkers import parse_strategy
from indexer.cli import cli
from indexer.evaluation.chunk_boundaries import BoundaryStats, measure, structure_of
from indexer.loaders import make_document
from indexer.text.words import inside_word
from indexer.types import Chunk
from tests.conftest import CORPUS
from tests.test_chunkers import ALL, DOCS

TABLE = "| Bölge | Süre |\n|---|---|\n| İstanbul içi | 1-2 iş günü |\n| İlçe ve köyler | 3-5 iş günü |"
STRUCTURED = f"""# Kargo

Standart kargo üç iş gününde teslim edilir. Kargo ücreti 39,90 TL'dir.

## Süreler

{TABLE}

Adalara gönderiler iki gün daha sürer.

## Ücretler

| Tutar | Ücret |
|---|---|
| 500 TL altı | 39,90 TL |
| 500 TL ve üzeri | Ücretsiz |

## Ekspres

| Bölge | Ekspres |
|---|---|
| Marmara | Ertesi gün |

## Webhook

```json
{{"event": "order.created", "retry": [1, 2, 4]}}
```

## İade

- İade talebi 14 gün içinde açılır.
- Ürün kullanılmamış olmalıdır.
- Kargo ücreti iade edilmez.
"""
LONG = "# Uzun bölüm\n\n" + " ".join(
    ("kargo teslimat süresi iş günü müşteri ödeme iade ürün şikâyet ağırlık ışık öğrenci çağrı bölge "
     "ilçe köy fatura adres paket").split()[i % 19] for i in range(900)
) + "\n"
CODE = '''import os


def teslim(gun):
    """Teslim süresi."""
    if gun > 3:
        return "geç"
    return "zamanında"


class Kargo:
    def __init__(self, agirlik):
        self.agirlik = agirlik

    def ucret(self):
        return 39.9 if self.agirlik < 5 else 59.9


def adres(il, ilce):
    return f"{ilce} / {il}"
'''


def chunks_at(doc, *edges: int) -> list[Chunk]:
    """Consecutive chunks cut at the given offsets (from 0 to the end of the text)."""
    points = [0, *edges, len(doc.text)]
    return [Chunk(id=f"c{i}", doc_id=doc.doc_id, text=doc.text[s:e], start=s, end=e, start_line=1, end_line=1, kind="test") for i, (s, e) in
            enumerate(zip(points, points[1:]))]


# -- known by construction -------------------------------------------------------------------

def test_each_cut_is_counted_where_it_falls():
    doc = make_document("k.md", STRUCTURED)
    text = doc.text
    sentence_end = text.index("teslim edilir.") + len("teslim edilir.")  # between two sentences
    mid_sentence = text.index("gününde")  # inside the first sentence, between words
    mid_word = text.index("gününde") + 3  # "gün|ünde"
    between_rows = text.index("| İlçe ve köyler")  # inside the table, between two rows
    mid_row = text.index("3-5 iş günü")  # inside a row (and the table)
    mid_code = text.index('"retry"')
    mid_item = text.index("kullanılmamış")
    stats = BoundaryStats("hand")
    stats.add(doc, chunks_at(doc, sentence_end, mid_sentence, mid_word, between_rows, mid_row, mid_code, mid_item))
    # ends: the seven cuts and the end of the text; starts: 0 and the seven cuts
    assert stats.chunks == 8
    assert stats.ends["word"] == 1
    assert stats.ends["sentence"] == 3  # mid_sentence, mid_word, and the list item's sentence
    assert stats.ends["table"] == 2 and stats.ends["row"] == 1
    assert stats.ends["code"] == 1 and stats.ends["item"] == 1
    assert stats.starts == stats.ends  # consecutive chunks: each cut ends one and starts the next
    assert stats.end_share("table") == 2 / 8
    assert stats.whole("table") == (2, 3)  # the first table is cut, the other two are not
    assert stats.whole("code") == (0, 1) and stats.whole("item") == (2, 3)


def test_a_structure_inside_any_chunk_is_whole_even_with_overlapping_windows():
    doc = make_document("k.md", STRUCTURED)
    start, end = doc.text.index(TABLE), doc.text.index(TABLE) + len(TABLE)
    windows = [Chunk(id="a", doc_id=doc.doc_id, text="", start=0, end=start + 5, start_line=1, end_line=1, kind="w"), Chunk(id="b", doc_id=doc.doc_id, text="", start=start - 3, end=end, start_line=1, end_line=1, kind="w")]
    stats = measure([doc], windows)
    assert stats.whole("table")[0] == 1
    assert stats.ends["row"] == 1  # the first window ends inside the header row


def test_three_tables_fixed_cuts_them_and_blocks_keeps_every_structure_whole():
    doc = make_document("k.md", STRUCTURED)
    fixed = measure([doc], parse_strategy("fixed:size=8,overlap=0").create().chunk(doc))
    blocks = measure([doc], parse_strategy("blocks").create().chunk(doc))
    assert fixed.whole("table")[1] == 3 and fixed.whole("table")[0] < 3
    assert fixed.ends["table"] > 0 and fixed.ends["sentence"] > 0
    assert blocks.whole("table") == (3, 3) and blocks.whole("code") == (1, 1) and blocks.whole("item") == (3, 3)
    assert all(blocks.ends[k] == 0 for k in ("word", "sentence", "table", "row", "code", "item"))
    # tables over hard_max are split, between rows: a table cut, never a row
    small = measure([doc], parse_strategy("blocks:target=16,hard_max=40").create().chunk(doc))
    assert small.whole("table")[0] < 3 and small.ends["table"] > 0
    assert small.ends["row"] == small.ends["word"] == small.ends["sentence"] == 0


def test_code_chunks_keep_functions_whole_and_windows_cut_them():
    doc = make_document("app.py", CODE, "code", "python")
    assert len(structure_of(doc).wholes["function"]) == 4  # teslim, Kargo.__init__, Kargo.ucret, adres
    code = measure([doc], parse_strategy("code:min_bytes=1").create().chunk(doc))
    windows = measure([doc], parse_strategy("fixed:size=16,overlap=0").create().chunk(doc))
    assert code.chunks >= 4 and code.whole("function") == (4, 4) and code.ends["function"] == 0
    assert windows.whole("function")[0] < 4 and windows.ends["function"] > 0
    assert code.present["table"] == 0 and code.ends["sentence"] == 0  # no Markdown structure in code


# -- the rule every strategy keeps ---------------------------------------------------------------

def test_the_word_rule():
    text = "Yenilenmiş ürün_kodu 5.000 TL; i\u0307ade (e-posta) Iğdır'daki 🙂x"
    inside = [i for i in range(len(text) + 1) if inside_word(text, i)]
    assert 3 in inside and text.index("\u0307") in inside and text.index("kodu") in inside  # a mark, `_` join
    for cut in (0, 10, text.index(" TL"), text.index("000"), text.index("posta"), text.index("'daki"), len(text)):
        assert cut not in inside
    assert text.index("x") not in inside  # an emoji is no word character


def test_windows_never_repeat_a_span():
    """Moving a window's end back to a word edge must not make the next window end at
    the same place (hypothesis found `   1. Ğüşıöçİ.` with fixed:size=8,overlap=3)."""
    for text in ("   1. Ğüşıöçİ.", "a " * 3 + "Ğüşıöçİçöşığü " * 6, "x" * 300):
        doc = make_document("d.md", text)
        for strategy in ("fixed:size=8,overlap=3", "fixed:size=4,overlap=3", "headers:max_tokens=8,overlap=7,min_tokens=4"):
            spans = [(c.start, c.end) for c in parse_strategy(strategy).create().chunk(doc)]
            assert len(spans) == len(set(spans)), (strategy, text, spans)
            assert [e for _, e in spans] == sorted({e for _, e in spans}), (strategy, text)


@pytest.fixture(scope="module")
def documents():
    return DOCS + [make_document("uzun.md", LONG), make_document("yapi.md", STRUCTURED),
                   make_document("app.py", CODE, "code", "python")]


@pytest.fixture(scope="module")
def embedder():
    """The default model behind one in-memory cache, shared by the semantic variants."""
    from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder

    return CachedEmbedder(get_embedder(), EmbeddingCache(None))


@pytest.mark.parametrize("strategy", ALL)
def test_no_strategy_cuts_inside_a_word(strategy, documents, embedder):
    spec = parse_strategy(strategy.rstrip(":"))
    chunker = spec.create(embedder=embedder if spec.uses_embedder else None)
    stats = BoundaryStats(strategy)
    for doc in documents:
        stats.add(doc, chunker.chunk(doc))
    assert stats.chunks > 0
    assert stats.ends["word"] == 0 and stats.starts["word"] == 0, strategy


# -- the command line and the API ------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_chunk_prints_boundary_columns_blocks_keeps_every_table_whole():
    result = run("chunk", CORPUS, "--strategy", "fixed64", "--strategy", "blocks")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["strategy", "files", "chunks", "avgTok", "maxTok", "inWord", "inSent", "inTable",
                                "inRow", "inCode", "inItem", "tables", "code", "items", "kinds"]
    rows = {line.split()[0]: line.split() for line in lines[1:3]}
    tables = lines[0].split().index("tables")
    assert rows["blocks"][tables] == "8/8"
    kept, total = map(int, rows["fixed64"][tables].split("/"))
    assert total == 8 and kept < 8
    assert rows["blocks"][5:11] == ["0%"] * 6 and rows["fixed64"][5] == "0%"
    assert lines[3].startswith("in*: share of chunk ends")


def test_chunk_json_ends_with_a_summary_line_per_strategy():
    result = run("chunk", CORPUS, "--strategy", "fixed64", "--strategy", "blocks", "--json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    summaries = [r for r in rows if r["row"] == "summary"]
    assert [s["strategy"] for s in summaries] == ["fixed64", "blocks"]
    assert rows[-2:] == summaries and {r["row"] for r in rows} == {"chunk", "summary"}
    blocks = summaries[1]
    assert blocks["chunks"] == sum(1 for r in rows if r["row"] == "chunk" and r["strategy"] == "blocks")
    assert blocks["boundaries"]["kept_whole"]["table"] == {"kept": 8, "of": 8}
    assert blocks["boundaries"]["ends_inside"]["sentence"] == 0
    assert summaries[0]["boundaries"]["ends_inside"]["table"] > 0


def test_api_and_stored_chunks_agree(built_db):
    db, _ = built_db
    chunked = indexer.boundaries([CORPUS], ["headers", "fixed64"])
    stored = indexer.stored_boundaries(["headers", "fixed64"], CORPUS, settings=indexer.Settings.load(db=db))
    assert {s: chunked[s].to_dict() for s in chunked} == {s: v.to_dict() for (s, _), v in stored.items()}


def test_eval_boundaries_adds_a_table_and_json_rows(built_db, tmp_path):
    db, _ = built_db
    args = ["eval", CORPUS / "questions.jsonl", "-s", "headers", "-s", "fixed64", "-m", "bm25", "--db", db, "-q",
            "--boundaries"]
    result = run(*args)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "boundary quality of the stored chunks" in text
    table = text.split("boundary quality of the stored chunks\n", 1)[1].splitlines()
    assert table[0].split()[:4] == ["strategy", "chunks", "inWord", "inSent"]
    assert table[1].split()[0] == "headers" and table[1].split()[-3] == "8/8"
    assert table[2].split()[0] == "fixed64" and table[2].split()[-3] != "8/8"
    rows = [json.loads(line) for line in run(*args, "--json").stdout.splitlines()]
    found = {r["strategy"]: r for r in rows if r["row"] == "boundaries"}
    assert set(found) == {"headers", "fixed64"} and found["headers"]["kept_whole"]["table"]["kept"] == 8
    csv_path = tmp_path / "e.csv"
    assert run(*args, "--csv", csv_path).exit_code == 0
    header = csv_path.read_text().splitlines()[0].split(",")
    assert "ends_in_table" in header and "whole_table" in header
