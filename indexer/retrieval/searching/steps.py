"""A search as a list of steps (`STEPS`), each a function from one `Pass` record to the
next: the candidates of each side, their fusion, the exact-match tiers, the tie order, the
records made hits, parents in place of children, one hit per text, a deeper pass when too
few are left, the embedding's share, the top k.

Every step reads only the record it is handed (the query, the resolved options, the
version's `Snapshot`, what earlier steps found) and returns a new one; none reaches back
into the handle that started the search. A step that needs a deeper search says so
(`Pass.again`) and the driver (`searching.run.search`) starts the list over at that depth.
To add a step (a filter, a reranker), write it as such a function and put it in `STEPS`:
every front door searches through this list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ...types import Hit
from ..exact.rank import rank_exact
from ..options import ResolvedOptions
from .hits import distinct, to_parents
from .ranking import (
    Candidate,
    Side,
    break_ties,
    embedding_share,
    fuse,
    in_rank_order,
    one_side,
    to_hits,
    with_tiers,
)
from .scope import Scope
from .snapshot import Snapshot

FIRST_CHUNKS = 3  # the chunks of a file a query names that join the candidates
# a text repeated all over: look this many times deeper for k distinct ones, no more
DISTINCT_DEPTH = 16


@dataclass(frozen=True, kw_only=True)
class Depth:
    """How deep a pass searches each side (`n` chunks), and how many of its first
    candidates are ordered and made hits (`keep`; None: all)."""

    n: int
    keep: int | None


@dataclass(frozen=True, kw_only=True)
class Pass:
    """One pass of a search through the steps: what it was asked, on which version, and
    what each step found so far."""

    query: str
    options: ResolvedOptions
    snapshot: Snapshot
    depth: Depth
    dense: Side = field(default_factory=list)
    sparse: Side = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    scope: Scope | None = None  # the documents the search is narrowed to
    share: float | None = None
    again: Depth | None = None  # set by a step: search again at this depth

    @property
    def total(self) -> int:
        """How many chunks the search can find (at least 1): the version's, or its
        scope's."""
        held = self.snapshot.parts.bm25 if self.scope is None else self.scope
        return max(len(held), 1)

    @property
    def n(self) -> int:
        """How many candidates each side is asked for in this pass."""
        return min(self.depth.n, self.total)


Step = Callable[[Pass], Pass]


def narrow(p: Pass) -> Pass:
    """The documents the options' path globs match (`scope`): every later step searches
    only those."""
    if not p.options.paths:
        return p
    return replace(p, scope=p.snapshot.parts.scope(p.options.paths))


def side_candidates(p: Pass) -> Pass:
    """Each side the mode reads, searched to the pass's depth (in the scope)."""
    sides = p.snapshot.sides
    dense = sides.dense(p.query, p.n, p.scope) if p.options.mode != "bm25" else []
    sparse = sides.sparse(p.query, p.n, p.scope) if p.options.mode != "embedding" else []
    return replace(p, dense=dense, sparse=sparse)


def fusion(p: Pass) -> Pass:
    """One side's candidates as they rank there, or both fused (the embedding's share
    from the options, or from how well BM25's best match covers the query)."""
    if p.options.mode == "embedding":
        return replace(p, candidates=one_side(p.dense, dense=True))
    if p.options.mode == "bm25":
        return replace(p, candidates=one_side(p.sparse, dense=False))
    alpha = None
    if p.options.fusion != "rrf":
        alpha = embedding_share(p.options, lambda: _coverage(p))
    return replace(p, candidates=fuse(p.dense, p.sparse, p.options, alpha))


def _coverage(p: Pass) -> float:
    return p.snapshot.sides.coverage(p.query, p.n, p.scope)


