"""An in-memory copy of a stored collection that searches exactly like `indexer.Index`,
for tuning the question generator: many generated sets are scored against the same
collections, and a Chroma round trip per question and collection is most of the cost.

`Mirror` is an `Index` whose two Chroma reads are replaced: nearest neighbours by a dot
product over the collection's vectors (read back from the build's embedding cache:
the same float16 vectors the build stored), and records from a dict loaded once. BM25,
fusion, tie-breaking and the parent mapping are the library's own code. `check()` in
questions_agreement.py compares a mirror's scores with `indexer.evaluate` on the real
questions before any tuning number is trusted.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from indexer.evaluation.metrics import MRR_DEPTH, reciprocal_rank
from indexer.evaluation.questions import Question
from indexer.evaluation.run import _score, _TokenSpans
from indexer.retrieval import Index, SearchOptions
from indexer.store import Store

_QUERY_VECTORS: dict[tuple[str, str], np.ndarray] = {}


class Mirror(Index):
    def __init__(self, db: Path, strategy: str, embedder: str = "use-m3") -> None:
        store = Store(db)
        entry = store.find(strategy, embedder)
        super().__init__(store, entry, get_embedder(embedder), refresh=1e9)
        chunks = sorted(store.scan(entry), key=lambda cm: cm[0].id)
        live = self.live
        self.chunk_list = [c for c, _ in chunks if c.id in live]
        self._records = {c.id: c for c in self.chunk_list}
        self.ids = [c.id for c in self.chunk_list]
        cache = CachedEmbedder(self.embedder, EmbeddingCache(Path(db) / "cache" / "embeddings.sqlite"))
        self.matrix = cache.embed_documents([c.indexed_text for c in self.chunk_list]).astype(np.float32)
        self.parents = {}
        if entry.parents:
            wanted = sorted({c.parent_id for c in self.chunk_list if c.parent_id})
            self.parents = store.records(entry, wanted, parents=True)

    def follow(self, force: bool = False) -> bool:
        return False

    def fetch(self, ids):
        return {i: self._records[i] for i in ids if i in self._records}

    def fetch_parents(self, ids):
        return {i: self.parents[i] for i in ids if i in self.parents}

    def query_vector(self, query: str) -> np.ndarray:
        key = (self.entry.extra.get("analyzer", {}).get("lang", ""), query)
        if key not in _QUERY_VECTORS:
            _QUERY_VECTORS[key] = super().query_vector(query)
        return _QUERY_VECTORS[key]

    def _dense(self, query: str, n: int) -> list[tuple[str, float]]:
        scores = self.matrix @ self.query_vector(query)
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.ids[i], float(scores[i])) for i in top]


def first_hits(index: Index, questions: list[Question], spans: _TokenSpans, modes: tuple[str, ...]
               ) -> dict[str, list[int | None]]:
    """Per mode, the rank of each question's first hit in the top MRR_DEPTH (None: none),
    scored by the evaluator's own rule."""
    out: dict[str, list[int | None]] = {m: [] for m in modes}
    for q in questions:
        for mode in modes:
            hits = index.search(q.question, SearchOptions(mode=mode, k=MRR_DEPTH))
            out[mode].append(_score(q, hits, 5, None, spans).first_hit)
    return out


def mrr(ranks: list[int | None]) -> float:
    return sum(reciprocal_rank(r) for r in ranks) / len(ranks) if ranks else 0.0
