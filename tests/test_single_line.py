"""Single-line files (no newline at all): the shapes whose memory issue 22 measured at 34x
the file, because the block packer listed every word of the line. The packer now streams
its pieces; these tests pin that its cuts are the ones the listing made, and the rules a
chunk keeps on such a file (within hard_max, exact slices in order, cut between words).
"""

from __future__ import annotations

import re

import pytest

from indexer.chunkers import parse_strategy
from indexer.chunkers.packing import PROSE, ROWS, fit, pack, windows
from indexer.loaders import make_document
from indexer.text.sentences import iter_sentences, split_sentences
from indexer.text.spans import strip_span
from indexer.text.tokens import get_tokenizer
from indexer.text.words import inside_word
from tests.conftest import CORPUS

SOURCE = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md"))[:4])
WORDS = re.findall(r"\w+", SOURCE)
SHAPES = {
    "words": " ".join(WORDS),
    "table row": "| " + " | ".join(WORDS) + " |",
    "commas": ", ".join(" ".join(WORDS[i : i + 4]) for i in range(0, len(WORDS), 4)),
    "turkish line": SOURCE.replace("\n", " "),
}


def listed_fit(chunker, doc, start, end, limit, levels=PROSE, first_limit=None):
    """`packing.fit` as it was before it streamed: every level's spans and every piece
    listed, then packed. The oracle the streaming version must agree with."""
    first_limit = limit if first_limit is None else min(first_limit, limit)
    start, end = strip_span(doc.text, start, end)
    if start >= end:
        return []
    n = chunker.count(doc.text[start:end])
    if n <= first_limit:
        return [(start, end, n)]
    pieces = []
    for depth, split in enumerate(levels):
        spans = list(split(doc.text, start, end))
        if len(spans) > 1:
            for s, e in spans:
                cap = first_limit if not pieces else limit
                pieces.extend(listed_fit(chunker, doc, s, e, limit, levels[depth + 1 :], first_limit=cap))
            return pack(chunker, doc, pieces, limit, first_limit)
    return windows(chunker, doc, start, end, limit, first_limit)


@pytest.fixture(scope="module")
def chunker():
    return parse_strategy("blocks").create()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("limit, first_limit", [(64, None), (512, 100), (16, 3)])
def test_streamed_fit_cuts_where_the_listed_one_did(chunker, shape, limit, first_limit):
    doc = make_document("line.md", SHAPES[shape])
    levels = ROWS if shape == "table row" else PROSE
    got = fit(chunker, doc, 0, len(doc.text), limit, levels, first_limit=first_limit)
    assert got == listed_fit(chunker, doc, 0, len(doc.text), limit, levels, first_limit=first_limit)
    assert len(got) > 3


def test_streamed_fit_agrees_on_paragraphs_lines_and_words_longer_than_a_window(chunker):
    # every level of PROSE used at once, and token windows inside a word of 4000 letters
    text = "\n\n".join(
        ["Kısa paragraf. İkinci cümle!", "satır bir\nsatır iki " + "uzun " * 200, "ab" * 2000 + " son söz", SHAPES["commas"]]
    )
    doc = make_document("mixed.md", text)
    for limit in (8, 40, 300):
        assert fit(chunker, doc, 0, len(text), limit) == listed_fit(chunker, doc, 0, len(text), limit)


def test_iter_sentences_yields_what_split_sentences_lists():
    text = SHAPES["turkish line"] + "\n\nSon paragraf. Dr. Kaya 3. gün geldi.\n\n"
    spans = split_sentences(text, 5, len(text) - 3)
    assert list(iter_sentences(text, 5, len(text) - 3)) == spans
    assert len(spans) > 50


@pytest.mark.parametrize("shape", SHAPES)
def test_blocks_on_a_single_line_file_keep_hard_max_and_cut_between_words(shape):
    doc = make_document("line.md", SHAPES[shape])
    chunker = parse_strategy("blocks").create()
    chunks = chunker.chunk(doc)
    tk = get_tokenizer()
    assert len(chunks) > 3
    for before, after in zip(chunks, chunks[1:]):
        assert before.end <= after.start  # in order, no overlap
        assert doc.text[before.end : after.start].strip() == ""  # nothing between them is lost
    assert chunks[0].start == strip_span(doc.text, 0, len(doc.text))[0]
    assert chunks[-1].end == strip_span(doc.text, 0, len(doc.text))[1]
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
        assert c.n_tokens <= chunker.hard_max and tk.count(c.text) <= chunker.hard_max
        assert not inside_word(doc.text, c.start) and not inside_word(doc.text, c.end)


@pytest.mark.parametrize("shape", ["words", "commas"])
def test_blocks_on_a_single_line_paragraph_cut_where_the_listed_fit_cut(shape):
    # one paragraph over hard_max is split by `fit` into parts of at most hard_max
    # tokens, which blocks then packs up to `target`: every cut is one the oracle made
    doc = make_document("line.md", SHAPES[shape])
    chunker = parse_strategy("blocks").create()
    pieces = listed_fit(chunker, doc, 0, len(doc.text), chunker.hard_max)
    chunks = chunker.chunk(doc)
    assert {c.start for c in chunks} <= {s for s, _, _ in pieces}
    assert {c.end for c in chunks} <= {e for _, e, _ in pieces}
    assert len(pieces) >= len(chunks) > 3
