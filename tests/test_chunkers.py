"""Invariants every strategy keeps, parametrised over the registry, plus per-strategy rules."""

import random

import pytest

from indexer.chunkers import PRESETS, REGISTRY, parse_strategy
from indexer.embeddings import get_embedder
from indexer.errors import InvalidParameter, UnknownStrategy
from indexer.loaders import load_documents, make_document
from indexer.text.tokens import get_tokenizer
from tests.conftest import CORPUS

TABLE_ROWS = "\n".join(f"| Bölge {i} | {i}-{i + 2} iş günü | Yok |" for i in range(120))
BIG_TABLE = f"| Bölge | Standart kargo | Ekspres |\n|---|---|---|\n{TABLE_ROWS}"
TRICKY = f"""# Zor Belge

Giriş paragrafı 5.000 TL ve 89,90 TL içerir. Dr. Ahmet örn. şöyle der.

## Küçük tablo

| Bölge | Standart kargo | Ekspres |
|---|---|---|
| İlçe ve köyler | 3-5 iş günü | Yok |
| KKTC | 5-8 iş günü | Yok |

## Kod

```json
{{"event": "order.created", "retry": [1, 2, 4]}}
```

## Liste

- birinci madde
- ikinci madde
  - iç içe madde
- üçüncü madde

## Büyük tablo

{BIG_TABLE}

## Uzun paragraf

{"Bu çok uzun bir cümle ve hiç bitmiyor gibi görünüyor ama bitiyor. " * 80}

## Sonraki

[ref]: https://example.com/a.b
Son söz.
"""


def corpus_docs():
    _, docs = load_documents([CORPUS])
    docs = list(docs)
    docs.append(make_document("tricky.md", TRICKY))
    docs.append(make_document("page.html", "<h1>Sayfa</h1><p>Metin bir.</p><h2>Alt</h2><p>Metin iki.</p>", "html"))
    docs.append(make_document("notes.txt", "\n\n".join(f"Paragraf {i}. " + "söz " * 30 for i in range(12)), "text"))
    docs.append(make_document("app.py", "import os\n\n" + "def f(x):\n    return '{'  # brace\n\n" * 80, "code", "python"))
    return docs


DOCS = corpus_docs()
# the contextual preset calls an Ollama server; the invariants are checked offline
ALL = sorted(p for p in PRESETS if p != "contextual") + ["contextual:llm=extractive"]
ALL += [f"{kind}:" for kind in REGISTRY if kind not in PRESETS]


def limit_of(chunker, doc=None):
    if chunker.kind == "contextual":
        return limit_of(chunker.base_chunker)
    if doc is not None and hasattr(chunker, "route"):
        return limit_of(chunker.route(doc))  # code and auto hand prose to blocks / headers
    # max_bytes (code) bounds tokens too: a token is at least one byte
    for key in ("size", "max_tokens", "hard_max", "max_bytes"):
        if hasattr(chunker, key):
            return getattr(chunker, key)
    return None


@pytest.fixture(scope="module", params=ALL)
def chunked(request):
    spec = parse_strategy(request.param.rstrip(":"))
    chunker = spec.create(embedder=get_embedder() if spec.uses_embedder else None)
    return chunker, {d.doc_id: chunker.chunk(d) for d in DOCS}


def test_text_is_the_exact_source_slice(chunked):
    _, result = chunked
    for doc in DOCS:
        for c in result[doc.doc_id]:
            assert doc.text[c.start : c.end] == c.text
            assert c.text and c.text == c.text.strip()
            assert c.doc_id == doc.doc_id
            assert doc.line_of(c.start) == c.start_line <= c.end_line
            assert c.indexed_text.endswith(c.text)
            assert c.header == "" or c.indexed_text.startswith(c.header + "\n\n")


