"""Fitting text into a token budget: split by priority, then pack greedily.

`fit` cuts a span into pieces of at most `limit` tokens, trying the split levels in
order (paragraphs, lines, sentences, words) and falling back to token windows only when
a single word is too long; adjacent pieces are then packed back together up to the limit.
Splitters yield their spans and pieces stream into the packer, so only the packed spans
are ever held: a single-line file of 25 MB is four million words, and a list of their
spans (and another of their pieces) took 34 times the file.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..text.sentences import iter_sentences
from ..text.spans import strip_span
from ..text.words import inside_word
from ..types import Document
from .base import Chunker

Span = tuple[int, int, int]  # start, end, n_tokens
Splitter = Callable[[str, int, int], Iterable[tuple[int, int]]]  # spans in order, made as taken

_WORD = re.compile(r"\S+")


def _pieces_between(separator: str, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Whitespace-trimmed, non-empty spans of text[start:end] between separators."""
    pos = start
    while pos < end:
        brk = text.find(separator, pos, end)
        stop = end if brk == -1 else brk
        s, e = strip_span(text, pos, stop)
        if s < e:
            yield s, e
        pos = stop + len(separator) if brk != -1 else end


def paragraphs(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    return _pieces_between("\n\n", text, start, end)


def lines(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    return _pieces_between("\n", text, start, end)


def sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    return iter_sentences(text, start, end)


def words(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    return (m.span() for m in _WORD.finditer(text, start, end))


# A span counted on the document's tokens (those it overlaps) is within a token or two
# of its count alone: only its two edges can tokenize differently. Within MARGIN of a
# limit, spans are counted exactly.
MARGIN = 4


def doc_counts(
    chunker: Chunker, doc: Document, starts: Sequence[int], ends: Sequence[int]
) -> list[int]:
    """Tokens of each span doc.text[start:end] counted on the document's tokens: one
    tokenization of the document serves every span (see MARGIN)."""
    b = chunker.bounds(doc)
    # queries of the array's own dtype: mixed dtypes would copy the whole array per call
    ends_at = np.searchsorted(b, np.asarray(ends, dtype=b.dtype), side="left")
    return (
        ends_at - np.searchsorted(b, np.asarray(starts, dtype=b.dtype), side="right") + 1
    ).tolist()


def span_tokens(chunker: Chunker, doc: Document, start: int, end: int, limit: int) -> int:
    """Tokens of doc.text[start:end]: counted on the document's tokens, or exactly when
    that is within MARGIN of `limit` (so a span reported within the limit is within it)."""
    [n] = doc_counts(chunker, doc, (start,), (end,))
    return (
        n if n + MARGIN <= limit or n > 2 * limit + MARGIN else chunker.count(doc.text[start:end])
    )


PROSE: tuple[Splitter, ...] = (paragraphs, lines, sentences, words)
ROWS: tuple[Splitter, ...] = (lines, words)


def fit(
    chunker: Chunker,
    doc: Document,
    start: int,
    end: int,
    limit: int,
    levels: Sequence[Splitter] = PROSE,
    first_limit: int | None = None,
    n_tokens: int | None = None,
) -> list[Span]:
    """Pieces of doc.text[start:end], each of at most `limit` tokens (the first at most
    `first_limit`), cut at the highest-priority boundary that works."""
    first_limit = limit if first_limit is None else min(first_limit, limit)
    start, end = strip_span(doc.text, start, end)
    if start >= end:
        return []
    n = chunker.count(doc.text[start:end]) if n_tokens is None else n_tokens
    if n <= first_limit:
        return [(start, end, n)]
    for depth, split in enumerate(levels):
        spans = iter(split(doc.text, start, end))
        head = list(itertools.islice(spans, 2))
        if len(head) > 1:
            pieces = fit_each(
                chunker,
                doc,
                itertools.chain(head, spans),
                limit=limit,
                levels=levels[depth + 1 :],
                first_limit=first_limit,
            )
            return pack(chunker, doc, pieces, limit, first_limit)
    # one unbreakable run: token windows
    return windows(chunker, doc, start, end=end, limit=limit, first_limit=first_limit)


def fit_each(
    chunker: Chunker,
    doc: Document,
    spans: Iterable[tuple[int, int]],
    limit: int,
    levels: Sequence[Splitter],
    first_limit: int | None = None,
) -> Iterator[Span]:
    """`fit` of each span in turn, the first piece of them all at most `first_limit`
    tokens: pieces made as they are taken (for `pack`), never a list of them all."""
    emitted = False
    for s, e in spans:
        for piece in fit(
            chunker,
            doc,
            s,
            end=e,
            limit=limit,
            levels=levels,
            first_limit=limit if emitted else first_limit,
        ):
            emitted = True
            yield piece


def windows(
    chunker: Chunker,
    doc: Document,
    start: int,
    end: int,
    limit: int,
    first_limit: int | None = None,
    overlap: int = 0,
) -> list[Span]:
    """Token windows over doc.text[start:end], cut on the document's token boundaries
    between words (inside a word only when one word is longer than a window),
    each of at most `limit` tokens (the first at most `first_limit`) *as its own text
    tokenizes*: a slice cut out of a long word or an emoji run can take more tokens
    alone than it took inside the document, so a window over its cap is shortened.
    Consecutive windows share `overlap` document tokens."""
    first_limit = limit if first_limit is None else min(first_limit, limit)
    text = doc.text
    edges = _edges(chunker.bounds(doc), start, end)
    n = len(edges) - 1
    out: list[Span] = []
    i = prev = 0
    while i < n:
        cap = first_limit if not out else limit
        i, j, s, e, k = _fit_window(chunker, text, edges, i=i, prev=prev, cap=cap)
        if s < e and not (out and out[-1][:2] == (s, e)):
            out.append((s, e, k))
        if j >= n:
            break
        i, prev = next_start(text, edges, i, j, overlap), j
    return out


def _edges(b: np.ndarray, start: int, end: int) -> np.ndarray:
    """The document's token boundaries within [start, end], with start and end themselves."""
    # keys of the array's own dtype: a Python int would copy the whole array per call
    i0 = int(np.searchsorted(b, b.dtype.type(start), side="left"))
    i1 = int(np.searchsorted(b, b.dtype.type(end), side="right"))
    edges = b[i0:i1]  # a view: a long section costs no Python list of its boundaries
    head = [start] if not len(edges) or edges[0] != start else []
    tail = [end] if not len(edges) or edges[-1] != end else []
    if head or tail:
        edges = np.concatenate(
            (np.asarray(head, dtype=b.dtype), edges, np.asarray(tail, dtype=b.dtype))
        )
    return edges


def _fit_window(
    chunker: Chunker, text: str, edges: np.ndarray, i: int, prev: int, cap: int
) -> tuple[int, int, int, int, int]:
    """The window from edge i (or from `prev`, where the last window ended, if it would
    end no further) of at most `cap` tokens as its own text tokenizes, shortened until it
    fits: (first edge, end edge, start, end, tokens)."""
    n = len(edges) - 1
    size = max(cap, 1)
    while True:
        j = min(i + size, n)
        if j < n:  # windows end between words where they can
            j = last_word_edge(text, edges, j, i) or j
        if j <= prev:  # no further than the last window: start where it ended
            i, size = prev, max(cap, 1)
            continue
        s, e = strip_span(text, int(edges[i]), int(edges[j]))
        k = chunker.count(text[s:e]) if s < e else 0
        if k <= cap or j - i == 1:
            return i, j, s, e, k
        size = max(min(j - i - 1, j - i - (k - cap)), 1)


def next_start(text: str, edges: np.ndarray, i: int, j: int, overlap: int) -> int:
    """Where the window after the one over edges [i, j) starts: `overlap` tokens before
    its end, moved back to a boundary between words, else where it ended."""
    return (last_word_edge(text, edges, j - overlap, i) if j - overlap > i else None) or j


def last_word_edge(text: str, edges: np.ndarray, j: int, floor: int) -> int | None:
    """The largest k in (floor, j] whose boundary edges[k] splits no word, None if every
    one does (a word longer than the window). Checked lazily, a few characters per
    window, rather than over every boundary of the document."""
    k = j
    while k > floor and inside_word(text, int(edges[k])):
        k -= 1
    return k if k > floor else None


def pack(
    chunker: Chunker,
    doc: Document,
    pieces: Iterable[Span],
    limit: int,
    first_limit: int | None = None,
) -> list[Span]:
    """Greedily merge adjacent pieces while the merged text stays within the limit. The
    pieces are taken one at a time: only the group being merged is held.

    A group is gathered on an estimate (its pieces' counts plus one per join) and counted
    exactly before it is emitted. Where the estimate was optimistic — source code, whose
    indentation and line breaks take tokens the stripped lines did not count — the longest
    run of its first pieces that fits is emitted and the rest carried on, never the pieces
    one by one (a 500-token group of code lines must not become 60 one-line chunks)."""
    out: list[Span] = []
    group: list[Span] = []
    estimate = 0

    def cap() -> int:
        return limit if out else (first_limit or limit)

    def count(i: int, j: int) -> int:  # tokens of group[i..j], whole pieces
        return group[i][2] if i == j else chunker.count(doc.text[group[i][0] : group[j][1]])

    def emit_fitting() -> None:
        """Emit the longest run of the group's first pieces within the cap (at least one)."""
        nonlocal group, estimate
        limit_now, last = cap(), len(group) - 1
        n = count(0, last)
        if n > limit_now:
            # the largest j whose run group[0..j] fits (group[0] alone always goes): the
            # estimate is a few tokens short, so gallop back from the end, then bisect
            hi, step = last - 1, 1
            while hi > 0 and count(0, hi) > limit_now:
                hi, step = max(hi - step, 0), step * 2
            lo, hi = hi, min(hi + step // 2, last - 1) if hi < last - 1 else hi
            while lo < hi:  # count(0, lo) fits, count(0, hi + 1) does not
                mid = (lo + hi + 1) // 2
                if count(0, mid) <= limit_now:
                    lo = mid
                else:
                    hi = mid - 1
            last, n = lo, count(0, lo)
        out.append((group[0][0], group[last][1], n))
        group = group[last + 1 :]
        estimate = sum(p[2] for p in group) + max(len(group) - 1, 0)

    for piece in pieces:
        while group and estimate + piece[2] + 1 > cap():
            emit_fitting()
        estimate += piece[2] + (1 if group else 0)
        group.append(piece)
    while group:
        emit_fitting()
    return out
