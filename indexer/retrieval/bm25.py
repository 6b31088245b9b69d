"""BM25 over a collection's `indexed_text`, kept beside the collection in plain files.

Local Chroma has no sparse search, so each collection gets its own BM25 index, built at
build time and saved in the collection's side folder as arrays a query maps instead of
reading (`bm25_files`): the postings (`postings`), the sorted vocabulary and the chunk ids
(`lookup`). An incremental build adds a small delta segment and marks retired chunks
deleted, and links the unchanged base into its version's folder; the delta is merged into
a new base once it outgrows a tenth of it.

Engines score the same BM25 (Lucene's IDF, which is never negative) and rank identically:
`postings` (ours: the query's postings only, memory-mapped), `rank-bm25` (the reference:
loops over every chunk per query term, built in memory on first use) and `bm25s` (sparse
matrices, `pip install 'indexer[fast]'`, built in memory on load). `auto`, the default,
is `postings` at every size: it was measured faster than rank-bm25 from the smallest
collections on (docs/benchmarks.md, "Scale"), loads in milliseconds, and needs numpy only.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import IndexerError, UsageError
from ..text.analyzer import Analyzer
from . import bm25_files as files
from .lookup import IdTable, Vocabulary, blob
from .postings import SEGMENT_ARRAYS, Postings, Segment

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


def load_or_rebuild(store, entry, engine: str | None = None, on_repair=None, check_all: bool = False) -> BM25Index:
    """The BM25 index of a live version, from its side folder; when the folder is missing
    (a machine that did not build it: a reader of a Chroma server) or damaged, it is
    rebuilt from the records the version holds and saved there (a read-only index keeps
    it in memory). `check_all`: hash every file (a build does)."""
    folder = store.side.path(entry, SIDE)
    problem = ""
    if (folder / "params.json").exists():
        try:
            return BM25Index.load(folder, engine, expected=entry.chunks, check_all=check_all)
        except IndexerError as exc:
            if isinstance(exc, UsageError):
                raise
            problem = str(exc)
    index = None if problem else _caught_up(store, entry, engine)
    if index is None:
        index = _rebuilt(store, entry, engine)
    try:
        index.save(folder)
        store.side.prune(entry)  # a reader's older generations
    except OSError:
        pass  # read-only index: keep it in memory
    if problem and on_repair:
        on_repair(f"rebuilt the BM25 index from the stored records ({problem})")
    return index


def _caught_up(store, entry, engine: str | None) -> BM25Index | None:
    """A reader's index of an earlier generation of the same collection, brought up to date:
    the records the later generations wrote added, those they retired (the catalogue lists
    them per generation) dropped — at the cost of the change. None when there is no such
    index, or the catalogue no longer lists every generation since (a reader that lagged
    past the grace period), or the result disagrees with the catalogue's chunk count."""
    for generation, folder in store.side.earlier_paths(entry, SIDE):
        retired = store.side.retired_since(entry, generation)
        if retired is None or not (folder / "params.json").exists():
            continue
        try:
            previous = BM25Index.load(folder, engine)
        except IndexerError:
            continue
        fresh = BM25Builder(previous.analyzer)
        for chunk_id, text in store.records.indexed_texts(entry, after=generation):
            fresh.add([chunk_id], [text])
        index = previous.updated(retired, fresh)
        return index if index.n == entry.chunks else None
    return None


