"""An in-memory copy of a stored collection that searches exactly like `indexer.Index`,
for scoring many question sets against the same collections (tuning the question
generator, bench/labs/agreement_tune.py; the noise ceiling, bench/agreement_ceiling.py),
where a Chroma round trip per question and collection is most of the cost.

`Mirror` is an `Index` whose two Chroma reads are replaced: nearest neighbours by a dot
product over the collection's vectors (read back from the build's embedding cache:
the same float16 vectors the build stored; `MirrorSides`, the handle's `sides`), and
records from a dict loaded once. BM25, fusion, tie-breaking and the parent mapping are
the library's own code. `check()`
(`python -m bench.questions_agreement --check`) compares a mirror's scores with
`indexer.evaluate` on the real questions before any tuning number is trusted. `SetLab` is
one real set with a mirror per strategy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.agreement_scores import MODES, ensure_built, real_count, real_scores, set_paths, strategies_for

from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from indexer.questions.generate import make_questions
from indexer.evaluation.metrics import MRR_DEPTH, reciprocal_rank
from indexer.evaluation.sets import Question, load_questions, resolve
from indexer.evaluation.scoring import TokenSpans, score_question
from indexer.questions.simulate import Knobs
from indexer.loaders import load_documents
from indexer.retrieval import Index, SearchOptions
from indexer.retrieval.ranking import Side
from indexer.retrieval.sides import Sides
from indexer.settings import Settings
from indexer.store import Store

_QUERY_VECTORS: dict[tuple[str, str], np.ndarray] = {}


class Mirror(Index):
    def __init__(self, db: Path, strategy: str, embedder: str = "use-m3") -> None:
        store = Store(Settings.load(db=db))
        entry = store.catalogue.find(strategy, embedder)
        super().__init__(store, entry, get_embedder(embedder), refresh=1e9)
        chunks = sorted(store.records.scan(entry), key=lambda cm: cm[0].id)
        live = self.live
        self.chunk_list = [c for c, _ in chunks if c.id in live]
        self.by_id = {c.id: c for c in self.chunk_list}
        self.ids = [c.id for c in self.chunk_list]
        cache = CachedEmbedder(self.embedder, EmbeddingCache(Path(db) / "cache" / "embeddings.sqlite"))
        self.matrix = cache.embed_documents([c.indexed_text for c in self.chunk_list]).astype(np.float32)
        self.parents = {}
        if entry.parents:
            wanted = sorted({c.parent_id for c in self.chunk_list if c.parent_id})
            self.parents = store.records.get(entry, wanted, parents=True)
        self.sides = MirrorSides(self)

    def follow(self, force: bool = False) -> bool:
        return False

    def fetch(self, ids):
        return {i: self.by_id[i] for i in ids if i in self.by_id}

    def fetch_parents(self, ids):
        return {i: self.parents[i] for i in ids if i in self.parents}


class MirrorSides(Sides):
    """The embedding side by a dot product over the mirror's vectors (query vectors
    kept across mirrors); BM25 as the library does it."""

    def __init__(self, mirror: Mirror) -> None:
        super().__init__(mirror)
        self.mirror = mirror

    def query_vector(self, query: str) -> np.ndarray:
        key = (self.entry.extra.get("analyzer", {}).get("lang", ""), query)
        if key not in _QUERY_VECTORS:
            _QUERY_VECTORS[key] = super().query_vector(query)
        return _QUERY_VECTORS[key]

    def nearest(self, query: str, n: int) -> Side:
        scores = self.mirror.matrix @ self.query_vector(query)
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.mirror.ids[i], float(scores[i])) for i in top]


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
