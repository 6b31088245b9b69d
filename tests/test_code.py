"""The code strategy (tree-sitter units), `auto` routing and symbol spans, on real grammars."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer import chunkers
from indexer.chunkers.blocks import BlocksChunker
from indexer.chunkers.code import AutoChunker, CodeChunker
from indexer.chunkers.headers import HeadersChunker
from indexer.errors import InvalidParameter
from indexer.loaders import load_documents, make_document
from indexer.loaders.symbols import outline, parser_for, scan_definitions, symbol_span, walk
from indexer.loaders.syntax import Source, children
from tests.conftest import CORPUS

CODE = CORPUS / "code"
_, _docs = load_documents([CODE])
REPO = {d.doc_id: d for d in _docs}
QUESTIONS = [json.loads(line) for line in (CODE / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]


def code_doc(name: str, text: str, language: str):
    return make_document(name, text, "code", language)


def check(doc, chunks, max_bytes: int) -> None:
    """Exact trimmed slices, in order, within the byte cap, covering every non-space."""
    covered = bytearray(len(doc.text))
    last_end = 0
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
        assert c.text and c.text == c.text.strip()
        assert len(c.text.encode("utf-8")) <= max_bytes, (c.kind, c.symbol, len(c.text.encode()))
        assert c.start >= last_end, "chunks are in document order and do not overlap"
        assert doc.line_of(c.start) == c.start_line <= c.end_line
        assert c.language == doc.language
        last_end = c.end
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    missing = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
    assert not missing, f"uncovered {doc.text[missing[0] : missing[0] + 40]!r}"


def by_symbol(chunks):
    out = {}
    for c in chunks:
        out.setdefault(c.symbol, []).append(c)
    return out


# -- the sample repository -------------------------------------------------------------------
@pytest.mark.parametrize("sizes", [(200, 2000), (0, 2000), (50, 300), (120, 64)])
def test_every_sample_file_chunks_into_exact_slices_under_the_cap(sizes):
    min_bytes, max_bytes = sizes
    chunker = CodeChunker(min_bytes=min(min_bytes, max_bytes), max_bytes=max_bytes)
    assert {d.language for d in REPO.values()} >= {"python", "typescript", "javascript", "go", "rust", "sql"}
    for doc in REPO.values():
        check(doc, chunker.chunk(doc), max_bytes)


def test_header_names_path_class_method_and_imports():
    chunks = CodeChunker().chunk(REPO["src/queue/worker.ts"])
    drain = by_symbol(chunks)["QueueWorker.drain"][0]
    # the imports line names the modules a chunk uses: drain uses none of them by name
    assert drain.header == "src/queue/worker.ts · class QueueWorker · method drain"
    head = next(c for c in chunks if c.kind == "class" and c.symbol == "QueueWorker")
    assert head.header == "src/queue/worker.ts · class QueueWorker\nimports: events"  # extends EventEmitter
    everything = by_symbol(CodeChunker(imports="all").chunk(REPO["src/queue/worker.ts"]))["QueueWorker.drain"][0]
    assert everything.header.endswith("\nimports: redis, pino, events")
    assert (drain.kind, drain.parent_symbol, drain.language) == ("method", "QueueWorker", "typescript")
    assert drain.text.startswith("/** Waits for in-flight jobs") and "async drain(timeoutMs: number)" in drain.text
    assert drain.indexed_text == drain.header + "\n\n" + drain.text
    # the class is over 2,000 bytes: its signature and fields are a chunk of their own
    head = [c for c in chunks if c.kind == "class" and c.symbol == "QueueWorker"]
    assert len(head) == 1 and "\nexport class QueueWorker extends EventEmitter {\n" in head[0].text
    assert head[0].text.endswith("dead: 0 };") and "constructor(" not in head[0].text
    # (the small function before the class joined it: small units merge with the next one)
    assert head[0].text.startswith("function sleep(ms: number)")
    # a file without imports has no imports line
    cart = CodeChunker().chunk(REPO["web/static/cart.js"])
    assert all("\n" not in c.header for c in cart)


def test_go_receiver_methods_and_rust_impl_members_get_owner_symbols():
    go = by_symbol(CodeChunker().chunk(REPO["internal/ratelimit/limiter.go"]))
    allow = go["Limiter.Allow"][0]
    assert (allow.kind, allow.parent_symbol) == ("method", "Limiter")
    assert allow.header == ("internal/ratelimit/limiter.go · struct Limiter · method Allow\n"
                            "imports: context, errors, fmt, sync, time")
    assert allow.text.startswith("// Allow reports")  # the doc comment belongs to the method
    rust = CodeChunker(min_bytes=0, max_bytes=600).chunk(REPO["crates/ledger/src/lib.rs"])
    append = by_symbol(rust)["Journal.append"]
    assert append[0].parent_symbol == "Journal"
    assert append[0].header == "crates/ledger/src/lib.rs · impl Journal<W> · method append"  # uses nothing of std
    assert any(c.header.endswith("\nimports: std") and "HashMap" in c.text for c in rust)
    assert append[0].text.startswith("/// Appends an entry")
    display = by_symbol(rust)["JournalError.fmt"][0]
    assert display.header.split("\n")[0] == "crates/ledger/src/lib.rs · impl fmt::Display for JournalError · method fmt"


def test_python_imports_and_decorators():
    chunks = CodeChunker(min_bytes=0).chunk(REPO["jobs/scheduler.py"])
    assert chunks[0].header.endswith(
        "imports: functools, logging, random, time, concurrent.futures, dataclasses, datetime, typing, billing.invoices")
    report = by_symbol(chunks)["build_nightly_report"]
    assert report[0].text.startswith("@timed\ndef build_nightly_report(")
    assert len(report) == 2 and all(c.header.startswith("jobs/scheduler.py · def build_nightly_report\n") for c in report)


def test_symbol_span_resolves_every_question_and_holds_its_answer():
    assert len(QUESTIONS) == 40
    for q in QUESTIONS:
        doc = REPO[q["doc_id"]]
        span = symbol_span(doc, q["symbol"])
        assert span is not None, q["symbol"]
        start, end = span
        assert doc.text.find(q["answer"], start, end) != -1, (q["id"], q["symbol"])
    doc = REPO["crates/ledger/src/lib.rs"]
    assert symbol_span(doc, "Journal::append") == symbol_span(doc, "Journal.append")
    assert symbol_span(doc, "Journal.nope") is None
    assert symbol_span(REPO["migrations/001_orders.sql"], "orders") is None


# -- rules ---------------------------------------------------------------------------------
def big_class(n_methods: int = 20) -> str:
    fields = "".join(f"    field_{i}: int = {i}  # alan {i}\n" for i in range(8))
    methods = "".join(
        f"    def method_{i}(self, x):\n        \"\"\"Metot {i}.\"\"\"\n"
        + "".join(f"        x = x * {j} + {i}  # adım {j}\n" for j in range(6))
        + "        return x\n\n"
        for i in range(n_methods)
    )
    return f'import os\nfrom typing import List\n\n\nclass Big(Base):\n    """Büyük bir sınıf."""\n\n{fields}\n{methods}'


def test_a_large_class_splits_into_methods_and_a_class_header_chunk():
    doc = code_doc("pkg/big.py", big_class(), "python")
    chunks = CodeChunker().chunk(doc)
    check(doc, chunks, 2000)
    methods = [c for c in chunks if c.kind == "method"]
    assert [c.symbol for c in methods] == [f"Big.method_{i}" for i in range(20)]
    assert all(c.parent_symbol == "Big" for c in methods)
    assert methods[3].header == "pkg/big.py · class Big · method method_3"  # uses no import
    head = [c for c in chunks if c.kind == "class"]
    assert len(head) == 1 and head[0].symbol == "Big"
    assert head[0].header == "pkg/big.py · class Big\nimports: os, typing"  # holds the import lines
    assert head[0].text.endswith("field_7: int = 7  # alan 7") and "def " not in head[0].text
    # the import block is under min_bytes: it merges with the class header after it
    assert head[0].text.startswith('import os\nfrom typing import List\n\n\nclass Big(Base):\n    """Büyük')


