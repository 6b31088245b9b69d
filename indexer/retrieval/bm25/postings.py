"""BM25 over postings: the engine of our own, for collections of any size.

A *segment* is a set of chunks laid out as arrays a process maps rather than reads: the
forward index (each chunk's term ids, `terms` + `offsets`) and the postings, sorted by term
(`keys`: the term ids present, `indptr`: where each one's postings start, `docs`: the
chunks holding it, `tfs`: how often). A query touches only its terms' postings; nothing is
loaded whole, so several readers share one copy in the page cache.

An index is a large *base* segment and a small *delta* (the chunks incremental builds
added since the base was written), minus *deleted* positions (chunks they retired). The
statistics BM25 needs (chunk count, each term's document frequency, the average length)
are those of the live chunks, so the scores are exactly those of one index built over
them: scoring keeps term frequencies, not precomputed weights, and applies the formula at
query time. Scoring (`top`, `dense`) is a function of (term ids, term weights) only, so a
layer that weighs fields or exact matches can sit on top.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

SEGMENT_ARRAYS = ("terms", "offsets", "keys", "indptr", "docs", "tfs")
Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Positions = NDArray[np.integer[Any]]  # chunk positions, of whichever integer width
Slots = tuple[Ints, Ints]  # per term id, (start, end) of its postings in a segment


class PostingLists(TypedDict):
    """A segment's postings (`postings`)."""

    keys: NDArray[np.int32]
    indptr: Ints
    docs: NDArray[np.int32]
    tfs: NDArray[np.uint16]


class SegmentArrays(PostingLists):
    """A segment's arrays: its forward index and its postings."""

    terms: NDArray[np.int32]
    offsets: Ints


def postings(terms: NDArray[np.int32], offsets: Ints) -> PostingLists:
    """The postings of a forward index: for each term id present (`keys`, ascending), the
    chunks holding it (`docs`, ascending, local to the segment) and how often (`tfs`)."""
    n_docs = len(offsets) - 1
    if not len(terms) or n_docs <= 0:
        return {
            "keys": np.zeros(0, np.int32),
            "indptr": np.zeros(1, np.int64),
            "docs": np.zeros(0, np.int32),
            "tfs": np.zeros(0, np.uint16),
        }
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(offsets))
    pairs, tfs = np.unique(terms.astype(np.int64) * n_docs + doc, return_counts=True)
    term_of, docs = np.divmod(pairs, n_docs)
    keys, starts = np.unique(term_of, return_index=True)
    indptr = np.append(starts, len(pairs)).astype(np.int64)
    return {
        "keys": keys.astype(np.int32),
        "indptr": indptr,
        "docs": docs.astype(np.int32),
        "tfs": np.minimum(tfs, np.iinfo(np.uint16).max).astype(np.uint16),
    }


class Segment:
    """One segment's arrays (in memory or memory-mapped) and where its chunks start."""

    def __init__(self, arrays: SegmentArrays, first: int = 0) -> None:
        self.terms, self.offsets = arrays["terms"], arrays["offsets"]
        self.keys, self.indptr, self.docs, self.tfs = (
            arrays["keys"],
            arrays["indptr"],
            arrays["docs"],
            arrays["tfs"],
        )
        self.first = first
        self._lengths: NDArray[np.float32] | None = None

    @classmethod
    def from_forward(cls, terms: NDArray[np.int32], offsets: Ints, first: int = 0) -> Segment:
        return cls({"terms": terms, "offsets": offsets, **postings(terms, offsets)}, first)

    def arrays(self) -> dict[str, NDArray[np.generic]]:
        """The arrays by their names in SEGMENT_ARRAYS."""
        return {
            "terms": self.terms,
            "offsets": self.offsets,
            "keys": self.keys,
            "indptr": self.indptr,
            "docs": self.docs,
            "tfs": self.tfs,
        }

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def consistent(self) -> bool:
        """Whether the arrays' sizes agree: offsets over the terms, postings over the keys."""
        return bool(
            len(self.offsets) >= 1
            and self.offsets[0] == 0
            and self.offsets[-1] == len(self.terms)
            and len(self.indptr) == len(self.keys) + 1
            and self.indptr[-1] == len(self.docs) == len(self.tfs)
        )

    @property
    def lengths(self) -> NDArray[np.float32]:
        """Each chunk's length in terms (read once, when first needed)."""
        if self._lengths is None:
            self._lengths = np.diff(np.asarray(self.offsets)).astype(np.float32)
        return self._lengths

    def doc_terms(self, local: int) -> NDArray[np.int32]:
        return np.asarray(self.terms[self.offsets[local] : self.offsets[local + 1]])

    def slot(self, term_ids: Ints) -> Slots:
        """For each term id, (start, end) of its postings here (empty when absent)."""
        k = np.searchsorted(self.keys, term_ids)
        k = np.minimum(k, max(len(self.keys) - 1, 0))
        found = (
            (np.asarray(self.keys[k]) == term_ids)
            if len(self.keys)
            else np.zeros(len(term_ids), bool)
        )
        start = np.where(found, np.asarray(self.indptr[k]), 0)
        end = np.where(found, np.asarray(self.indptr[k + found.astype(np.int64)]), 0)
        return start, end

    def df(self, term_ids: Ints) -> Ints:
        start, end = self.slot(term_ids)
        counts: Ints = end - start
        return counts


