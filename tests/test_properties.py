"""Property tests: random but realistic Markdown through every strategy preset.

Documents are built from the pieces real corpora are made of — ATX and setext headings,
Turkish and English prose (5.000 TL, 89,90, vb., Dr., URLs, emoji), pipe tables (ragged,
with and without the delimiter row), fenced code (closed or not, holding `#` and `|`
lines), nested lists, blank lines, trailing spaces and CRLF — and every chunk of every
strategy must be an exact, trimmed slice of its document, within its limit, with a
deterministic unique id, in document order, and together the chunks must cover every
non-whitespace character.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from indexer.chunkers import PRESETS, REGISTRY, parse_strategy
from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from indexer.loaders import make_document
from indexer.loaders.decoding import normalise_newlines
from indexer.text.sentences import split_sentences
from indexer.text.tokens import get_tokenizer
from tests.test_chunkers import limit_of

# -- the pieces documents are made of ------------------------------------------------------

TR_WORDS = [
    "kargo", "teslimat", "süresi", "iş", "günü", "İstanbul", "Iğdır", "Çanakkale", "ödeme", "iade",
    "ürün", "müşteri", "şikâyet", "ağırlık", "ışık", "öğrenci", "çağrı", "ğüşıöçİ", "Şubat", "Ölçü",
    "5.000", "TL", "89,90", "%18", "KDV", "3.", "gün", "vb.", "Dr.", "örn.", "bkz.", "No.", "A.",
    "www.carsim.com.tr/a.b", "https://example.com/iade?x=1&y=2", "😀", "🚚📦", "1.5", "12:30", "e-posta",
    # words longer than a tight limit: only token windows can cut them
    "Çekoslovakyalılaştıramadıklarımızdanmışsınız", "🚚📦🇹🇷👩‍👩‍👧😀🙂",
    "https://www.örnek.com.tr/kargo/teslimat-süreleri/bölgeler?il=Iğdır&ilçe=Merkez#tablo",
]
EN_WORDS = [
    "shipping", "delivery", "the", "order", "is", "refund", "within", "days", "e.g.", "Mr.", "etc.",
    "i.e.", "approx.", "U.S.", "v2.0", "foo_bar()", "`code`", "**bold**", "_it_", "[link](http://x.y/z)",
]
WORD = st.sampled_from(TR_WORDS + EN_WORDS)
END = st.sampled_from([".", ".", ".", "!", "?", "…", "...", ".)", ".\"", ""])
SPACE = st.sampled_from([" ", " ", " ", "  ", "\t", "   "])  # trailing spaces, tabs
# a little raw noise: Markdown punctuation and odd characters in random order
NOISE = st.text(
    alphabet=st.sampled_from(list("#|-*_`~>[]()!.,:; \n\t\\=+1aİıçğ😀\u00a0\u200b\u3000")),
    min_size=1, max_size=40,
)


@st.composite
def sentence(draw):
    words = draw(st.lists(WORD, min_size=1, max_size=12))
    text = " ".join(words)
    return text[0].upper() + text[1:] + draw(END)


@st.composite
def paragraph(draw):
    sents = draw(st.lists(sentence(), min_size=1, max_size=5))
    seps = [draw(st.sampled_from([" ", " ", "\n", "  \n"])) for _ in sents[1:]]
    text = sents[0] + "".join(sep + s for sep, s in zip(seps, sents[1:]))
    return text + draw(st.sampled_from(["", "", " ", "   "]))


@st.composite
def heading(draw):
    title = " ".join(draw(st.lists(WORD, min_size=1, max_size=5)))
    if draw(st.integers(0, 6)) == 0:  # setext
        return title + "\n" + draw(st.sampled_from(["===", "---", "=========", "-----"]))
    level = draw(st.integers(1, 6))
    closing = draw(st.sampled_from(["", "", " " + "#" * level, " #"]))
    return "#" * level + " " + title + closing + draw(st.sampled_from(["", "  "]))


@st.composite
def table(draw):
    cols = draw(st.integers(1, 5))

    def row(n):
        cells = [" ".join(draw(st.lists(WORD, min_size=0, max_size=3))) for _ in range(n)]
        lead = draw(st.sampled_from(["| ", "|", ""]))
        tail = draw(st.sampled_from([" |", "|", ""]))
        return lead + " | ".join(cells) + tail

    lines = [row(cols)]
    if draw(st.booleans()):
        lines.append("|" + "|".join(draw(st.sampled_from(["---", ":---", "---:", ":-:"])) for _ in range(cols)) + "|")
    for _ in range(draw(st.integers(0, 6))):
        ragged = draw(st.integers(0, 3)) == 0
        lines.append(row(draw(st.integers(1, 7)) if ragged else cols))
    return "\n".join(lines)


@st.composite
def code_block(draw):
    fence = draw(st.sampled_from(["```", "~~~", "````"]))
    lang = draw(st.sampled_from(["", "python", "json", "bash", "md"]))
    body = draw(st.lists(st.sampled_from([
        "# a comment, not a heading", "## not a heading either", "| a | b |", "|---|---|",
        "def f(x):", "    return {'{': x}", "", "print('ğüş 5.000 TL')", "- not a list", "SELECT * FROM t;",
        "   ", "```inner", "echo $HOME # 😀",
    ]), min_size=0, max_size=8))
    text = fence + lang + "\n" + "\n".join(body)
    if draw(st.integers(0, 4)):  # mostly closed; sometimes left open to the end of the file
        text += "\n" + fence
    return text


@st.composite
def list_block(draw):
    lines = []
    depth = 0
    counters = {}
    for _ in range(draw(st.integers(1, 10))):
        depth = draw(st.integers(0, min(depth + 1, 5)))
        ordered = draw(st.booleans())
        indent = "   " * depth if ordered else "  " * depth
        if ordered:
            counters[depth] = counters.get(depth, 0) + 1
            marker = f"{counters[depth]}{draw(st.sampled_from(['.', ')']))}"
        else:
            marker = draw(st.sampled_from(["-", "*", "+"]))
        item = draw(st.one_of(sentence(), st.lists(WORD, min_size=1, max_size=4).map(" ".join)))
        lines.append(f"{indent}{marker} {item}{draw(st.sampled_from(['', ' ', '  ']))}")
    return "\n".join(lines)


BLOCK = st.one_of(
    heading(), heading(), paragraph(), paragraph(), paragraph(), table(), code_block(), list_block(),
    st.just("> alıntı: Dr. Yılmaz 5.000 TL dedi."), st.just("---"), st.just("<div>html blok</div>"),
    st.just("[ref]: https://example.com/a.b"), NOISE,
)
SEP = st.sampled_from(["\n\n", "\n\n", "\n", "\n\n\n", "\n \n", "\n\t\n"])


@st.composite
def markdown_text(draw, max_blocks=8):
    blocks = draw(st.lists(BLOCK, min_size=1, max_size=max_blocks))
    text = blocks[0] + "".join(draw(SEP) + b for b in blocks[1:])
    text = draw(st.sampled_from(["", "\n", "  \n"])) + text + draw(st.sampled_from(["", "\n", "\n\n", "  "]))
    if draw(st.integers(0, 3)) == 0:
        text = text.replace("\n", "\r\n")  # a Windows file: the loader normalises it first
    text = normalise_newlines(text)
    assume(text.strip())  # the loader skips whitespace-only files
    return text


# -- the strategies under test -------------------------------------------------------------

def _presets() -> list[str]:
    out = []
    for name, (kind, _params) in PRESETS.items():
        if name in ("code", "auto") or kind in ("code", "auto"):
            continue  # another helper owns code-aware strategies
        out.append("contextual:llm=extractive" if kind == "contextual" else name)
    return out


PRESET_NAMES = _presets()
# small limits, so that small documents exercise the splitting paths too
TIGHT = [
    "fixed:size=8,overlap=3",
    "headers:max_tokens=16,overlap=4,min_tokens=8",
    "blocks:target=12,hard_max=16",
    "blocks:target=16,hard_max=24,section_level=2",
    "parent:n=3,overlap=1,max_tokens=12",
]
TIGHT_SEMANTIC = ["semantic:threshold=0.5,min_tokens=4,max_tokens=12"]
COVERING = {"fixed", "headers", "blocks", "semantic", "parent", "contextual"}

_embedder = None


def embedder():
    """The real default model behind an in-memory cache (as a build uses it)."""
    global _embedder
    if _embedder is None:
        _embedder = CachedEmbedder(get_embedder(), EmbeddingCache(None))
    return _embedder


_chunkers: dict[str, object] = {}


def chunker_for(strategy: str):
    if strategy not in _chunkers:
        spec = parse_strategy(strategy)
        _chunkers[strategy] = spec.create(embedder=embedder() if spec.uses_embedder else None)
    return _chunkers[strategy]


def check_invariants(strategy: str, text: str, fmt: str = "markdown") -> None:
    chunker = chunker_for(strategy)
    doc = make_document("doc.md", text, fmt)
    chunks = chunker.chunk(doc)
    tk = get_tokenizer()
    limit = limit_of(chunker)
    base_kind = chunker.base_chunker.kind if chunker.kind == "contextual" else chunker.kind
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text, (strategy, c)
        assert c.text and c.text == c.text.strip(), (strategy, c.text)
        assert doc.line_of(c.start) == c.start_line <= c.end_line
        assert c.n_tokens <= limit, ("n_tokens over the limit", strategy, c.n_tokens, c.text)
        if base_kind != "fixed":
            # fixed counts its windows in document tokens (n_tokens, checked above): alone,
            # a slice may tokenize differently at its two edges. Every other strategy
            # keeps the text itself within the limit.
            assert tk.count(c.text) <= limit, ("text over the limit", strategy, tk.count(c.text), c.text)
        assert c.indexed_text.endswith(c.text)
    starts = [c.start for c in chunks]
    assert starts == sorted(starts), (strategy, starts)
    ids = [c.id for c in chunks]
    assert len(ids) == len(set(ids)), strategy
    # deterministic: a fresh document (empty caches) and a fresh chunker give the same chunks
    spec = parse_strategy(strategy)
    fresh = spec.create(embedder=embedder() if spec.uses_embedder else None)
    again = fresh.chunk(make_document("doc.md", text, fmt))
    assert [(c.id, c.start, c.end, c.header) for c in again] == [(c.id, c.start, c.end, c.header) for c in chunks]
    if chunker.kind in COVERING:
        covered = bytearray(len(doc.text))
        for c in chunks:
            covered[c.start : c.end] = b"\x01" * (c.end - c.start)
        missing = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
        assert not missing, f"{strategy}: uncovered {doc.text[missing[0] : missing[0] + 40]!r} in {doc.text!r}"
    parents = chunker.parent_chunks(doc)
    if parents:
        by_id = {p.id: p for p in parents}
        for p in parents:
            assert doc.text[p.start : p.end] == p.text and p.text == p.text.strip()
        for c in chunks:
            parent = by_id[c.parent_id]
            assert parent.start <= c.start < c.end <= parent.end


STRUCTURAL = [s for s in PRESET_NAMES if not parse_strategy(s).uses_embedder] + TIGHT
SEMANTIC = [s for s in PRESET_NAMES if parse_strategy(s).uses_embedder] + TIGHT_SEMANTIC


def test_every_registered_kind_is_exercised():
    kinds = {parse_strategy(s).kind for s in STRUCTURAL + SEMANTIC}
    assert kinds >= {k for k in REGISTRY if k not in ("code", "auto")}


@pytest.mark.parametrize("strategy", STRUCTURAL)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_text())
def test_structural_strategies_keep_the_invariants(strategy, text):
    check_invariants(strategy, text)


@pytest.mark.parametrize("strategy", SEMANTIC)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_text(max_blocks=5))
def test_embedding_strategies_keep_the_invariants(strategy, text):
    check_invariants(strategy, text)


@pytest.mark.parametrize("fmt", ["text", "code"])
@pytest.mark.parametrize("strategy", ["headers", "fixed64", "blocks", "parent", "headers:max_tokens=16,overlap=4,min_tokens=8",
                                      "blocks:target=12,hard_max=16"])
@settings(max_examples=15, deadline=None)
@given(text=markdown_text())
def test_the_same_text_read_as_plain_text_or_code_keeps_the_invariants(strategy, fmt, text):
    """The same pieces read as a .txt file (paragraphs, rst-style underlines) or as a
    source file without a grammar (line groups)."""
    check_invariants(strategy, text, fmt)


# -- sentences ---------------------------------------------------------------------------

SENTENCE_TEXT = st.one_of(
    markdown_text(max_blocks=4),
    st.lists(st.one_of(WORD, END, SPACE, st.sampled_from(["\n", "\n\n", "\n \n", "\"", "»", ")"])), max_size=40).map("".join),
    st.text(max_size=60),
)


@settings(max_examples=200, deadline=None)
@given(text=SENTENCE_TEXT, data=st.data())
def test_split_sentences_spans_are_ordered_trimmed_and_cover_the_text(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    spans = split_sentences(text, start, end)
    prev_end = start
    covered = bytearray(len(text))
    for s, e in spans:
        assert start <= s < e <= end
        assert s >= prev_end  # ordered, non-overlapping
        piece = text[s:e]
        assert piece == piece.strip() and piece
        covered[s:e] = b"\x01" * (e - s)
        prev_end = e
    missing = [i for i in range(start, end) if not text[i].isspace() and not covered[i]]
    assert not missing, (text, start, end, spans)


class _Joined:
    """A stand-in counter for `pack`: a span's count is its pieces' counts plus `extra`
    tokens per join — more than the one `pack` estimates, as indentation takes in code."""

    def __init__(self, text: str, extra: int) -> None:
        self.text, self.extra = text, extra

    def count(self, text: str) -> int:
        words = text.split()
        return sum(int(w) for w in words) + self.extra * max(len(words) - 1, 0)


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=60), extra=st.integers(1, 4),
       limit=st.integers(40, 160))
def test_pack_emits_the_longest_fitting_runs_when_the_estimate_is_short(sizes, extra, limit):
    """Every run fits, runs follow the pieces in order, and no run could have taken the
    next piece: a group the estimate let grow too long is cut where it fits, never
    shattered into its pieces."""
    from indexer.chunkers.packing import pack

    text = " ".join(str(n) for n in sizes)
    pieces, at = [], 0
    for n in sizes:
        s = text.index(str(n), at)
        pieces.append((s, s + len(str(n)), n))
        at = s + len(str(n))
    counter = _Joined(text, extra)
    doc = make_document("p.txt", text, fmt="text")
    runs = pack(counter, doc, iter(pieces), limit)
    assert [r[0] for r in runs][0] == pieces[0][0] and runs[-1][1] == pieces[-1][1]
    starts = {p[0]: i for i, p in enumerate(pieces)}
    ends = {p[1]: i for i, p in enumerate(pieces)}
    for (s, e, n), nxt in zip(runs, runs[1:] + [None]):
        i, j = starts[s], ends[e]
        assert n == counter.count(text[s:e])
        assert n <= limit or i == j  # a piece alone may stand over the limit
        if nxt is not None:
            assert starts[nxt[0]] == j + 1  # in order, nothing lost
            assert counter.count(text[s:pieces[j + 1][1]]) > limit  # it could not take the next one