def test_a_class_that_fits_is_one_chunk():
    doc = code_doc("small.py", big_class(3), "python")
    chunks = CodeChunker().chunk(doc)
    assert [c.kind for c in chunks] == ["class"] and chunks[0].symbol == "Big"


def test_a_long_function_becomes_line_windows_that_keep_its_symbol():
    body = "".join(f"    total += compute_{i}(values[{i}], 'ölçü {i}')\n" for i in range(110))
    text = f"def long_function(values):\n    total = 0\n{body}    return total\n"
    assert len(text.encode()) > 5000
    doc = code_doc("long.py", text, "python")
    chunks = CodeChunker().chunk(doc)
    check(doc, chunks, 2000)
    assert len(chunks) >= 3
    for c in chunks:
        assert c.symbol == "long_function" and c.kind == "function"
        assert c.header == "long.py · def long_function"
        assert c.text.endswith((")", "total"))  # whole lines
    sizes = [len(c.text.encode()) for c in chunks]
    assert min(sizes) > max(sizes) / 2  # windows of even size, no stub at the end


def test_a_line_longer_than_the_cap_is_cut_at_character_boundaries():
    text = "def f():\n    s = '" + "ğüşıöç" * 400 + "'\n    return s\n"
    doc = code_doc("wide.py", text, "python")
    chunks = CodeChunker(max_bytes=500).chunk(doc)
    check(doc, chunks, 500)
    assert len(chunks) > 9 and all(c.symbol == "f" for c in chunks)