def _rebuilt(store, entry, engine: str | None) -> BM25Index:
    """The index rebuilt from every stored text of the version."""
    builder = BM25Builder(Analyzer.from_dict(entry.extra.get("analyzer", {})))
    ids, texts = [], []
    for chunk_id, text in store.records.indexed_texts(entry):
        ids.append(chunk_id)
        texts.append(text)
        if len(ids) >= 2000:
            builder.add(ids, texts)
            ids, texts = [], []
    builder.add(ids, texts)
    return builder.finish(engine or entry.extra.get("bm25_engine"))


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

    def forward(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(terms in insertion order, term ids per chunk, offsets)."""
        return (list(self.vocab), np.frombuffer(self.flat, dtype=np.int32).copy(),
                np.frombuffer(self.offsets, dtype=np.int64).copy())

    def finish(self, engine: str | None = None, k1: float = K1, b: float = B) -> BM25Index:
        """One base segment, its vocabulary sorted (a term's id is its rank)."""
        terms, flat, offsets = self.forward()
        return BM25Index.from_forward(self.ids, terms, flat, offsets, self.analyzer, engine, k1, b)


class BM25Index:
    """A BM25 index over chunks: ids by position, the vocabulary, the postings engine."""

    def __init__(self, ids: IdTable, vocab: Vocabulary, engine_: Postings, analyzer: Analyzer,
                 engine: str | None = None, k1: float = K1, b: float = B, source: tuple[Path, dict] | None = None):
        self.ids, self.vocab, self.postings = ids, vocab, engine_
        self.analyzer, self.k1, self.b = analyzer, k1, b
        self.requested = engine or "auto"  # what is saved: `auto` chooses again by size on load
        self.engine = engine_for(engine)
        self.source = source  # (folder, sha256 of its files): the base's files, to link rather than write
        self._okapi = None
        self._bm25s = None
        self._live: np.ndarray | None = None
        if self.engine == "bm25s":
            self._bm25s = self._build_bm25s()

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_forward(cls, ids: Sequence[str], terms: list[str], flat: np.ndarray, offsets: np.ndarray,
                     analyzer: Analyzer, engine: str | None = None, k1: float = K1, b: float = B) -> BM25Index:
        """One segment from a forward index whose term ids number `terms` (any order)."""
        order = sorted(range(len(terms)), key=terms.__getitem__)
        rank = np.empty(len(terms), dtype=np.int32)
        rank[np.array(order, dtype=np.int64)] = np.arange(len(terms), dtype=np.int32)
        flat = rank[flat] if len(flat) else flat.astype(np.int32)
        vocab = Vocabulary(*blob([terms[i] for i in order]))
        table = IdTable(*IdTable.arrays_for(list(ids)).values())
        return cls(table, vocab, Postings([Segment.from_forward(flat, offsets)], np.zeros(0, np.int64), k1, b),
                   analyzer, engine, k1, b)

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str], analyzer: Analyzer, engine: str | None = None,
              k1: float = K1, b: float = B) -> BM25Index:
        builder = BM25Builder(analyzer)
        builder.add(ids, texts)
        return builder.finish(engine, k1, b)

    def updated(self, drop: set[str], fresh: BM25Builder, engine: str | None = None) -> BM25Index:
        """This index without the `drop`ped chunks, plus `fresh`'s: the base kept as it is
        (deleted positions marked), the delta rewritten with the new chunks; merged into a
        new base when the delta outgrows MERGE_SHARE of it. Costs the change, not the corpus
        (apart from the rare merge)."""
        from .bm25_update import updated

        index = updated(self, drop, fresh, MERGE_SHARE)
        if engine:  # the engine the build asked for (saved with the index)
            index.requested, index.engine = engine, engine_for(engine)
            index._bm25s = index._build_bm25s() if index.engine == "bm25s" else None
        return index

    # -- files -----------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the arrays (the base hard-linked from the folder it was loaded from when
        an incremental build kept it), then params.json with every file's sha256."""
        base, *rest = self.postings.segments
        arrays: dict[str, np.ndarray] = {}
        linked: dict[str, tuple[Path, str]] = {}
        if self.source is not None and folder.resolve() != self.source[0].resolve():
            src, sums = self.source
            linked = {f"{name}.npy": (src / f"{name}.npy", sums[f"{name}.npy"]) for name in BASE_FILES}
        else:
            arrays.update(base.arrays())
            arrays.update(vocab_bytes=self.vocab.data, vocab_offsets=self.vocab.offsets, ids=self.ids.ids,
                          ids_sorted=self.ids.ordered, ids_rank=self.ids.rank)
        if rest:
            arrays.update({f"delta_{name}": a for name, a in rest[0].arrays().items()})
        if rest or len(self.postings.deleted):
            arrays["delta_ids"] = _strings(self.ids.extra)
            arrays["delta_vocab"] = _strings(self.vocab.extra)
            arrays["deleted"] = self.postings.deleted
        files.write(folder, arrays, linked, {
            "engine": self.requested, "k1": self.k1, "b": self.b, "analyzer": self.analyzer.to_dict(),
            "documents": self.n, "base": len(base), "delta": len(rest[0]) if rest else 0,
            "deleted": int(len(self.postings.deleted)), "vocabulary": len(self.vocab)})

    @classmethod
    def load(cls, folder: Path, engine: str | None = None, expected: int | None = None,
             check_all: bool = False) -> BM25Index:
        """Map a saved index; `engine` may differ from the one it was built with. Damaged
        files (unreadable, not matching their checksums, inconsistent with each other or
        with the `expected` number of chunks) raise IndexerError: `load_or_rebuild` then
        rebuilds them."""
        params = files.read_params(folder)
        files.verify(folder, params, full=check_all)
        try:
            base = Segment({name: files.mapped(folder, name) for name in SEGMENT_ARRAYS})
            segments = [base]
            deleted, extra_ids, extra_terms = np.zeros(0, np.int64), [], []
            if params["delta"] or params["deleted"]:
                deleted = np.asarray(files.mapped(folder, "deleted"), dtype=np.int64)
                extra_ids = [bytes(x).decode("utf-8") for x in files.mapped(folder, "delta_ids")]
                extra_terms = [bytes(x).decode("utf-8") for x in files.mapped(folder, "delta_vocab")]
            if params["delta"]:
                segments.append(Segment({n: files.mapped(folder, f"delta_{n}") for n in SEGMENT_ARRAYS}, len(base)))
            ids = IdTable(*(files.mapped(folder, n) for n in ("ids", "ids_sorted", "ids_rank")), extra=extra_ids)
            vocab = Vocabulary(files.mapped(folder, "vocab_bytes"), files.mapped(folder, "vocab_offsets"), extra_terms)
            k1, b = float(params["k1"]), float(params["b"])
            analyzer = Analyzer.from_dict(params["analyzer"])
            consistent = all(
                len(s.offsets) >= 1 and s.offsets[0] == 0 and s.offsets[-1] == len(s.terms)
                and len(s.indptr) == len(s.keys) + 1 and s.indptr[-1] == len(s.docs) == len(s.tfs) for s in segments
            ) and len(ids) == sum(len(s) for s in segments) and len(ids.ordered) == len(ids.rank) == ids.base
            engine_ = Postings(segments, deleted, k1, b)
        except IndexerError:
            raise
        except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as exc:
            raise files.damaged(folder, exc.__class__.__name__) from None
        if not consistent or len(base) != params["base"] or (expected is not None and expected != engine_.n):
            raise files.damaged(folder, "its files disagree")
        return cls(ids, vocab, engine_, analyzer, engine or params["engine"], k1, b, source=(folder, params["sha256"]))

    # -- the reference engines ---------------------------------------------------------------
    @property
    def live(self) -> np.ndarray:
        """The positions of the live chunks, in order."""
        if self._live is None:
            keep = np.ones(self.postings.size, dtype=bool)
            keep[self.postings.deleted] = False
            self._live = np.flatnonzero(keep)
        return self._live

    def _doc_terms(self) -> list[list[int]]:
        return [self.postings.doc_terms(p).tolist() for p in self.live.tolist()]

    def _build_bm25s(self):
        try:
            import bm25s
        except ImportError:
            raise UsageError("the bm25s engine needs the bm25s package: pip install 'indexer[fast]'") from None
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene", idf_method="lucene")
        model.scores = model.build_index_from_ids(unique_token_ids=list(range(len(self.vocab))),
                                                  corpus_token_ids=self._doc_terms(), show_progress=False)
        model.vocab_dict = {i: i for i in range(len(self.vocab))}
        model.unique_token_ids_set = set(range(len(self.vocab)))
        return model

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

    def __contains__(self, chunk_id: str) -> bool:
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
        known = np.array([t for t in (self.vocab.find(a) for a in analysed) if t >= 0], dtype=np.int64)
        idf = self.postings.idf(known) if len(known) else np.zeros(0)
        total = float(idf.sum()) + rare * (len(analysed) - len(known))
        out = []
        for p in positions:
            present = np.isin(known, self.postings.doc_terms(p))
            out.append(float(idf[present].sum()) / total if total > 0 else 0.0)
        return out

    def holds(self, terms: Sequence[str], positions: Sequence[int]) -> list[int]:
        """For each chunk position, how many of `terms` (analysed terms, such as a query's
        exact terms) it contains."""
        known = np.array([t for t in (self.vocab.find(x) for x in dict.fromkeys(terms)) if t >= 0], dtype=np.int64)
        if not len(known):
            return [0 for _ in positions]
        return [int(np.isin(known, self.postings.doc_terms(p)).sum()) for p in positions]

    def _weights(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        terms, counts = np.unique(np.array(self.query_terms(query), dtype=np.int64), return_counts=True)
        return terms, counts.astype(np.float64)

    def scores(self, query: str) -> np.ndarray:
        """A BM25 score for every position (same ranking on every engine; 0 for deleted)."""
        if self.engine == "postings":
            return self.postings.dense(*self._weights(query))
        out = np.zeros(self.postings.size, dtype=np.float32)
        terms = self.query_terms(query)
        if not terms or not self.n:
            return out
        if self.engine == "bm25s":
            live_scores = np.asarray(self._bm25s.get_scores_from_ids(terms), dtype=np.float32) * (self.k1 + 1)
        else:
            if self._okapi is None:
                self._okapi = _lucene_okapi(self._doc_terms(), self.k1, self.b)
            live_scores = np.asarray(self._okapi.get_scores(terms), dtype=np.float32)
        out[self.live] = live_scores
        return out

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top k (position, score) pairs with a positive score, best first; ties by position."""
        if k <= 0 or not self.n:
            return []
        if self.engine == "postings":
            return self.postings.top(*self._weights(query), k)
        scores = self.scores(query)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # score desc, then position: deterministic ties
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]


def _strings(values: Sequence[str]) -> np.ndarray:
    return np.array([v.encode("utf-8") for v in values], dtype=bytes) if values else np.zeros(0, dtype="S1")


def _lucene_okapi(corpus: list[list[int]], k1: float, b: float):
    """rank-bm25's BM25Okapi with Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5))."""
    from rank_bm25 import BM25Okapi

    class LuceneOkapi(BM25Okapi):
        def _calc_idf(self, nd):
            for word, freq in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

    return LuceneOkapi(corpus, k1=k1, b=b)
