"""BM25 over a collection's `indexed_text`, kept beside the collection in plain files.

Local Chroma has no sparse search, so each collection gets its own BM25 index, built at
build time and saved in the collection's side folder as arrays a query maps instead of
reading (`bm25.files`): the postings (`postings`), the sorted vocabulary and the chunk ids
(`lookup`). An incremental build adds a small delta segment and marks retired chunks
deleted, and links the unchanged base into its version's folder; the delta is merged into
a new base once it outgrows a tenth of it.

Engines score the same BM25 (Lucene's IDF, which is never negative) and rank identically:
`postings` (ours: the query's postings only, memory-mapped), `rank-bm25` (the reference:
loops over every chunk per query term, built in memory on first use) and `bm25s` (sparse
matrices, `pip install 'indexer-rag[fast]'`, built in memory on load). `auto`, the default,
is `postings` at every size: it was measured faster than rank-bm25 from the smallest
collections on (docs/benchmarks.md, "Scale"), loads in milliseconds, and needs numpy only.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ...errors import UsageError
from ...store import SideFile
from ...text.analyzer import Analyzer
from . import files
from .lookup import IdTable, Vocabulary, blob, strings
from .postings import SEGMENT_ARRAYS, Floats, Ints, Postings, Segment
from .reference import Scorer, build_bm25s, lucene_okapi
from .saved import read_saved

ENGINES = ("auto", "postings", "rank-bm25", "bm25s")
SIDE = "bm25"  # the side folder (of each version) the index is saved in
K1 = 1.5
B = 0.75
MERGE_SHARE = 0.1  # a delta (plus deleted chunks) past this share of the base is merged into it
BASE_FILES = (*SEGMENT_ARRAYS, "vocab_bytes", "vocab_offsets", "ids", "ids_sorted", "ids_rank")


def engine_for(name: str | None) -> str:
    """The engine a name means (`auto`: postings)."""
    name = name or "auto"
    if name not in ENGINES:
        raise UsageError(f"unknown BM25 engine {name!r}; use one of {', '.join(ENGINES)}")
    return "postings" if name == "auto" else name


class BM25Builder:
    """Analyses chunks as they stream by, keeping only term ids (not the texts)."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self.ids: list[str] = []
        self.vocab: dict[str, int] = {}
        # typed arrays: 4 and 8 bytes a term, not a Python int object and a pointer (~36)
        self.flat = array("i")
        self.offsets = array("q", [0])

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        vocab, flat = self.vocab, self.flat
        for chunk_id, text in zip(ids, texts):
            for token in self.analyzer(text):
                flat.append(vocab.setdefault(token, len(vocab)))
            self.offsets.append(len(flat))
            self.ids.append(chunk_id)

    def forward(self) -> tuple[list[str], NDArray[np.int32], Ints]:
        """(terms in insertion order, term ids per chunk, offsets)."""
        return (
            list(self.vocab),
            np.frombuffer(self.flat, dtype=np.int32).copy(),
            np.frombuffer(self.offsets, dtype=np.int64).copy(),
        )

    def finish(self, engine: str | None = None, k1: float = K1, b: float = B) -> BM25Index:
        """One base segment, its vocabulary sorted (a term's id is its rank)."""
        terms, flat, offsets = self.forward()
        return BM25Index.from_forward(
            self.ids,
            terms,
            flat,
            offsets=offsets,
            analyzer=self.analyzer,
            engine=engine,
            k1=k1,
            b=b,
        )