def test_small_units_merge_forward_then_backward_within_the_cap():
    text = ("type Id = string;\n\n"
            "export function first(a: number): number {\n" + "  a = a + 1;\n" * 20 + "  return a;\n}\n\n"
            "export function second(b: number): number {\n" + "  b = b * 2;\n" * 20 + "  return b;\n}\n\n"
            "export const LAST = 1;\n")
    doc = code_doc("m.ts", text, "typescript")
    chunks = CodeChunker().chunk(doc)
    check(doc, chunks, 2000)
    assert [c.symbol for c in chunks] == ["first", "second"]
    assert chunks[0].text.startswith("type Id = string;")  # joined the unit after it
    assert chunks[1].text.endswith("export const LAST = 1;")  # end of file: the one before
    # a cap too small for the merge: the small pieces stand alone
    cap = max(len(c.text.encode()) for c in CodeChunker(min_bytes=0).chunk(doc)) + 2
    tight = CodeChunker(min_bytes=200, max_bytes=cap).chunk(doc)
    check(doc, tight, cap)
    assert [c.text for c in tight][::3] == ["type Id = string;", "export const LAST = 1;"]
    assert [c.kind for c in tight] == ["type", "function", "function", "module"]


def test_module_code_between_definitions_is_a_module_chunk():
    consts = "".join(f"LIMIT_{i} = {i * 100}  # sınır {i}\n" for i in range(12))
    text = f"import os\n\n{consts}\n\ndef f():\n" + "    x = 1\n" * 30 + "    return x\n"
    doc = code_doc("mod.py", text, "python")
    chunks = CodeChunker().chunk(doc)
    assert [c.kind for c in chunks] == ["module", "function"]
    assert chunks[0].symbol == "" and chunks[0].header == "mod.py\nimports: os"


def test_braces_inside_string_literals_do_not_confuse_anything():
    text = ('const A = "}}{";\n'
            'export function first(x) {\n  const s = "}}{";\n  const t = `${x}}}{{`;\n  return s + "{";\n}\n\n'
            "export function second(y) {\n  // } a brace in a comment\n  return y;\n}\n")
    for language in ("javascript", "typescript"):
        doc = code_doc("b.js", text, language)
        spans = {d.symbol: doc.text[d.start : d.end] for d in outline(doc).definitions}
        assert spans["first"].endswith('return s + "{";\n}') and spans["second"].startswith("export function second")
        chunks = CodeChunker(min_bytes=0).chunk(doc)
        check(doc, chunks, 2000)
        assert [c.symbol for c in chunks if c.symbol] == ["first", "second"]
    py = code_doc("b.py", 'def first():\n    return "}}{"\n\n\ndef second():\n    return "{"\n', "python")
    assert [d.symbol for d in outline(py).definitions] == ["first", "second"]


