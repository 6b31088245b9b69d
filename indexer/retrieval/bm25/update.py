"""An incremental build's BM25 index: the previous one without the retired chunks, plus
the new ones — at the cost of the change, not of the corpus.

The base segment is kept as it is (its retired chunks marked deleted; its files are linked,
not written), and the delta is rewritten: its chunks that are still live and the new
ones, their terms numbered in the base's vocabulary or, when the base does not have them,
after it. Once the delta and the deleted chunks outgrow a share of the base, everything is
merged into a new base (a full rewrite, so a build pays for it once every tenth of the
corpus changed), and terms no chunk uses any more leave the vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .lookup import IdTable, Vocabulary
from .postings import Ints, Postings, Segment

TermIds = NDArray[np.integer[Any]]  # a chunk's term ids, of whichever integer width


@dataclass
class Previous:
    """What the update reads of the index it starts from."""

    postings: Postings
    ids: IdTable
    vocab: Vocabulary


@dataclass
class Fresh:
    """The new chunks (a `BM25Builder`'s): their ids and forward index (`forward`)."""

    ids: list[str]
    terms: list[str]
    flat: NDArray[np.int32]
    offsets: Ints


@dataclass
class Kept:
    """The base kept (its retired chunks marked `deleted`) and a new delta after it."""

    ids: IdTable
    vocab: Vocabulary
    segments: list[Segment]
    deleted: Ints


@dataclass
class Merged:
    """Everything live as the forward index of one new base (`BM25Index.from_forward`)."""

    ids: list[str]
    terms: list[str]
    flat: NDArray[np.int32]
    offsets: Ints


def updated(index: Previous, drop: set[str], fresh: Fresh, share: float) -> Kept | Merged:
    """`index` without the chunks `drop`ped, plus `fresh`'s."""
    base, *rest = index.postings.segments
    base_n, v_base = len(base), index.vocab.base
    dropped = index.ids.positions(sorted(drop)) if drop else np.zeros(0, np.int64)
    dropped = dropped[dropped >= 0]
    gone = np.union1d(index.postings.deleted, dropped)
    deleted = gone[gone < base_n]
    extra: dict[str, int] = {}  # terms the base lacks -> their id (after the base's)

    def extra_id(term: str) -> int:
        return extra.setdefault(term, v_base + len(extra))

    ids: list[str] = []
    parts: list[TermIds] = []
    if rest:  # the delta's chunks still live, renumbered
        _kept_delta(index, len(rest[0]), gone, extra_id=extra_id, ids=ids, parts=parts)
    _add_fresh(index, fresh, extra_id, ids, parts)
    lengths = np.array([len(p) for p in parts], dtype=np.int64)
    flat = np.concatenate(parts).astype(np.int32) if parts else np.zeros(0, np.int32)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    terms = list(extra)
    if len(ids) + len(deleted) > share * base_n:
        return _merged(index, base, deleted, ids=ids, extra=terms, flat=flat, offsets=offsets)
    delta = Segment.from_forward(flat, offsets, first=base_n)
    table = IdTable(index.ids.ids, index.ids.ordered, index.ids.rank, extra=ids)
    vocab = Vocabulary(index.vocab.data, index.vocab.offsets, extra=terms)
    return Kept(table, vocab, [base, delta], deleted)


def _kept_delta(
    index: Previous,
    size: int,
    gone: Ints,
    extra_id: Callable[[str], int],
    ids: list[str],
    parts: list[TermIds],
) -> None:
    """The delta's chunks not `gone` (of `size`), their terms renumbered (`extra_id` for the
    terms the base lacks), appended to `ids` and `parts`."""
    base_n, v_base = len(index.postings.segments[0]), index.vocab.base
    remap = np.array([extra_id(t) for t in index.vocab.extra], dtype=np.int64)
    for pos in range(base_n, base_n + size):
        if np.searchsorted(gone, pos) < len(gone) and gone[np.searchsorted(gone, pos)] == pos:
            continue
        terms = index.postings.doc_terms(pos).astype(np.int64)
        high = terms >= v_base
        if high.any():
            terms = terms.copy()
            terms[high] = remap[terms[high] - v_base]
        parts.append(terms)
        ids.append(index.ids[pos])


def _add_fresh(
    index: Previous,
    fresh: Fresh,
    extra_id: Callable[[str], int],
    ids: list[str],
    parts: list[TermIds],
) -> None:
    """`fresh`'s chunks, their terms numbered in the index's vocabulary (`extra_id` for the
    terms it lacks), appended to `ids` and `parts`."""
    v_base = index.vocab.base
    fresh_terms, fresh_flat, fresh_offsets = fresh.terms, fresh.flat, fresh.offsets
    found = [index.vocab.find(t) for t in fresh_terms]
    fresh_map = np.array(
        [f if 0 <= f < v_base else extra_id(t) for f, t in zip(found, fresh_terms)], dtype=np.int64
    )
    for i in range(len(fresh.ids)):
        parts.append(fresh_map[fresh_flat[fresh_offsets[i] : fresh_offsets[i + 1]]])
    ids.extend(fresh.ids)


def _merged(
    index: Previous,
    base: Segment,
    deleted: Ints,
    ids: list[str],
    extra: list[str],
    flat: NDArray[np.int32],
    offsets: Ints,
) -> Merged:
    """Everything live in one new base: the base's kept chunks, then the delta's."""
    keep = np.ones(len(base), dtype=bool)
    keep[deleted] = False
    lengths: Ints = np.diff(base.offsets)
    base_terms = np.asarray(base.terms)[np.repeat(keep, lengths)]
    all_flat = np.concatenate([base_terms.astype(np.int64), flat.astype(np.int64)])
    all_offsets = np.concatenate(
        ([0], np.cumsum(np.concatenate([lengths[keep], np.diff(offsets)])))
    ).astype(np.int64)
    used = np.unique(all_flat)  # terms still in use, by their old id
    names = [
        index.vocab.term(int(t)) if t < index.vocab.base else extra[int(t) - index.vocab.base]
        for t in used.tolist()
    ]
    renumber = np.searchsorted(used, all_flat).astype(np.int32)
    all_ids = [index.ids[int(p)] for p in np.flatnonzero(keep).tolist()] + ids
    return Merged(all_ids, names, renumber, all_offsets)
