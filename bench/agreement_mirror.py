"""An in-memory copy of a stored collection that searches exactly like `indexer.Index`,
for scoring many question sets against the same collections (tuning the question
generator, bench/labs/agreement_tune.py; the noise ceiling, bench/agreement_ceiling.py),
where a Chroma round trip per question and collection is most of the cost.

`Mirror` is an `Index` whose nearest neighbours come from a dot product over the
collection's vectors (read back from the build's embedding cache: the same float16
vectors the build stored; `MirrorSides`, the class its snapshots search each side with). BM25, fusion, tie-breaking and the parent mapping are
the library's own code. `check()`
(`python -m bench.questions_agreement --check`) compares a mirror's scores with
`indexer.evaluate` on the real questions before any tuning number is trusted. `SetLab` is
one real set with a mirror per strategy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.agreement_scores import (
    MODES,
    ensure_built,
    real_count,
    real_scores,
    set_paths,
    strategies_for,
)
from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from indexer.evaluation.metrics import MRR_DEPTH, reciprocal_rank
from indexer.evaluation.scoring import TokenSpans, score_question
from indexer.evaluation.sets import Question, load_questions, resolve
from indexer.loaders import load_documents
from indexer.questions.generate import make_questions
from indexer.questions.simulate import Knobs
from indexer.retrieval import Index, SearchOptions
from indexer.retrieval.searching.ranking import Side
from indexer.retrieval.searching.sides import Sides
from indexer.settings import Settings
from indexer.store import Store

_QUERY_VECTORS: dict[tuple[str, str], np.ndarray] = {}


class Mirror(Index):
    """A stored collection whose embedding side is a dot product over its vectors, held in
    memory (`MirrorSides`); everything else is the library's `Index`."""

    def __init__(self, db: Path, strategy: str, embedder: str = "use-m3") -> None:
        store = Store(Settings.load(db=db))
        entry = store.catalogue.find(strategy, embedder)
        model = get_embedder(embedder)
        live = Index(store, entry, model).live
        chunks = sorted((c for c, _ in store.records.scan(entry) if c.id in live), key=lambda c: c.id)
        cache = CachedEmbedder(model, EmbeddingCache(Path(db) / "cache" / "embeddings.sqlite"))
        matrix = cache.embed_documents([c.indexed_text for c in chunks]).astype(np.float32)
        ids = [c.id for c in chunks]

        def sides(parts, one_shot: bool = False) -> MirrorSides:
            return MirrorSides(parts, matrix=matrix, ids=ids)

        super().__init__(store, entry, model, refresh=1e9, sides=sides)

    def follow(self, force: bool = False) -> bool:
        return False


class MirrorSides(Sides):
    """The embedding side by a dot product over the mirror's vectors (query vectors
    kept across mirrors); BM25 as the library does it."""

    def __init__(self, parts, *, matrix: np.ndarray, ids: list[str]) -> None:
        super().__init__(parts)
        self.matrix, self.ids = matrix, ids

    def query_vector(self, query: str) -> np.ndarray:
        key = (self.entry.extra.get("analyzer", {}).get("lang", ""), query)
        if key not in _QUERY_VECTORS:
            _QUERY_VECTORS[key] = super().query_vector(query)
        return _QUERY_VECTORS[key]

    def nearest(self, query: str, n: int, scope=None) -> Side:
        if scope is not None:  # a narrowed search: the library's way
            return super().nearest(query, n, scope=scope)
        scores = self.matrix @ self.query_vector(query)
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.ids[i], float(scores[i])) for i in top]


def first_hits(index: Index, questions: list[Question], spans: TokenSpans, modes: tuple[str, ...]
               ) -> dict[str, list[int | None]]:
    """Per mode, the rank of each question's first hit in the top MRR_DEPTH (None: none),
    scored by the evaluator's own rule."""
    out: dict[str, list[int | None]] = {m: [] for m in modes}
    for q in questions:
        for mode in modes:
            hits = index.search(q.question, SearchOptions(mode=mode, k=MRR_DEPTH))
            out[mode].append(score_question(q, hits, 5, None, spans).first_hit)
    return out


def mrr(ranks: list[int | None]) -> float:
    return sum(reciprocal_rank(r) for r in ranks) / len(ranks) if ranks else 0.0


class SetLab:
    def __init__(self, name: str) -> None:
        self.name = name
        self.folder, self.questions_path = set_paths(name)
        db = ensure_built(name)
        self.real = real_scores(name, db)
        self.n = real_count(name)
        self.mirrors = {s: Mirror(db, s) for s in strategies_for(name)}
        _, docs = load_documents([self.folder])
        self.docs = {d.doc_id: d for d in docs}
        self.spans = TokenSpans(self.docs)

    def score(self, questions: list[Question]) -> dict[str, float]:
        resolve(questions, self.docs)
        out = {}
        for strategy, mirror in self.mirrors.items():
            ranks = first_hits(mirror, questions, self.spans, MODES)
            out.update({f"{strategy}/{m}": mrr(ranks[m]) for m in MODES})
        return out

    def made(self, knobs: Knobs, seed: int, cap: int) -> list[Question]:
        made = make_questions(self.folder, min(self.n, cap), seed=seed, knobs=knobs)
        return [Question(q["id"], q["question"], q["doc_id"], answer=q["answer"], tags=q["tags"],
                         span=tuple(q["span"])) for q in made.questions]


def check(labs: list[SetLab]) -> None:
    for lab in labs:
        mine = lab.score(load_questions(lab.questions_path))
        worst = max(abs(mine[k] - lab.real[k]) for k in lab.real)
        print(f"{lab.name}: mirror vs indexer.evaluate on the real questions, largest MRR@10 difference {worst:.4f}")