def test_a_file_with_syntax_errors_still_chunks_and_keeps_all_its_code():
    text = ("import os\n\ndef good(a):\n    return a\n\n"
            "def broken(:\n    return }}{ (\n\nclass Half(\n    x = [1, 2\n\n"
            "def after():\n    # ağır yorum\n    return 'ok'\n")
    doc = code_doc("bad.py", text, "python")
    for max_bytes in (2000, 64):
        chunks = CodeChunker(min_bytes=0, max_bytes=max_bytes).chunk(doc)
        check(doc, chunks, max_bytes)
    ts = code_doc("bad.ts", "export class A {\n  m( {\n    return 1;\n  }\n}\n}}}\nfunction ok() { return 2; }\n", "typescript")
    check(ts, CodeChunker(min_bytes=0).chunk(ts), 2000)


@pytest.mark.parametrize("name,language", [("migrations/002.sql", "sql"), ("legacy/PAYROLL.cob", "cobol"), ("x.zig", "zig")])
def test_files_without_a_grammar_become_line_windows(name, language):
    line = "       MOVE WS-TUTAR TO WS-TOPLAM.  *> ödeme ve iade satırı\n"
    doc = code_doc(name, line * 120, language)
    assert parser_for(language) is None
    chunks = CodeChunker().chunk(doc)
    check(doc, chunks, 2000)
    assert len(chunks) >= 4 and all(c.kind == "lines" and c.header == name and not c.symbol for c in chunks)
    assert all(c.text.endswith("satırı") for c in chunks)  # whole lines


def test_spans_are_characters_not_bytes():
    text = "# Türkçe yorum: ğüşıöç İĞÜŞ 😀\n" * 5 + "\ndef ödeme(tutar):\n    return tutar  # kuruş\n"
    doc = code_doc("tr.py", text, "python")
    (span,) = [(d.start, d.end) for d in outline(doc).definitions]
    assert doc.text[span[0] : span[1]] == "def ödeme(tutar):\n    return tutar  # kuruş"
    src = Source(text)
    assert src.size(0, len(text)) == len(text.encode()) and src.char(src.byte(40)) == 40


def test_comments_attributes_and_decorators_directly_above_belong_to_the_definition():
    go = code_doc("a.go", "package a\n\n// unrelated\n\n// Run does it.\n// Twice.\nfunc Run() {}\n", "go")
    (run,) = outline(go).definitions
    assert go.text[run.start :].startswith("// Run does it.")
    rust = code_doc("a.rs", "x(); // trailing\n#[derive(Debug)]\n/// Doc.\npub struct S { a: u8 }\n", "rust")
    (s,) = outline(rust).definitions
    assert rust.text[s.start :].startswith("#[derive(Debug)]")
    ts = code_doc("a.ts", "class C {\n  @Input()\n  @Other() m() {}\n  h = (e) => e;\n  n = 1;\n}\n", "typescript")
    (c,) = outline(ts).definitions
    assert ts.text[c.members[0].start :].startswith("@Input()")
    assert [m.symbol for m in c.members] == ["C.m", "C.h"]  # a field holding a function is a method


def test_java_and_generic_grammar_rules():
    text = ("package shop.billing;\n\nimport java.util.List;\nimport java.io.*;\n"
            "import static org.junit.Assert.assertEquals;\n\n"
            "/** Faturalar. */\n@Service\npublic class Invoices {\n  private int n;\n"
            "  public Invoices() { n = 0; }\n  /** Toplam. */\n  public int total(List<Integer> xs) { return n; }\n"
            "  enum State { OPEN, PAID; boolean done() { return this == PAID; } }\n}\n")
    doc = code_doc("Invoices.java", text, "java")
    tree = outline(doc)
    assert tree.imports == ["java.util", "java.io", "org.junit.Assert"]
    symbols = [d.symbol for d in walk(tree.definitions)]
    assert symbols == ["Invoices", "Invoices.Invoices", "Invoices.total", "Invoices.State", "Invoices.State.done"]
    assert doc.text[tree.definitions[0].start :].startswith("/** Faturalar. */\n@Service")
    # a grammar from the language pack without a rule table: kinds guessed from node types
    src = Source(text)
    root = parser_for("java").parse(src.data).root_node
    generic = [d.symbol for d in walk(scan_definitions(src, "unlisted-language", children(root)))]
    assert {"Invoices", "Invoices.total", "Invoices.State.done"} <= set(generic)