def test_no_chunk_over_the_limit(chunked):
    chunker, result = chunked
    tk = get_tokenizer()
    for doc in DOCS:
        limit = limit_of(chunker, doc)
        for c in result[doc.doc_id]:
            assert c.n_tokens <= limit
            # token windows count tokens in the document; alone, a slice may re-tokenize
            # differently at its two edges
            slack = 2 if c.kind == "window" else 0
            assert tk.count(c.text) <= limit + slack


def test_ids_are_deterministic_and_unique(chunked):
    chunker, result = chunked
    again = {d.doc_id: chunker.chunk(d) for d in corpus_docs()}
    for doc_id, chunks in result.items():
        assert [c.id for c in chunks] == [c.id for c in again[doc_id]]
    ids = [c.id for chunks in result.values() for c in chunks]
    assert len(ids) == len(set(ids))


def test_chunks_cover_every_non_whitespace_character(chunked):
    _, result = chunked
    for doc in DOCS:
        covered = bytearray(len(doc.text))
        for c in result[doc.doc_id]:
            covered[c.start : c.end] = b"\x01" * (c.end - c.start)
        missing = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
        assert not missing, f"{doc.doc_id}: uncovered {doc.text[missing[0]:missing[0] + 40]!r}"


def by_doc(strategy, doc):
    return parse_strategy(strategy).create().chunk(doc)


def test_fixed_windows_step_by_size_minus_overlap():
    doc = make_document("t.md", " ".join(f"w{i}" for i in range(400)))
    chunks = by_doc("fixed:size=32,overlap=8", doc)
    tk = get_tokenizer()
    bounds = tk.boundaries(doc.text).tolist()
    starts = [c.start for c in chunks]
    expected = [bounds[i] for i in range(0, len(bounds) - 1, 24)]
    assert [s for s in starts] == [e + (1 if doc.text[e] == " " else 0) for e in expected][: len(starts)]
    assert all(c.n_tokens == 32 for c in chunks[:-1])


def test_fixed_table_header_goes_to_header_not_text():
    doc = next(d for d in DOCS if d.doc_id == "tricky.md")
    plain = by_doc("fixed64", doc)
    with_header = by_doc("fixed64:table_header=true", doc)
    assert [c.text for c in plain] == [c.text for c in with_header]
    inside = [c for c in with_header if c.header]
    assert inside, "some window starts inside the big table"
    for c in inside:
        assert c.header == "| Bölge | Standart kargo | Ekspres |"
        assert c.indexed_text.startswith(c.header + "\n\n")
        assert "| Bölge | Standart kargo | Ekspres |" not in c.text


def test_headers_one_chunk_per_section_with_heading_path():
    doc = make_document("k.md", "# Kargo\n\nGiriş.\n\n## Boş\n\n### Dolu\n\nMetin burada.\n\n## Son\n\nBitti.\n")
    chunks = by_doc("headers", doc)
    assert [c.header for c in chunks] == ["Kargo", "Kargo › Boş › Dolu", "Kargo › Son"]
    # the heading-only section "## Boş" is joined to the section after it
    assert chunks[1].text == "## Boş\n\n### Dolu\n\nMetin burada."
    assert [c.kind for c in chunks] == ["section"] * 3


def test_headers_long_section_becomes_overlapping_windows_with_same_header():
    doc = next(d for d in DOCS if d.doc_id == "tricky.md")
    chunks = by_doc("headers:max_tokens=100,overlap=20", doc)
    windows = [c for c in chunks if c.header == "Zor Belge › Uzun paragraf"]
    assert len(windows) > 3 and all(c.kind == "window" for c in windows)
    assert all(a.end > b.start for a, b in zip(windows, windows[1:]))  # they overlap


def indented_code(seed: int = 0) -> str:
    """A Python file of short lines at mixed indentation with trailing comments, where
    summing the lines' own token counts undercounts the joined text by a few tokens."""
    r, out = random.Random(seed), []
    for i in range(120):
        out.append(f"def step_{i}(items, limit={i}):")
        for j in range(r.randint(2, 7)):
            indent = "    " * r.randint(1, 3)
            out.append(f"{indent}{r.choice(['total', 'count', 'value'])}_{j} = min(limit, len(items) - {j})  # keep {i}")
        out += ["", ""]
    return "\n".join(out)


