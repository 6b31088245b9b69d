"""What a build measures of its embedder on the collection it made (`retrieval.worth`),
before the version is published, so the default search of the new version narrows the
embedding share where the embedder reads this collection poorly.

A full build measures; an incremental one keeps the live version's measurement while the
collection stays about the size it was measured at (a watcher's saves cost nothing); an
unchanged build measures a collection built before measurements existed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..embeddings import CachedEmbedder
from ..retrieval.bm25.index import BM25Index
from ..retrieval.searching.snapshot import Snapshot
from ..retrieval.worth import (
    COMMON,
    DEPTH,
    MIN_CHUNKS,
    PROBES,
    Probe,
    make_probes,
    reciprocal_rank,
)
from ..store import Entry, Store

GROWTH = 2.0  # re-measured when the collection grew or shrank by this factor since


def measured(
    store: Store, entry: Entry, embedder: CachedEmbedder, old: Entry | None = None
) -> dict:
    """The measurement for `entry` (a version about to be published): `old`'s when it
    has one and the collection is about the same size, else measured now ({}: too small)."""
    if old is not None:
        kept = (old.extra.get("fusion") or {}).get("measured")
        if kept and old.chunks and 1 / GROWTH <= entry.chunks / old.chunks <= GROWTH:
            return kept
    return measure(Snapshot.of(store, entry, embedder=lambda: embedder))


def measure_unchanged(store: Store, entry: Entry, embedder: CachedEmbedder) -> None:
    """An unchanged build of a collection built before measurements (or measured when it
    was too small to tell): measure it and store the measurement on the live entry (the
    caller holds the build lease)."""
    fusion = entry.extra.get("fusion")
    if isinstance(fusion, dict) and not fusion.get("measured"):
        found = measure(Snapshot.of(store, entry, embedder=lambda: embedder))
        if found:  # {}: too small to tell, as before
            extra = {**entry.extra, "fusion": {**fusion, "measured": found}}
            store.catalogue.publish(replace(entry, extra=extra))


def measure(snapshot: Snapshot, n: int = PROBES, seed: int = 0) -> dict[str, float]:
    """The embedding side's worth on one version of a collection: the probes' MRR@10 on
    each side, their ratio and the factor on the embedding share (`share`). {} when the
    collection is too small to tell."""
    bm25 = snapshot.parts.bm25
    ids = [bm25.ids[i] for i in range(len(bm25.ids)) if not bm25.postings.is_deleted(i)]
    if len(ids) < MIN_CHUNKS:
        return {}
    common = _common_words(bm25)

    def text_of(chosen: list[str]) -> dict[str, str]:
        return {cid: c.text for cid, c in snapshot.parts.fetch(chosen).items()}

    probes = make_probes(ids, text_of, common, n, seed)
    if len(probes) < MIN_CHUNKS // 2:
        return {}
    # one batch, remembered by the model
    snapshot.parts.embedder.embed_queries([p.query for p in probes])
    sides = snapshot.sides
    dense = _mean_rr(probes, sides.nearest)
    sparse = _mean_rr(probes, sides.matching)
    ratio = dense / sparse if sparse > 0 else 1.0
    return {
        "probes": len(probes),
        "embedding_mrr": round(dense, 3),
        "bm25_mrr": round(sparse, 3),
        "ratio": round(ratio, 3),
    }


def _common_words(bm25: BM25Index) -> Callable[[str], bool]:
    """Whether a word is too common to make a probe (in more than COMMON of the chunks,
    or unknown to the index); remembered, since words repeat across the probed chunks."""
    limit = COMMON * len(bm25)
    known: dict[str, bool] = {}

    def common(word: str) -> bool:
        if word not in known:
            terms = bm25.query_terms(word)
            known[word] = not terms or any(
                t >= 0 and bm25.postings.df([t])[0] > limit for t in terms
            )
        return known[word]

    return common


def _mean_rr(probes: list[Probe], side: Callable[[str, int], list[tuple[str, float]]]) -> float:
    """The probes' mean reciprocal rank of their target in one side's candidates."""
    total = sum(reciprocal_rank([cid for cid, _ in side(p.query, DEPTH)], p.target) for p in probes)
    return total / len(probes)