def exact_tiers(p: Pass) -> Pass:
    """The exact-match tiers (`exact.rank.rank_exact`), in every mode but the embedding
    alone: definitions a symbol query names and the first chunks of a file it names join
    the candidates."""
    if p.options.mode == "embedding":
        return p
    parts = p.snapshot.parts
    bm25 = parts.bm25

    def holds(terms: list[str], ids: list[str]) -> list[int]:
        return bm25.holds(terms, [bm25.position(cid) for cid in ids])

    def doc_of(ids: list[str]) -> dict[str, str]:
        return {cid: c.doc_id for cid, c in parts.fetch(ids).items()}

    def first_chunks(doc: str) -> list[str]:
        if p.scope is not None and doc not in p.scope.documents:
            return []
        return parts.first_chunks(doc, FIRST_CHUNKS)

    def texts(ids: list[str]) -> dict[str, str]:
        return {cid: f"{c.header}\n{c.text}" for cid, c in parts.fetch(ids).items()}

    ids = [c.id for c in p.candidates]
    why: dict[str, str] = {}
    live = bm25 if p.scope is None else p.scope
    extra, tier = rank_exact(
        p.query,
        bm25.analyzer,
        ids,
        exact=parts.exact,
        holds=holds,
        doc_of=doc_of,
        first_chunks=first_chunks,
        live=live,
        why=why,
        texts=texts,
    )
    return replace(p, candidates=with_tiers(p.candidates, extra, tier, why))


def tie_order(p: Pass) -> Pass:
    """Ties broken by document and position, scores made never to rise down the list."""
    ordered = break_ties(p.candidates, p.snapshot.parts.fetch, p.depth.keep)
    return replace(p, candidates=in_rank_order(ordered))


def records(p: Pass) -> Pass:
    """The kept candidates that have a record, as hits."""
    kept = p.candidates[: p.depth.keep] if p.depth.keep is not None else p.candidates
    found = p.snapshot.parts.fetch([c.id for c in kept])
    return replace(p, hits=to_hits(kept, found))


def parents(p: Pass) -> Pass:
    """A parent-child collection's hits: each parent at its best child's rank."""
    if not p.snapshot.entry.parents:
        return p
    return replace(p, hits=to_parents(p.hits, p.snapshot.parts.fetch_parents))


def one_per_text(p: Pass) -> Pass:
    """One hit per text (`hits.distinct`)."""
    return replace(p, hits=distinct(p.hits))


def deeper(p: Pass) -> Pass:
    """Too few hits: the same depth in full tie order when a repeated text hid some,
    else four times deeper (up to DISTINCT_DEPTH times the first depth; a parent-child
    collection up to every chunk), while the sides still have more."""
    k = p.options.k
    if len(p.hits) >= k:
        return p
    if p.depth.keep is not None and k < len(p.candidates):
        return replace(p, again=Depth(n=p.depth.n, keep=None))
    deepest = p.total if p.snapshot.entry.parents else DISTINCT_DEPTH * first_depth(p.options)
    if p.depth.n >= min(deepest, p.total) or len(p.candidates) < p.n:
        return p
    return replace(p, again=Depth(n=p.depth.n * 4, keep=p.depth.keep))


def share(p: Pass) -> Pass:
    """The embedding side's share a hybrid search fused with, on every hit."""
    if p.options.mode != "hybrid":
        return p
    alpha = embedding_share(p.options, lambda: _coverage(p))
    for hit in p.hits:
        hit.embedding_share = alpha
    return replace(p, share=alpha)


def top_k(p: Pass) -> Pass:
    return replace(p, hits=p.hits[: p.options.k])


STEPS: list[Step] = [
    narrow,
    side_candidates,
    fusion,
    exact_tiers,
    tie_order,
    records,
    parents,
    one_per_text,
    deeper,
    share,
    top_k,
]


def first_depth(options: ResolvedOptions) -> int:
    """The depth each side is first searched to."""
    return max(options.k, options.candidates)


def start(query: str, options: ResolvedOptions, snapshot: Snapshot) -> Pass:
    """The first pass of a search: a parent-child collection takes `children_k` children
    at least and orders all of them; otherwise only the first k are ordered."""
    n = first_depth(options)
    if snapshot.entry.parents:
        n = max(n, options.children_k)
        return Pass(query=query, options=options, snapshot=snapshot, depth=Depth(n=n, keep=None))
    depth = Depth(n=n, keep=options.k)
    return Pass(query=query, options=options, snapshot=snapshot, depth=depth)