class Postings:
    """The engine over a base segment, a delta and deleted positions."""

    def __init__(
        self, segments: Sequence[Segment], deleted: Positions, k1: float, b: float
    ) -> None:
        self.segments = list(segments)
        self.deleted = np.sort(np.asarray(deleted, dtype=np.int64))  # positions of retired chunks
        self.k1, self.b = k1, b
        self.size = sum(len(s) for s in self.segments)  # positions, deleted ones included
        self.n = self.size - len(self.deleted)  # live chunks
        total = sum(
            float(np.asarray(s.offsets[-1]) - np.asarray(s.offsets[0]))
            for s in self.segments
            if len(s)
        )
        total -= float(sum(len(self.doc_terms(p)) for p in self.deleted.tolist()))
        self._gone_keys, self._gone_df = np.unique(self._terms_of(self.deleted), return_counts=True)
        self.avgdl = total / self.n if self.n > 0 else 0.0
        self._norm: list[Floats] | None = None
        self._live: Floats | None = None

    def is_deleted(self, position: int) -> bool:
        k = int(np.searchsorted(self.deleted, position))
        return k < len(self.deleted) and int(self.deleted[k]) == position

    def segment_of(self, position: int) -> tuple[Segment, int]:
        for seg in self.segments:
            if seg.first <= position < seg.first + len(seg):
                return seg, position - seg.first
        raise IndexError(position)

    def _terms_of(self, positions: Ints) -> NDArray[np.integer[Any]]:
        """The term ids of chunks (one entry per distinct term per chunk)."""
        parts: list[NDArray[np.int32]] = []
        for p in positions.tolist():
            seg, local = self.segment_of(p)
            parts.append(np.unique(seg.doc_terms(local)))
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def doc_terms(self, position: int) -> NDArray[np.int32]:
        seg, local = self.segment_of(position)
        return seg.doc_terms(local)

    def df(self, term_ids: Sequence[int] | Positions) -> Ints:
        """Document frequency of each term among the live chunks."""
        ids = np.asarray(term_ids, dtype=np.int64)
        out = np.zeros(len(ids), dtype=np.int64)
        for seg in self.segments:
            out += seg.df(ids)
        if len(self._gone_keys) and len(ids):
            k = np.minimum(np.searchsorted(self._gone_keys, ids), len(self._gone_keys) - 1)
            out -= np.where(self._gone_keys[k] == ids, self._gone_df[k], 0)
        return out

    def idf(self, term_ids: Sequence[int] | Positions) -> Floats:
        """Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5)): never negative."""
        df = self.df(term_ids).astype(np.float64)
        return np.log1p((self.n - df + 0.5) / (df + 0.5))

    def _norms(self) -> list[Floats]:
        """Per segment, k1 * (1 - b + b * length / avgdl) of every chunk (computed once)."""
        if self._norm is None:
            avgdl = self.avgdl or 1.0
            self._norm = [
                self.k1 * (1 - self.b + self.b * seg.lengths.astype(np.float64) / avgdl)
                for seg in self.segments
            ]
        return self._norm

    def _accumulate(
        self, term_ids: Sequence[int] | Ints, weights: Sequence[float] | Floats
    ) -> tuple[Floats, list[Positions]]:
        """Every position's score (an array of them, mostly zeros) and the positions each
        term's postings touched: sum over terms of weight * idf * tf * (k1 + 1) /
        (tf + k1 * (1 - b + b * len / avgdl)). Weights are the query's own (how often each
        term occurs in it, for plain BM25). Only the terms' postings are read."""
        ids = np.asarray(term_ids, dtype=np.int64)
        acc = np.zeros(self.size, dtype=np.float64)
        touched: list[Positions] = []
        if not len(ids) or self.n <= 0:
            return acc, touched
        factor = self.idf(ids) * np.asarray(weights, dtype=np.float64) * (self.k1 + 1)
        for seg, norm in zip(self.segments, self._norms()):
            start, end = seg.slot(ids)
            for t in np.flatnonzero(end > start).tolist():
                docs = seg.docs[start[t] : end[t]]
                tf = seg.tfs[start[t] : end[t]].astype(np.float64)
                where = docs + seg.first if seg.first else docs
                # a term's postings never repeat a chunk
                acc[where] += factor[t] * tf / (tf + norm[docs])
                touched.append(where)
        if len(self.deleted):
            acc[self.deleted] = 0.0
        return acc, touched

    def dense(
        self, term_ids: Sequence[int] | Ints, weights: Sequence[float] | Floats
    ) -> NDArray[np.float32]:
        """A score for every position (0 for chunks without the terms, and deleted ones)."""
        return self._accumulate(term_ids, weights)[0].astype(np.float32)

    def top(
        self, term_ids: Sequence[int] | Ints, weights: Sequence[float] | Floats, k: int
    ) -> list[tuple[int, float]]:
        """The k best (position, score) pairs with a positive score: score descending,
        then position (deterministic ties) — the same as ranking `dense`, at the cost of
        the postings it must read. Terms are read from the highest bound on their
        contribution (weight * idf * (k1 + 1)) down; once the bounds of the terms left add
        up to less than the k-th best score so far, a chunk none of the terms read holds
        cannot reach the top k, so the rest are only looked up for the chunks already
        found (MaxScore): a common word's long postings are searched, not scanned."""
        ids = np.asarray(term_ids, dtype=np.int64)
        weighed = np.asarray(weights, dtype=np.float64)
        if k <= 0 or not len(ids) or self.n <= 0:
            return []
        if (weighed <= 0).any():
            return self._top_scanned(ids, weighed, k)
        bounds = self.idf(ids) * weighed * (self.k1 + 1)
        slots = [seg.slot(ids) for seg in self.segments]
        acc = np.zeros(self.size, dtype=np.float64)
        found, rest = self._read_best(_by_bound(bounds, slots), bounds, slots, acc, k)
        if not found:
            return []
        cand = np.concatenate(found) if len(found) > 1 else found[0]
        self._look_up_rest(rest, bounds, slots, acc, cand)
        return self._ranked(acc, cand, k, unique=True)

    def _look_up_rest(
        self, rest: list[int], bounds: Floats, slots: list[Slots], acc: Floats, cand: Positions
    ) -> None:
        """MaxScore's second phase: the terms left, looked up for the chunks found (`cand`),
        in postings sorted by chunk."""
        norms = self._norms()
        for i in rest:
            for seg, norm, (start, end) in zip(self.segments, norms, slots):
                self._look_up(
                    seg, norm, int(start[i]), end=int(end[i]), bound=bounds[i], acc=acc, cand=cand
                )

    def _top_scanned(self, term_ids: Ints, weights: Floats, k: int) -> list[tuple[int, float]]:
        """`top` by reading every term's postings whole (a weight that is not positive
        voids MaxScore's bounds)."""
        acc, touched = self._accumulate(term_ids, weights)
        return self._ranked(acc, np.concatenate(touched), k) if touched else []

    def _read_best(
        self, order: list[int], bounds: Floats, slots: list[Slots], acc: Floats, k: int
    ) -> tuple[list[Positions], list[int]]:
        """MaxScore's first phase: the terms' postings read into `acc`, highest bound first,
        until the bounds of the terms left cannot lift a chunk into the top k. Returns the
        chunks found (each once, as first seen) and the terms left (`order`'s tail)."""
        norms = self._norms()
        found: list[Positions] = []
        read = 0.0
        remaining = float(bounds[order].sum()) if order else 0.0
        theta = 0.0
        for n, i in enumerate(order):
            if theta > 0 and remaining < theta:
                return found, order[n:]  # these alone cannot lift a chunk they hold into the top k
            for seg, norm, (start, end) in zip(self.segments, norms, slots):
                found.append(
                    _read_postings(
                        seg, norm, int(start[i]), end=int(end[i]), bound=bounds[i], acc=acc
                    )
                )
            read += bounds[i]
            remaining -= bounds[i]
            if remaining < read:  # a k-th best score above what is left is possible: find it
                found = [np.concatenate(found) if len(found) > 1 else found[0]]
                theta = self._kth_best(acc, found[0], k, theta)
        return found, []

    def _kth_best(self, acc: Floats, cand: Positions, k: int, theta: float) -> float:
        """The k-th best live score among `cand` (`theta` while fewer than k)."""
        values = acc[cand] * self._alive()[cand]
        if len(values) < k:
            return theta
        return float(np.partition(values, len(values) - k)[len(values) - k])

    @staticmethod
    def _look_up(
        seg: Segment, norm: Floats, start: int, end: int, bound: float, acc: Floats, cand: Positions
    ) -> None:
        """One term's contribution (postings `start:end` of `seg`) to the chunks `cand`:
        searched for each of them, or read whole when that is cheaper."""
        docs = seg.docs[start:end]
        if not len(docs):
            return
        if len(cand) * np.log2(len(docs) + 1) > 4 * len(docs):  # cheaper to read them all
            tf = seg.tfs[start:end].astype(np.float64)
            acc[docs + seg.first if seg.first else docs] += bound * tf / (tf + norm[docs])
            return
        local = cand - seg.first
        at = np.minimum(np.searchsorted(docs, local), len(docs) - 1)
        hit = docs[at] == local
        tf = seg.tfs[start:end][at[hit]].astype(np.float64)
        acc[cand[hit]] += bound * tf / (tf + norm[local[hit]])

    def _alive(self) -> Floats:
        """1.0 for a live position, 0.0 for a deleted one."""
        if self._live is None:
            self._live = np.ones(self.size, dtype=np.float64)
            self._live[self.deleted] = 0.0
        return self._live

    def _ranked(
        self, acc: Floats, cand: Positions, k: int, unique: bool = False
    ) -> list[tuple[int, float]]:
        """The k best positions among `cand`, by their float32 score (as `dense` gives
        it), then position; every chunk tied with the k-th is kept for the tie order."""
        if not unique:
            cand = np.unique(cand)
        values = (acc[cand] * self._alive()[cand]).astype(np.float32)
        keep = values > 0
        cand, values = cand[keep], values[keep]
        if len(values) > k:
            kth = np.partition(values, len(values) - k)[len(values) - k]
            cand, values = cand[values >= kth], values[values >= kth]
        order = np.lexsort((cand, -values))[:k]
        return [(int(cand[i]), float(values[i])) for i in order]


def _by_bound(bounds: Floats, slots: list[Slots]) -> list[int]:
    """The terms some segment has postings for, highest bound first (ties: query order)."""
    return [
        i
        for i in np.argsort(-bounds, kind="stable").tolist()
        if any(end[i] > start[i] for start, end in slots)
    ]


def _read_postings(
    seg: Segment, norm: Floats, start: int, end: int, bound: float, acc: Floats
) -> Positions:
    """One term's postings (`start:end` of `seg`) added to `acc`; the chunks they hold that
    nothing had scored yet (every contribution is positive)."""
    docs = seg.docs[start:end]
    tf = seg.tfs[start:end].astype(np.float64)
    where = docs + seg.first if seg.first else docs
    new: Positions = where[acc[where] == 0]
    acc[where] += bound * tf / (tf + norm[docs])
    return new