def test_parameters_are_validated_with_named_messages():
    with pytest.raises(InvalidParameter, match=r"^max_bytes \(10\) must be at least 64$"):
        CodeChunker(max_bytes=10)
    with pytest.raises(InvalidParameter, match=r"^min_bytes \(500\) must be between 0 and max_bytes \(300\)$"):
        CodeChunker(min_bytes=500, max_bytes=300)
    spec = chunkers.parse_strategy("code:max_bytes=1000")
    assert spec.params == {"min_bytes": 200, "max_bytes": 1000, "imports": "used"} and spec.name == "code-max_bytes-1000"


# -- routing -------------------------------------------------------------------------------
def test_auto_routes_each_file_to_its_strategy():
    auto, code = AutoChunker(), CodeChunker()
    md = make_document("guide.md", "# Kılavuz\n\n## Kurulum\n\n" + "Metin burada. " * 40 + "\n")
    txt = make_document("notes.txt", "Birinci paragraf.\n\nİkinci paragraf.\n", "text")
    html = make_document("p.html", "<h1>Sayfa</h1><p>Metin.</p>", "html")
    py = REPO["billing/invoices.py"]
    assert isinstance(auto.route(md), BlocksChunker) and isinstance(auto.route(html), BlocksChunker)
    assert isinstance(auto.route(txt), HeadersChunker) and isinstance(auto.route(py), CodeChunker)
    for doc, expected in ((md, BlocksChunker()), (txt, HeadersChunker()), (py, code)):
        got = auto.chunk(doc)
        assert [(c.text, c.kind, c.header) for c in got] == [(c.text, c.kind, c.header) for c in expected.chunk(doc)]
        assert all(c.strategy == "auto" for c in got)
    # the code strategy hands prose to the prose strategies too, under its own name
    assert [c.text for c in code.chunk(md)] == [c.text for c in BlocksChunker().chunk(md)]
    assert all(c.strategy == "code" for c in code.chunk(txt))


# -- generated sources ---------------------------------------------------------------------
NAME = st.sampled_from(["run", "ödeme", "handle", "İşle", "x1", "_private", "drain"])
TEXT = st.text(alphabet=st.sampled_from(list("abcçğıöşü İ{}()[]\"';:,.=+-*/<>#\\`$ 😀\t")), max_size=60)


@st.composite
def python_source(draw):
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["def", "class", "stmt", "comment", "garbage", "long"]))
        name = draw(NAME)
        line = draw(TEXT).replace("\\", "")
        if kind == "def":
            body = "".join(f"    x = {draw(TEXT)!r}\n" for _ in range(draw(st.integers(1, 15))))
            parts.append(f"@dec\ndef {name}(a):\n{body}    return a\n")
        elif kind == "class":
            methods = "".join(f"    def m{i}(self):\n        return {draw(TEXT)!r}\n\n" for i in range(draw(st.integers(0, 12))))
            parts.append(f"class {name}:\n    '''{line}'''\n    y = 1\n\n{methods}")
        elif kind == "stmt":
            parts.append(f"import os\nVALUE = {line!r}\n")
        elif kind == "comment":
            parts.append(f"# {line}\n")
        elif kind == "garbage":
            parts.append(line + "\n")
        else:
            parts.append(f"S = '{'ş' * draw(st.integers(50, 900))}'\n")
    return "\n".join(parts)