class BM25Index(SideFile):
    """A BM25 index over chunks: ids by position, the vocabulary, the postings engine; a
    side folder of its version (`store.SideFile`)."""

    SIDE: ClassVar[str] = SIDE

    def __init__(
        self,
        ids: IdTable,
        vocab: Vocabulary,
        engine_: Postings,
        analyzer: Analyzer,
        engine: str | None = None,
        k1: float = K1,
        b: float = B,
        source: tuple[Path, dict[str, str]] | None = None,
    ) -> None:
        self.ids, self.vocab, self.postings = ids, vocab, engine_
        self.analyzer, self.k1, self.b = analyzer, k1, b
        self.requested = engine or "auto"  # what is saved: `auto` chooses again by size on load
        self.engine = engine_for(engine)
        self.source = (
            source  # (folder, sha256 of its files): the base's files, to link rather than write
        )
        self._okapi: Scorer | None = None
        self._bm25s: Scorer | None = None
        self._live: Ints | None = None
        if self.engine == "bm25s":
            self._bm25s = self._build_bm25s()

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_forward(
        cls,
        ids: Sequence[str],
        terms: list[str],
        flat: NDArray[np.integer[Any]],
        offsets: Ints,
        analyzer: Analyzer,
        engine: str | None = None,
        k1: float = K1,
        b: float = B,
    ) -> BM25Index:
        """One segment from a forward index whose term ids number `terms` (any order)."""
        order = sorted(range(len(terms)), key=terms.__getitem__)
        rank = np.empty(len(terms), dtype=np.int32)
        rank[np.array(order, dtype=np.int64)] = np.arange(len(terms), dtype=np.int32)
        numbered = rank[flat] if len(flat) else flat.astype(np.int32)
        vocab = Vocabulary(*blob([terms[i] for i in order]))
        table = IdTable(*IdTable.columns_for(list(ids)))
        return cls(
            table,
            vocab,
            Postings([Segment.from_forward(numbered, offsets)], np.zeros(0, np.int64), k1, b),
            analyzer=analyzer,
            engine=engine,
            k1=k1,
            b=b,
        )

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        texts: Sequence[str],
        analyzer: Analyzer,
        engine: str | None = None,
        k1: float = K1,
        b: float = B,
    ) -> BM25Index:
        builder = BM25Builder(analyzer)
        builder.add(ids, texts)
        return builder.finish(engine, k1, b)

    def updated(self, drop: set[str], fresh: BM25Builder, engine: str | None = None) -> BM25Index:
        """This index without the `drop`ped chunks, plus `fresh`'s: the base kept as it is
        (deleted positions marked), the delta rewritten with the new chunks; merged into a
        new base when the delta outgrows MERGE_SHARE of it. Costs the change, not the corpus
        (apart from the rare merge)."""
        from .update import Fresh, Merged, Previous, updated

        previous = Previous(self.postings, self.ids, self.vocab)
        change = updated(previous, drop, Fresh(fresh.ids, *fresh.forward()), MERGE_SHARE)
        if isinstance(change, Merged):
            index = type(self).from_forward(
                change.ids,
                change.terms,
                change.flat,
                offsets=change.offsets,
                analyzer=self.analyzer,
                engine=self.requested,
                k1=self.k1,
                b=self.b,
            )
        else:
            postings = Postings(change.segments, change.deleted, self.k1, self.b)
            index = type(self)(
                change.ids,
                change.vocab,
                postings,
                analyzer=self.analyzer,
                engine=self.requested,
                k1=self.k1,
                b=self.b,
                source=self.source,
            )
        if engine:  # the engine the build asked for (saved with the index)
            index.requested, index.engine = engine, engine_for(engine)
            index._bm25s = index._build_bm25s() if index.engine == "bm25s" else None
        return index

    # -- files -----------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the arrays (the base hard-linked from the folder it was loaded from when
        an incremental build kept it), then params.json with every file's sha256."""
        base, *rest = self.postings.segments
        arrays: dict[str, NDArray[np.generic]] = {}
        linked: dict[str, tuple[Path, str]] = {}
        if self.source is not None and folder.resolve() != self.source[0].resolve():
            src, sums = self.source
            linked = {
                f"{name}.npy": (src / f"{name}.npy", sums[f"{name}.npy"]) for name in BASE_FILES
            }
        else:
            arrays.update(base.arrays())
            arrays.update(
                vocab_bytes=self.vocab.data,
                vocab_offsets=self.vocab.offsets,
                ids=self.ids.ids,
                ids_sorted=self.ids.ordered,
                ids_rank=self.ids.rank,
            )
        if rest:
            arrays.update({f"delta_{name}": a for name, a in rest[0].arrays().items()})
        if rest or len(self.postings.deleted):
            arrays["delta_ids"] = strings(self.ids.extra)
            arrays["delta_vocab"] = strings(self.vocab.extra)
            arrays["deleted"] = self.postings.deleted
        files.write(
            folder,
            arrays,
            linked,
            {
                "engine": self.requested,
                "k1": self.k1,
                "b": self.b,
                "analyzer": self.analyzer.to_dict(),
                "documents": self.n,
                "base": len(base),
                "delta": len(rest[0]) if rest else 0,
                "deleted": int(len(self.postings.deleted)),
                "vocabulary": len(self.vocab),
            },
        )

    @classmethod
    def load(
        cls,
        folder: Path,
        engine: str | None = None,
        expected: int | None = None,
        check_all: bool = False,
    ) -> BM25Index:
        """Map a saved index; `engine` may differ from the one it was built with. Damaged
        files (unreadable, not matching their checksums, inconsistent with each other or
        with the `expected` number of chunks) raise IndexerError: `load_or_rebuild` then
        rebuilds them."""
        params = files.read_params(folder)
        files.verify(folder, params, full=check_all)
        saved = read_saved(folder, params, expected)
        return cls(
            saved.ids,
            saved.vocab,
            saved.postings,
            analyzer=saved.analyzer,
            engine=engine or params["engine"],
            k1=saved.k1,
            b=saved.b,
            source=(folder, params["sha256"]),
        )

    # -- the reference engines ---------------------------------------------------------------
    @property
    def live(self) -> Ints:
        """The positions of the live chunks, in order."""
        if self._live is None:
            keep = np.ones(self.postings.size, dtype=bool)
            keep[self.postings.deleted] = False
            self._live = np.flatnonzero(keep)
        return self._live

    def _doc_terms(self) -> list[list[int]]:
        return [self.postings.doc_terms(p).tolist() for p in self.live.tolist()]

    def _build_bm25s(self) -> Scorer:
        return build_bm25s(self._doc_terms(), len(self.vocab), self.k1, self.b)

    # -- searching -------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Live chunks."""
        return self.postings.n

    def query_terms(self, query: str) -> list[int]:
        found = (self.vocab.find(t) for t in self.analyzer(query))
        return [t for t in found if t >= 0]

    def position(self, chunk_id: str) -> int:
        """The position of a live chunk id in this index (KeyError when it has none)."""
        pos = self.ids.position(chunk_id)
        if pos < 0 or self.postings.is_deleted(pos):
            raise KeyError(chunk_id)
        return pos

    def __len__(self) -> int:
        return self.n

    def __contains__(self, chunk_id: object) -> bool:
        if not isinstance(chunk_id, str):
            return False
        try:
            self.position(chunk_id)
        except KeyError:
            return False
        return True

    def coverage(self, query: str, positions: Sequence[int]) -> list[float]:
        """For each chunk position, the share of the query's IDF mass (Lucene IDF of its
        distinct terms, unknown terms counting as the rarest) that the chunk contains: 1.0
        when every query term is in it, near 0 when it shares only common words. How well
        a BM25 match covers the question, whatever the scale of its score."""
        analysed = list(dict.fromkeys(self.analyzer(query)))
        if not analysed or not len(positions):
            return [0.0 for _ in positions]
        n = max(self.n, 1)
        rare = math.log(1 + (n + 0.5) / 0.5)
        known = self._known(analysed)
        idf = self.postings.idf(known) if len(known) else np.zeros(0)
        total = float(idf.sum()) + rare * (len(analysed) - len(known))
        out: list[float] = []
        for p in positions:
            present = np.isin(known, self.postings.doc_terms(p))
            out.append(float(idf[present].sum()) / total if total > 0 else 0.0)
        return out

    def holds(self, terms: Sequence[str], positions: Sequence[int]) -> list[int]:
        """For each chunk position, how many of `terms` (analysed terms, such as a query's
        exact terms) it contains."""
        known = self._known(dict.fromkeys(terms))
        if not len(known):
            return [0 for _ in positions]
        return [int(np.isin(known, self.postings.doc_terms(p)).sum()) for p in positions]

    def _known(self, terms: Iterable[str]) -> Ints:
        """The ids of the terms the vocabulary has, in their order."""
        found = (self.vocab.find(t) for t in terms)
        return np.array([t for t in found if t >= 0], dtype=np.int64)

    def _weights(self, query: str) -> tuple[Ints, Floats]:
        terms, counts = np.unique(
            np.array(self.query_terms(query), dtype=np.int64), return_counts=True
        )
        return terms, counts.astype(np.float64)

    def scores(self, query: str) -> NDArray[np.float32]:
        """A BM25 score for every position (same ranking on every engine; 0 for deleted)."""
        if self.engine == "postings":
            return self.postings.dense(*self._weights(query))
        out = np.zeros(self.postings.size, dtype=np.float32)
        terms = self.query_terms(query)
        if not terms or not self.n:
            return out
        out[self.live] = self._reference_scores(terms)
        return out

    def _reference_scores(self, terms: list[int]) -> NDArray[np.float32]:
        """The live chunks' scores from a reference engine (bm25s or rank-bm25)."""
        if self._bm25s is not None:
            return np.asarray(self._bm25s(terms), dtype=np.float32) * (self.k1 + 1)
        if self._okapi is None:
            self._okapi = lucene_okapi(self._doc_terms(), self.k1, self.b)
        return np.asarray(self._okapi(terms), dtype=np.float32)

    def search(
        self, query: str, k: int, allowed: NDArray[np.bool_] | None = None
    ) -> list[tuple[int, float]]:
        """Top k (position, score) pairs with a positive score, best first; ties by position.
        `allowed`: only these positions (a mask over `postings.size`) compete."""
        if k <= 0 or not self.n:
            return []
        if self.engine == "postings" and allowed is None:
            return self.postings.top(*self._weights(query), k)
        scores = self.scores(query)
        if allowed is not None:
            scores = np.where(allowed, scores, np.float32(0))
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # score desc, then position: deterministic ties
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
