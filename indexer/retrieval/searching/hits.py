"""From ranked hits to what a person sees: one hit per text, and parent sections in place
of the children that found them."""

from __future__ import annotations

from collections.abc import Callable

from ...types import Chunk, Hit


def distinct(hits: list[Hit]) -> list[Hit]:
    """The hits less those whose text an earlier hit has (byte-identical files, a passage
    repeated): the first is kept and lists the other documents in `same_text`; ranks are
    renumbered."""
    first: dict[str, Hit] = {}
    out: list[Hit] = []
    for hit in hits:
        key = hit.chunk.hash or hit.chunk.text
        kept = first.get(key)
        if kept is None:
            first[key] = hit
            hit.rank = len(out) + 1
            out.append(hit)
        elif hit.chunk.doc_id != kept.chunk.doc_id and hit.chunk.doc_id not in kept.same_text:
            kept.same_text.append(hit.chunk.doc_id)
    return out


def to_parents(
    hits: list[Hit], fetch_parents: Callable[[list[str]], dict[str, Chunk]]
) -> list[Hit]:
    """Child hits mapped to their parents, each parent at its best child's rank."""
    order: list[str] = []
    best: dict[str, Hit] = {}
    for hit in hits:
        pid = hit.chunk.parent_id
        if not pid:
            continue
        if pid not in best:
            order.append(pid)
            best[pid] = hit
            hit.child_ids = [hit.chunk.id]
        else:
            best[pid].child_ids.append(hit.chunk.id)
    parents = fetch_parents(order)
    out: list[Hit] = []
    for pid in order:
        if pid in parents:
            child = best[pid]
            out.append(
                Hit(
                    rank=len(out) + 1,
                    score=child.score,
                    chunk=parents[pid],
                    embedding_rank=child.embedding_rank,
                    embedding_score=child.embedding_score,
                    bm25_rank=child.bm25_rank,
                    bm25_score=child.bm25_score,
                    child_ids=child.child_ids,
                    exact=child.exact,
                    match=child.match,
                    search_score=child.search_score,
                )
            )
    return out