@st.composite
def ts_source(draw):
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["function", "class", "type", "garbage"]))
        name = draw(NAME).replace("ö", "o").replace("İ", "I")
        if kind == "function":
            body = "".join(f"  const v{i} = {json.dumps(draw(TEXT))};\n" for i in range(draw(st.integers(0, 20))))
            parts.append(f"/** {name} */\nexport function {name}(a: string): string {{\n{body}  return a;\n}}\n")
        elif kind == "class":
            methods = "".join(f"  m{i}(): string {{ return {json.dumps(draw(TEXT))}; }}\n" for i in range(draw(st.integers(0, 25))))
            parts.append(f"export class {name} {{\n  private n = 1;\n{methods}}}\n")
        elif kind == "type":
            parts.append(f"export type {name} = {json.dumps(draw(TEXT))};\n")
        else:
            parts.append(draw(TEXT) + "\n")
    return "\n".join(parts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=st.one_of(python_source().map(lambda s: ("python", s)), ts_source().map(lambda s: ("typescript", s))),
    min_bytes=st.integers(0, 400),
    max_bytes=st.integers(64, 800),
)
def test_generated_sources_keep_the_invariants(source, min_bytes, max_bytes):
    language, text = source
    doc = code_doc("gen.py" if language == "python" else "gen.ts", text, language)
    chunker = CodeChunker(min_bytes=min(min_bytes, max_bytes), max_bytes=max_bytes)
    chunks = chunker.chunk(doc)
    check(doc, chunks, max_bytes)
    assert [c.id for c in chunker.chunk(code_doc(doc.doc_id, text, language))] == [c.id for c in chunks]


# -- bundles: wrappers and closures ----------------------------------------------------------
def _functions(n: int, indent: str = "  ") -> str:
    return "\n\n".join(
        f"{indent}function f{i}(a, b) {{\n{indent}  var x = a + b * {i};\n{indent}  if (x > {i}) {{ return x - {i}; }}\n"
        f"{indent}  return [a, b, x].join('-');\n{indent}}}"
        for i in range(n)
    )


@pytest.mark.parametrize("wrapper", [
    ";(function() {\n%s\n}.call(this));\n",  # lodash
    "(function () {\n%s\n})();\n",
    "!function () {\n%s\n}();\n",
    "(function (root, factory) {\n  if (typeof define === 'function') { define([], factory); }\n"
    "  else { root.Lib = factory(); }\n}(this, function () {\n%s\n  return {};\n}));\n",  # UMD
])
def test_functions_inside_an_immediately_invoked_wrapper_are_units(wrapper):
    doc = code_doc("lib.js", wrapper % _functions(6), "javascript")
    chunks = CodeChunker(min_bytes=0).chunk(doc)
    check(doc, chunks, 2000)
    symbols = by_symbol(chunks)
    assert {f"f{i}" for i in range(6)} <= set(symbols)
    assert symbols["f3"][0].text.startswith("function f3(a, b) {") and symbols["f3"][0].kind == "function"
    assert symbol_span(doc, "f3") == (doc.text.index("function f3"), doc.text.index("}", doc.text.index("return [a, b, x]", doc.text.index("function f3"))) + 1)


def test_a_large_function_is_split_into_the_functions_it_defines():
    # a module written as one closure (lodash's runInContext): far over the cap
    text = "var lib = (function lib(context) {\n  var cache = {};\n\n" + _functions(40) + "\n\n  return { f0: f0 };\n});\n"
    doc = code_doc("closure.js", text, "javascript")
    chunks = CodeChunker(min_bytes=0, max_bytes=600).chunk(doc)
    check(doc, chunks, 600)
    symbols = by_symbol(chunks)
    assert {f"lib.f{i}" for i in range(40)} <= set(symbols)
    f7 = symbols["lib.f7"][0]
    assert f7.kind == "function" and f7.parent_symbol == "lib"
    assert f7.header.split("\n")[0] == "closure.js · function lib · function f7"
    # the closure's own code (its signature, locals, return) stays in chunks named after it
    own = [c for c in chunks if c.symbol == "lib"]
    assert own and own[0].text.startswith("var lib = (function lib(context) {")
    # a small function with an inner function stays whole
    small = code_doc("s.py", "def outer(x):\n    def inner(y):\n        return y + 1\n    return inner(x)\n", "python")
    assert [(c.symbol, c.kind) for c in CodeChunker(min_bytes=0).chunk(small)] == [("outer", "function")]