@pytest.mark.parametrize("strategy", ["headers:max_tokens=256", "parent:max_tokens=256"])
def test_source_code_is_cut_into_line_groups_not_single_lines(strategy):
    """Indentation and line breaks take tokens the stripped lines were not counted with:
    a group gathered on that estimate runs over the limit, and it must be cut into the
    longest runs that fit, not into one chunk per line (headers on a Python file gave a
    median chunk of 6 tokens)."""
    text = indented_code()
    doc = make_document("pkg/handlers.py", text, fmt="code", language="python")
    chunks = by_doc(strategy, doc)
    total = get_tokenizer().count(text)
    assert all(c.n_tokens <= 256 for c in chunks)
    assert len(chunks) <= total // 256 + 2, [c.n_tokens for c in chunks]
    assert sorted(c.n_tokens for c in chunks)[len(chunks) // 2] > 200


def test_blocks_keep_table_code_and_list_whole():
    doc = next(d for d in DOCS if d.doc_id == "tricky.md")
    chunks = by_doc("blocks:target=60,hard_max=80", doc)
    for needle in (
        "| Bölge | Standart kargo | Ekspres |\n|---|---|---|\n| İlçe ve köyler | 3-5 iş günü | Yok |\n| KKTC | 5-8 iş günü | Yok |",
        '```json\n{"event": "order.created", "retry": [1, 2, 4]}\n```',
        "- birinci madde\n- ikinci madde\n  - iç içe madde\n- üçüncü madde",
    ):
        holders = [c for c in chunks if needle in c.text]
        assert len(holders) == 1, needle
    # a heading never ends a chunk
    for c in chunks:
        assert not c.text.rstrip().split("\n")[-1].startswith("#")


def test_blocks_header_names_every_section_a_chunk_spans():
    doc = make_document("k.md", "# Kargo\n\nGiriş.\n\n## Süreler\n\nÜç gün.\n\n### Köyler\n\nBeş gün.\n\n## İade\n\nOn dört gün.\n")
    whole, = by_doc("blocks", doc)
    assert whole.header == "Kargo\nsections: Süreler; Süreler › Köyler; İade"
    parts = by_doc("blocks:target=8,hard_max=16", doc)
    assert len(parts) > 1 and all(p.header.split("\n")[0] == p.heading_path for p in parts)
    assert by_doc("blocks:name_sections=false", doc)[0].header == "Kargo"


def test_blocks_oversized_table_splits_between_rows_and_repeats_header_row():
    doc = next(d for d in DOCS if d.doc_id == "tricky.md")
    t_start = doc.text.index(BIG_TABLE)
    t_end = t_start + len(BIG_TABLE)
    row_starts = {t_start} | {i + 1 for i in range(t_start, t_end) if doc.text[i] == "\n"}
    row_ends = {t_end} | {i for i in range(t_start, t_end) if doc.text[i] == "\n"}
    parts = [c for c in by_doc("blocks", doc) if c.start < t_end and c.end > t_start]
    assert len(parts) >= 3
    for c in parts:
        assert c.start <= t_start or c.start in row_starts
        assert c.end >= t_end or c.end in row_ends
    assert "| Bölge | Standart kargo | Ekspres |" in parts[0].text
    for c in parts[1:]:
        assert c.header == "Zor Belge › Büyük tablo\n| Bölge | Standart kargo | Ekspres |"
        assert c.kind == "table"


def test_a_header_row_too_long_to_repeat_is_cut_with_a_mark_in_blocks_and_fixed():
    """A 150,000-column header repeated whole in every part's header made the index grow
    with its square: over 2,048 characters, parts repeat its start and say it was cut."""
    names = " | ".join(f"col{i}" for i in range(600))
    head = f"| {names} |"
    rows = "\n".join("| " + " | ".join(f"v{r}.{i}" for i in range(600)) + " |" for r in range(4))
    table = f"{head}\n|{'---|' * 600}\n{rows}"
    doc = make_document("wide.md", f"# Wide\n\n{table}\n")
    mark = f" … (header row cut: {len(head):,} characters)"
    for spec in ("blocks", "fixed64:table_header=true"):
        parts = [c for c in parse_strategy(spec).create().chunk(doc) if c.start > doc.text.index("v0.0")]
        assert parts and all(doc.text[c.start : c.end] == c.text for c in parts)
        cut = [c for c in parts if head[:100] in c.header]
        assert cut and all(c.header.endswith(head[:2048] + mark) for c in cut)


def test_parse_strategy_names_and_errors():
    assert parse_strategy("fixed64").params == {"size": 64, "overlap": 16, "table_header": False}
    assert parse_strategy("fixed:size=32,overlap=8").name == "fixed-32-8"
    assert parse_strategy("fixed64:table_header=true").name == "fixed64-table_header"
    assert parse_strategy("headers", name="my-headers").name == "my-headers"
    with pytest.raises(InvalidParameter, match=r"^overlap \(64\) must be smaller than size \(64\)$"):
        parse_strategy("fixed:size=64,overlap=64")
    with pytest.raises(InvalidParameter, match="size must be an integer, not 'big'"):
        parse_strategy("fixed:size=big")
    with pytest.raises(InvalidParameter, match="unknown parameter 'sise' for strategy fixed"):
        parse_strategy("fixed:sise=3")
    with pytest.raises(UnknownStrategy, match="unknown strategy 'fixd'; presets: fixed64"):
        parse_strategy("fixd")


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_spelling_of_a_preset_names_the_preset(preset):
    """A spec that resolves to a preset's kind and values is that preset's collection,
    however it is written: in full, in another order, over another preset, or the kind alone."""
    kind, values = PRESETS[preset]
    spec = parse_strategy(preset)
    spellings = [f"{kind}:" + ",".join(f"{k}={v}" for k, v in spec.params.items() if v is not None),
                 f"{kind}:" + ",".join(f"{k}={v}" for k, v in reversed(values.items())),
                 f"{preset}:" + ",".join(f"{k}={v}" for k, v in values.items())]
    for text in spellings:
        assert parse_strategy(text).name == preset, text
        assert parse_strategy(text).params == spec.params


def test_derived_names_depend_on_the_values_not_the_spelling():
    assert parse_strategy("fixed").name == "fixed128"  # the kind's defaults are the fixed128 preset
    assert parse_strategy("fixed:size=64,overlap=16").name == "fixed64"
    assert parse_strategy("semantic:threshold=0.7").name == "semantic70"
    assert parse_strategy("fixed:overlap=8,size=32").name == parse_strategy("fixed:size=32,overlap=8").name \
        == "fixed-32-8"
    assert parse_strategy("fixed:size=100,overlap=0").name == parse_strategy("fixed:size=100").name == "fixed-100"
    assert parse_strategy("fixed:size=64,overlap=16,table_header=true").name == "fixed64-table_header"
    assert parse_strategy("fixed:size=256,overlap=16").name == parse_strategy("fixed256:overlap=16").name \
        == "fixed256-overlap-16"
    # two different strategies never share a name (a value after a gap carries its key)
    assert parse_strategy("fixed:size=16").name == "fixed-16"
    assert parse_strategy("fixed:overlap=16").name == "fixed-overlap-16"
    assert parse_strategy("headers:overlap=32").name != parse_strategy("headers:min_tokens=32").name
    assert parse_strategy("fixed:size=32", name="mine").name == "mine"


def test_a_parameter_given_twice_is_an_error_naming_it():
    for text in ("fixed:size=64,size=32", "fixed:size=64, size = 64", "fixed64:overlap=8,size=32,overlap=4"):
        key = "size" if "size=64" in text else "overlap"
        with pytest.raises(InvalidParameter, match=rf"^parameter '{key}' is given twice in .*; give it once$"):
            parse_strategy(text)
