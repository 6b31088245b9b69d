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

import numpy as np

SEGMENT_ARRAYS = ("terms", "offsets", "keys", "indptr", "docs", "tfs")


def postings(terms: np.ndarray, offsets: np.ndarray) -> dict[str, np.ndarray]:
    """The postings of a forward index: for each term id present (`keys`, ascending), the
    chunks holding it (`docs`, ascending, local to the segment) and how often (`tfs`)."""
    n_docs = len(offsets) - 1
    if not len(terms) or n_docs <= 0:
        return {"keys": np.zeros(0, np.int32), "indptr": np.zeros(1, np.int64), "docs": np.zeros(0, np.int32),
                "tfs": np.zeros(0, np.uint16)}
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(offsets))
    pairs, tfs = np.unique(terms.astype(np.int64) * n_docs + doc, return_counts=True)
    term_of, docs = np.divmod(pairs, n_docs)
    keys, starts = np.unique(term_of, return_index=True)
    indptr = np.append(starts, len(pairs)).astype(np.int64)
    return {"keys": keys.astype(np.int32), "indptr": indptr, "docs": docs.astype(np.int32),
            "tfs": np.minimum(tfs, np.iinfo(np.uint16).max).astype(np.uint16)}


class Segment:
    """One segment's arrays (in memory or memory-mapped) and where its chunks start."""

    def __init__(self, arrays: dict[str, np.ndarray], first: int = 0) -> None:
        self.terms, self.offsets = arrays["terms"], arrays["offsets"]
        self.keys, self.indptr, self.docs, self.tfs = arrays["keys"], arrays["indptr"], arrays["docs"], arrays["tfs"]
        self.first = first
        self._lengths: np.ndarray | None = None

    @classmethod
    def from_forward(cls, terms: np.ndarray, offsets: np.ndarray, first: int = 0) -> Segment:
        return cls({"terms": terms, "offsets": offsets, **postings(terms, offsets)}, first)

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in SEGMENT_ARRAYS}

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        """Each chunk's length in terms (read once, when first needed)."""
        if self._lengths is None:
            self._lengths = np.diff(np.asarray(self.offsets)).astype(np.float32)
        return self._lengths

    def doc_terms(self, local: int) -> np.ndarray:
        return np.asarray(self.terms[self.offsets[local] : self.offsets[local + 1]])

    def slot(self, term_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each term id, (start, end) of its postings here (empty when absent)."""
        k = np.searchsorted(self.keys, term_ids)
        k = np.minimum(k, max(len(self.keys) - 1, 0))
        found = (np.asarray(self.keys[k]) == term_ids) if len(self.keys) else np.zeros(len(term_ids), bool)
        start = np.where(found, np.asarray(self.indptr[k]), 0)
        end = np.where(found, np.asarray(self.indptr[k + found.astype(np.int64)]), 0)
        return start, end

    def df(self, term_ids: np.ndarray) -> np.ndarray:
        start, end = self.slot(term_ids)
        return end - start


class Postings:
    """The engine over a base segment, a delta and deleted positions."""

    def __init__(self, segments: Sequence[Segment], deleted: np.ndarray, k1: float, b: float) -> None:
        self.segments = list(segments)
        self.deleted = np.sort(np.asarray(deleted, dtype=np.int64))  # positions of retired chunks
        self.k1, self.b = k1, b
        self.size = sum(len(s) for s in self.segments)  # positions, deleted ones included
        self.n = self.size - len(self.deleted)  # live chunks
        total = sum(float(np.asarray(s.offsets[-1]) - np.asarray(s.offsets[0])) for s in self.segments if len(s))
        total -= float(sum(len(self.doc_terms(p)) for p in self.deleted.tolist()))
        self._gone_keys, self._gone_df = np.unique(self._terms_of(self.deleted), return_counts=True)
        self.avgdl = total / self.n if self.n > 0 else 0.0
        self._norm: list[np.ndarray] | None = None
        self._live: np.ndarray | None = None

    def is_deleted(self, position: int) -> bool:
        k = int(np.searchsorted(self.deleted, position))
        return k < len(self.deleted) and int(self.deleted[k]) == position

    def segment_of(self, position: int) -> tuple[Segment, int]:
        for seg in self.segments:
            if seg.first <= position < seg.first + len(seg):
                return seg, position - seg.first
        raise IndexError(position)

    def _terms_of(self, positions: np.ndarray) -> np.ndarray:
        """The term ids of chunks (one entry per distinct term per chunk)."""
        parts = []
        for p in positions.tolist():
            seg, local = self.segment_of(p)
            parts.append(np.unique(seg.doc_terms(local)))
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def doc_terms(self, position: int) -> np.ndarray:
        seg, local = self.segment_of(position)
        return seg.doc_terms(local)

    def df(self, term_ids: np.ndarray) -> np.ndarray:
        """Document frequency of each term among the live chunks."""
        term_ids = np.asarray(term_ids, dtype=np.int64)
        out = np.zeros(len(term_ids), dtype=np.int64)
        for seg in self.segments:
            out += seg.df(term_ids)
        if len(self._gone_keys) and len(term_ids):
            k = np.minimum(np.searchsorted(self._gone_keys, term_ids), len(self._gone_keys) - 1)
            out -= np.where(self._gone_keys[k] == term_ids, self._gone_df[k], 0)
        return out

    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        """Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5)): never negative."""
        df = self.df(term_ids).astype(np.float64)
        return np.log1p((self.n - df + 0.5) / (df + 0.5))

    def _norms(self) -> list[np.ndarray]:
        """Per segment, k1 * (1 - b + b * length / avgdl) of every chunk (computed once)."""
        if self._norm is None:
            avgdl = self.avgdl or 1.0
            self._norm = [self.k1 * (1 - self.b + self.b * seg.lengths.astype(np.float64) / avgdl)
                          for seg in self.segments]
        return self._norm

    def _accumulate(self, term_ids: Sequence[int], weights: Sequence[float]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Every position's score (an array of them, mostly zeros) and the positions each
        term's postings touched: sum over terms of weight * idf * tf * (k1 + 1) /
        (tf + k1 * (1 - b + b * len / avgdl)). Weights are the query's own (how often each
        term occurs in it, for plain BM25). Only the terms' postings are read."""
        term_ids = np.asarray(term_ids, dtype=np.int64)
        acc = np.zeros(self.size, dtype=np.float64)
        touched: list[np.ndarray] = []
        if not len(term_ids) or self.n <= 0:
            return acc, touched
        factor = self.idf(term_ids) * np.asarray(weights, dtype=np.float64) * (self.k1 + 1)
        for seg, norm in zip(self.segments, self._norms()):
            start, end = seg.slot(term_ids)
            for t in np.flatnonzero(end > start).tolist():
                docs = seg.docs[start[t] : end[t]]
                tf = seg.tfs[start[t] : end[t]].astype(np.float64)
                where = docs + seg.first if seg.first else docs
                acc[where] += factor[t] * tf / (tf + norm[docs])  # a term's postings never repeat a chunk
                touched.append(where)
        if len(self.deleted):
            acc[self.deleted] = 0.0
        return acc, touched

    def dense(self, term_ids: Sequence[int], weights: Sequence[float]) -> np.ndarray:
        """A score for every position (0 for chunks without the terms, and deleted ones)."""
        return self._accumulate(term_ids, weights)[0].astype(np.float32)

    def top(self, term_ids: Sequence[int], weights: Sequence[float], k: int) -> list[tuple[int, float]]:
        """The k best (position, score) pairs with a positive score: score descending,
        then position (deterministic ties) — the same as ranking `dense`, at the cost of
        the postings it must read. Terms are read from the highest bound on their
        contribution (weight * idf * (k1 + 1)) down; once the bounds of the terms left add
        up to less than the k-th best score so far, a chunk none of the terms read holds
        cannot reach the top k, so the rest are only looked up for the chunks already
        found (MaxScore): a common word's long postings are searched, not scanned."""
        term_ids = np.asarray(term_ids, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        if k <= 0 or not len(term_ids) or self.n <= 0:
            return []
        if (weights <= 0).any():
            acc, touched = self._accumulate(term_ids, weights)
            return self._ranked(acc, np.concatenate(touched), k) if touched else []
        bounds = self.idf(term_ids) * weights * (self.k1 + 1)
        norms = self._norms()
        slots = [seg.slot(term_ids) for seg in self.segments]
        order = [i for i in np.argsort(-bounds, kind="stable").tolist()
                 if any(end[i] > start[i] for start, end in slots)]
        acc = np.zeros(self.size, dtype=np.float64)
        found: list[np.ndarray] = []
        read = 0.0
        remaining = float(bounds[order].sum()) if order else 0.0
        theta, rest = 0.0, []
        for n, i in enumerate(order):
            if theta > 0 and remaining < theta:
                rest = order[n:]  # these alone cannot lift a chunk they hold into the top k
                break
            for seg, norm, (start, end) in zip(self.segments, norms, slots):
                docs = seg.docs[start[i] : end[i]]
                tf = seg.tfs[start[i] : end[i]].astype(np.float64)
                where = docs + seg.first if seg.first else docs
                found.append(where[acc[where] == 0])  # first seen now: every contribution is positive
                acc[where] += bounds[i] * tf / (tf + norm[docs])
            read += bounds[i]
            remaining -= bounds[i]
            if remaining < read:  # a k-th best score above what is left is possible: find it
                cand = np.concatenate(found) if len(found) > 1 else found[0]
                found = [cand]
                values = acc[cand] * self._alive()[cand]
                if len(values) >= k:
                    theta = float(np.partition(values, len(values) - k)[len(values) - k])
        if not found:
            return []
        cand = np.concatenate(found) if len(found) > 1 else found[0]
        for i in rest:  # looked up for the chunks found, in postings sorted by chunk
            for seg, norm, (start, end) in zip(self.segments, norms, slots):
                docs = seg.docs[start[i] : end[i]]
                if not len(docs):
                    continue
                if len(cand) * np.log2(len(docs) + 1) > 4 * len(docs):  # cheaper to read them all
                    tf = seg.tfs[start[i] : end[i]].astype(np.float64)
                    acc[docs + seg.first if seg.first else docs] += bounds[i] * tf / (tf + norm[docs])
                    continue
                local = cand - seg.first
                at = np.minimum(np.searchsorted(docs, local), len(docs) - 1)
                hit = docs[at] == local
                tf = seg.tfs[start[i] : end[i]][at[hit]].astype(np.float64)
                acc[cand[hit]] += bounds[i] * tf / (tf + norm[local[hit]])
        return self._ranked(acc, cand, k, unique=True)

    def _alive(self) -> np.ndarray:
        """1.0 for a live position, 0.0 for a deleted one."""
        if self._live is None:
            self._live = np.ones(self.size, dtype=np.float64)
            self._live[self.deleted] = 0.0
        return self._live

    def _ranked(self, acc: np.ndarray, cand: np.ndarray, k: int, unique: bool = False) -> list[tuple[int, float]]:
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
