"""One search of an opened collection (`Index.search`): each side's candidates to a fixed
depth (`sides`), ranked (`ranking`), looked for deeper until there are k distinct texts —
or, in a parent-child collection, k distinct parents — and made hits.

Every side is searched to at least `candidates` and ties are broken by document and
position, so the top 5 is always the prefix of the top 10. A text comes back once
(`hits.distinct`: its other documents in `same_text`), and scores never rise down the
list (`ranking.in_rank_order`). Parent-child collections are ranked at child level, then
mapped to their parents, duplicates dropped keeping the best rank (`hits.to_parents`).
"""

from __future__ import annotations

from typing import Protocol

from ..errors import CollectionNotFound
from ..store import Entry
from ..types import Chunk, Hit
from .bm25 import BM25Index
from .exact import ExactIndex
from .exact_rank import rank_exact
from .hits import distinct, to_parents
from .options import SearchOptions, resolved
from .ranking import (
    Candidate,
    break_ties,
    embedding_share,
    fuse,
    in_rank_order,
    one_side,
    to_hits,
    with_tiers,
)
from .sides import Sides

# a text repeated all over: look this many times deeper for k distinct ones, no more
DISTINCT_DEPTH = 16
FIRST_CHUNKS = 3  # the chunks of a file a query names that join the candidates


class Searched(Protocol):
    """What a search reads from the handle it runs on (`Index`)."""

    entry: Entry
    sides: Sides

    @property
    def bm25(self) -> BM25Index: ...

    @property
    def exact(self) -> ExactIndex: ...

    def fetch(self, ids: list[str]) -> dict[str, Chunk]: ...

    def fetch_parents(self, ids: list[str]) -> dict[str, Chunk]: ...

    def chunks(self, doc_id: str | None = None) -> list[Chunk]: ...


def search(index: Searched, query: str, options: SearchOptions) -> list[Hit]:
    """The top k hits of `query` under resolved `options`, best first."""
    total = max(len(index.bm25), 1)
    find = _parent_hits if index.entry.parents else _distinct_hits
    hits, n = find(index, query, options, total)
    if options.mode == "hybrid":
        depth = min(n, total)
        share = embedding_share(options, lambda: index.sides.coverage(query, depth))
        for hit in hits:
            hit.embedding_share = share
    return hits[: options.k]


def _distinct_hits(
    index: Searched, query: str, options: SearchOptions, total: int
) -> tuple[list[Hit], int]:
    """At least k hits of distinct texts where the collection has them (of `total`
    chunks), and the depth the sides were searched to: deeper while a text repeated
    among the candidates leaves fewer than k."""
    k = options.k
    n = max(k, resolved(options.candidates, "candidates"))
    deepest = min(total, DISTINCT_DEPTH * n)
    keep: int | None = k
    while True:
        found = ranked(index, query, min(n, total), options, keep)
        hits = distinct(hits_of(index, found[:k]))
        if len(hits) < k < len(found):  # a text repeated: look past the kth candidate
            if keep is not None:
                keep = None  # ...in full tie order
                continue
            hits = distinct(hits_of(index, found))
        if len(hits) >= k or n >= deepest or len(found) < min(n, total):
            return hits, n
        n *= 4  # too few distinct texts among the candidates: look deeper


def _parent_hits(
    index: Searched, query: str, options: SearchOptions, total: int
) -> tuple[list[Hit], int]:
    """A parent-child collection's hits: the children ranked, mapped to their distinct
    parents; deeper (up to every one of the `total` chunks) while there are fewer than k.
    Also returns the depth the sides were searched to."""
    k = options.k
    n = max(
        k, resolved(options.candidates, "candidates"), resolved(options.children_k, "children_k")
    )
    while True:
        found = ranked(index, query, min(n, total), options, None)
        hits = distinct(to_parents(hits_of(index, found), index.fetch_parents))
        if len(hits) >= k or n >= total:
            return hits, n
        n *= 4  # too few distinct parents among the candidates: look deeper


def ranked(
    index: Searched, query: str, n: int, options: SearchOptions, keep: int | None = None
) -> list[Candidate]:
    """The candidates of each side searched to depth n, in the mode's order (in tie order
    up to the `keep`th, when only those are kept), with their exact-match tiers (every
    mode but the embedding alone)."""
    sides = index.sides
    if options.mode == "embedding":
        found = one_side(sides.dense(query, n), dense=True)
    elif options.mode == "bm25":
        found = one_side(sides.sparse(query, n), dense=False)
    else:
        dense, sparse = sides.dense(query, n), sides.sparse(query, n)
        alpha = None
        if options.fusion != "rrf":
            alpha = embedding_share(options, lambda: sides.coverage(query, n))
        found = fuse(dense, sparse, options, alpha)
    if options.mode != "embedding":
        found = with_tiers(found, *exact_tiers(index, query, [c.id for c in found]))
    return in_rank_order(break_ties(found, index.fetch, keep))


def exact_tiers(
    index: Searched, query: str, ids: list[str]
) -> tuple[list[str], dict[str, int], dict[str, str]]:
    """`exact.rank_exact` over the handle's parts: the ids to add (definitions a bare
    symbol query names, the first chunks of a file it names), each id's tier, and what
    put each tiered id there."""
    bm25 = index.bm25

    def holds(terms: list[str], ids: list[str]) -> list[int]:
        return bm25.holds(terms, [bm25.position(cid) for cid in ids])

    def doc_of(ids: list[str]) -> dict[str, str]:
        return {cid: c.doc_id for cid, c in index.fetch(ids).items()}

    def first_chunks(doc: str) -> list[str]:
        try:
            return [c.id for c in index.chunks(doc)[:FIRST_CHUNKS]]
        except CollectionNotFound:
            return []

    def texts(ids: list[str]) -> dict[str, str]:
        return {cid: f"{c.header}\n{c.text}" for cid, c in index.fetch(ids).items()}

    why: dict[str, str] = {}
    extra, tier = rank_exact(
        query, bm25.analyzer, ids, index.exact, holds, doc_of, first_chunks, bm25, why, texts
    )
    return extra, tier, why


def hits_of(index: Searched, found: list[Candidate]) -> list[Hit]:
    """The candidates whose records the handle has, as hits."""
    return to_hits(found, index.fetch([c.id for c in found]))
