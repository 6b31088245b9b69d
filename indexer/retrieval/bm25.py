"""BM25 over a collection's `indexed_text`, kept beside the collection in plain files.

Local Chroma has no sparse search, so each collection gets its own BM25 index, built
at build time and saved in the collection's side folder (`params.json` with a format
version and the sha256 of every file, the vocabulary as JSON, the analysed corpus as `.npy`
arrays; loading checks the sums and never unpickles anything). Two engines score the same BM25 (Lucene's IDF, which is never
negative): `rank-bm25` (default; loops over documents per query term) and `bm25s`
(sparse matrices; ~100x faster on large collections).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..text.analyzer import Analyzer
from ..errors import IndexerError, UsageError

FORMAT = 2  # 2: params.json holds the sha256 of every file (and of itself)
ENGINES = ("rank-bm25", "bm25s")
SIDE = "bm25"  # the side folder (of each version) the index is saved in
K1 = 1.5
B = 0.75


def _lucene_okapi(corpus: list[list[int]], k1: float, b: float):
    """rank-bm25's BM25Okapi with Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5))."""
    from rank_bm25 import BM25Okapi

    class LuceneOkapi(BM25Okapi):
        def _calc_idf(self, nd):
            for word, freq in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

    return LuceneOkapi(corpus, k1=k1, b=b)


def load_or_rebuild(store, entry, engine: str | None = None, on_repair=None) -> BM25Index:
    """The BM25 index of a live version, from its side folder; when the folder is missing
    (a machine that did not build it) or damaged, it is rebuilt from the records the
    version holds, and saved where possible (a read-only index keeps it in memory)."""
    folder = store.side_path(entry, SIDE)
    problem = ""
    if (folder / "params.json").exists():
        try:
            return BM25Index.load(folder, engine, expected=entry.chunks)
        except IndexerError as exc:
            if isinstance(exc, UsageError):
                raise
            problem = str(exc)
    builder = BM25Builder(Analyzer.from_dict(entry.extra.get("analyzer", {})))
    ids, texts = [], []
    for chunk, meta in store.scan(entry):
        ids.append(chunk.id)
        texts.append(meta.get("indexed_text", ""))
        if len(ids) >= 2000:
            builder.add(ids, texts)
            ids, texts = [], []
    builder.add(ids, texts)
    index = builder.finish(engine or entry.extra.get("bm25_engine", "rank-bm25"))
    try:
        index.save(folder)
    except OSError:
        pass  # read-only index: keep it in memory
    if problem and on_repair:
        on_repair(f"rebuilt the BM25 index from the stored records ({problem})")
    return index


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def _params_digest(params: dict) -> str:
    """The checksum of params.json itself (everything in it but the checksums)."""
    rest = {k: v for k, v in params.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode("utf-8")).hexdigest()


def _verified(folder: Path, name: str, sums: dict, keep: bool = True) -> bytes:
    """A side file's bytes, checked against the sha256 saved with it (with `keep=False`,
    hashed in blocks and not kept)."""
    path = folder / name
    if keep:
        data = path.read_bytes()
        digest = hashlib.sha256(data)
    else:
        data, digest = b"", hashlib.sha256()
        with open(path, "rb") as fh:
            while block := fh.read(1 << 22):
                digest.update(block)
    if digest.hexdigest() != sums.get(name):
        raise IndexerError(f"the BM25 index in {folder} is damaged ({name} does not match its checksum)")
    return data


def document_frequencies(terms: np.ndarray, offsets: np.ndarray, vocabulary: int) -> np.ndarray:
    """How many chunks contain each term, from the flat term ids and per-chunk offsets."""
    if not len(terms):
        return np.zeros(vocabulary, dtype=np.int64)
    docs = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    pairs = np.unique(docs * vocabulary + terms.astype(np.int64))
    return np.bincount(pairs % vocabulary, minlength=vocabulary)


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

    @classmethod
    def merged(cls, previous: BM25Index, drop: set[str], fresh: BM25Builder) -> BM25Builder:
        """The previous version's index without the `drop`ped chunks, plus the chunks of
        `fresh` (an incremental build: cost in proportion to the change, not the corpus,
        apart from array copies). Terms no chunk uses any more leave the vocabulary."""
        keep = np.array([cid not in drop for cid in previous.ids], dtype=bool)
        lengths = np.diff(previous.offsets)
        kept_lengths = lengths[keep]
        owner = np.repeat(np.arange(len(previous.ids)), lengths)  # the chunk each term belongs to
        old_terms = previous.terms[keep[owner]].astype(np.int64) if len(owner) else np.zeros(0, dtype=np.int64)
        used = np.unique(old_terms)
        out = cls(fresh.analyzer)
        out.vocab = {previous.vocab[t]: i for i, t in enumerate(used.tolist())}
        remap = np.full(len(previous.vocab), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        out.flat = array("i", remap[old_terms].astype(np.int32).tobytes()) if len(old_terms) else array("i")
        out.offsets = array("q", np.concatenate(([0], np.cumsum(kept_lengths))).astype(np.int64).tobytes())
        out.ids = [cid for cid, k in zip(previous.ids, keep.tolist()) if k]
        fresh_vocab = list(fresh.vocab)
        fresh_map = np.array([out.vocab.setdefault(t, len(out.vocab)) for t in fresh_vocab], dtype=np.int64)
        fresh_terms = np.frombuffer(fresh.flat, dtype=np.int32).astype(np.int64)
        if len(fresh_terms):
            out.flat.extend(fresh_map[fresh_terms].astype(np.int32).tolist())
        base = out.offsets[-1]
        out.offsets.extend((np.frombuffer(fresh.offsets, dtype=np.int64)[1:] + base).tolist())
        out.ids.extend(fresh.ids)
        return out

    def finish(self, engine: str = "rank-bm25", k1: float = K1, b: float = B) -> BM25Index:
        index = BM25Index(
            self.ids, list(self.vocab), np.frombuffer(self.flat, dtype=np.int32).copy(),
            np.frombuffer(self.offsets, dtype=np.int64).copy(), self.analyzer, engine, k1, b,
        )
        if engine == "bm25s":
            index._bm25s = index._build_bm25s()
        return index


class BM25Index:
    """A BM25 index over chunks: ids in collection order, analysed terms per chunk."""

    def __init__(
        self,
        ids: list[str],
        vocab: list[str],
        terms: np.ndarray,
        offsets: np.ndarray,
        analyzer: Analyzer,
        engine: str = "rank-bm25",
        k1: float = K1,
        b: float = B,
        bm25s_index=None,
    ) -> None:
        if engine not in ENGINES:
            raise UsageError(f"unknown BM25 engine {engine!r}; use one of {', '.join(ENGINES)}")
        self.ids = ids
        self.vocab = vocab
        self.term_of = {t: i for i, t in enumerate(vocab)}
        self.terms = terms
        self.offsets = offsets
        self.analyzer = analyzer
        self.engine = engine
        self.k1 = k1
        self.b = b
        self._bm25s = bm25s_index
        self._okapi = None
        self._df: np.ndarray | None = None
        self._position: dict[str, int] | None = None

    # -- building --------------------------------------------------------------------------
    @classmethod
    def build(
        cls, ids: Sequence[str], texts: Sequence[str], analyzer: Analyzer, engine: str = "rank-bm25",
        k1: float = K1, b: float = B,
    ) -> BM25Index:
        builder = BM25Builder(analyzer)
        builder.add(ids, texts)
        return builder.finish(engine, k1, b)

    def _doc_terms(self) -> list[list[int]]:
        flat = self.terms.tolist()
        off = self.offsets.tolist()
        return [flat[off[i] : off[i + 1]] for i in range(len(self.ids))]

    def _build_bm25s(self):
        try:
            import bm25s
        except ImportError:
            raise UsageError("the bm25s engine needs the bm25s package: pip install 'indexer[fast]'") from None
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene", idf_method="lucene")
        docs = self._doc_terms()
        scores = model.build_index_from_ids(
            unique_token_ids=list(range(len(self.vocab))), corpus_token_ids=docs, show_progress=False
        )
        model.scores = scores
        model.vocab_dict = {t: i for i, t in enumerate(self.vocab)}
        model.unique_token_ids_set = set(range(len(self.vocab)))
        return model

    # -- files -----------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the files, then `params.json` with their sha256 (and its own, over the
        rest of it): a file that is well-formed but not what was written is caught on load."""
        folder.mkdir(parents=True, exist_ok=True)
        files = {"terms.npy": _npy(self.terms), "offsets.npy": _npy(self.offsets),
                 "vocab.json": json.dumps(self.vocab, ensure_ascii=False).encode("utf-8"),
                 "ids.json": json.dumps(self.ids).encode("utf-8")}
        if self.engine == "bm25s" and self._bm25s is not None:
            for key in ("data", "indices", "indptr"):
                files[f"bm25s_{key}.npy"] = _npy(np.asarray(self._bm25s.scores[key]))
        for name, data in files.items():
            (folder / name).write_bytes(data)
        params = {
            "format": FORMAT, "engine": self.engine, "k1": self.k1, "b": self.b,
            "analyzer": self.analyzer.to_dict(), "documents": len(self.ids), "vocabulary": len(self.vocab),
        }
        params["sha256"] = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
        params["sha256"]["params"] = _params_digest(params)
        (folder / "params.json").write_text(json.dumps(params, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, engine: str | None = None, expected: int | None = None) -> BM25Index:
        """Load a saved index; `engine` may differ from the one it was built with. Damaged
        files (unreadable, truncated, not matching their checksums, inconsistent with each
        other or with the `expected` number of chunks) raise IndexerError:
        `load_or_rebuild` then rebuilds them. Each file is read once and hashed as read
        (sha256, ~1-2 GB/s)."""
        try:
            params = json.loads((folder / "params.json").read_text(encoding="utf-8"))
            if params.get("format") != FORMAT:
                raise IndexerError(f"the BM25 index in {folder} has format {params.get('format')}")
            sums = params["sha256"]
            if sums.get("params") != _params_digest(params):
                raise IndexerError(f"the BM25 index in {folder} is damaged (params.json does not match its checksum)")
            raw = {name: _verified(folder, name, sums) for name in ("ids.json", "vocab.json", "terms.npy", "offsets.npy")}
            ids = json.loads(raw["ids.json"])
            vocab = json.loads(raw["vocab.json"])
            terms = np.load(io.BytesIO(raw.pop("terms.npy")), allow_pickle=False)
            offsets = np.load(io.BytesIO(raw.pop("offsets.npy")), allow_pickle=False)
            analyzer = Analyzer.from_dict(params["analyzer"])
            k1, b = float(params["k1"]), float(params["b"])
            index_engine = engine or params["engine"]
            stored_bm25s = index_engine == "bm25s" and (folder / "bm25s_data.npy").exists()
            if stored_bm25s:  # memory-mapped below: hashed here, in blocks
                for key in ("data", "indices", "indptr"):
                    _verified(folder, f"bm25s_{key}.npy", sums, keep=False)
        except IndexerError:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError) as exc:
            raise IndexerError(f"the BM25 index in {folder} is damaged ({exc.__class__.__name__})") from None
        consistent = (
            isinstance(ids, list) and isinstance(vocab, list) and offsets.ndim == 1 and terms.ndim == 1
            and len(offsets) == len(ids) + 1 and (not len(offsets) or (offsets[0] == 0 and offsets[-1] == len(terms)))
            and bool(np.all(np.diff(offsets) >= 0)) and (not len(terms) or (terms.min() >= 0 and terms.max() < len(vocab)))
            and (expected is None or expected == len(ids))
        )
        if not consistent:
            raise IndexerError(f"the BM25 index in {folder} is damaged (its files disagree)")
        index = cls(ids, vocab, terms, offsets, analyzer, index_engine, k1, b)
        if index.engine == "bm25s":
            index._bm25s = index._load_bm25s(folder, params) if stored_bm25s else index._build_bm25s()
        return index

    def _load_bm25s(self, folder: Path, params: dict):
        try:
            import bm25s
        except ImportError:
            raise UsageError("the bm25s engine needs the bm25s package: pip install 'indexer[fast]'") from None
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene", idf_method="lucene")
        model.scores = {
            "data": np.load(folder / "bm25s_data.npy", allow_pickle=False, mmap_mode="r"),
            "indices": np.load(folder / "bm25s_indices.npy", allow_pickle=False, mmap_mode="r"),
            "indptr": np.load(folder / "bm25s_indptr.npy", allow_pickle=False, mmap_mode="r"),
            "num_docs": len(self.ids),
        }
        model.vocab_dict = self.term_of
        model.unique_token_ids_set = set(range(len(self.vocab)))
        model.nonoccurrence_array = None  # set by bm25s only for BM25L / BM25+
        return model

    # -- searching -------------------------------------------------------------------------
    def query_terms(self, query: str) -> list[int]:
        return [self.term_of[t] for t in self.analyzer(query) if t in self.term_of]

    def position(self, chunk_id: str) -> int:
        """The position of a chunk id in this index."""
        if self._position is None:
            self._position = {cid: i for i, cid in enumerate(self.ids)}
        return self._position[chunk_id]

    @property
    def df(self) -> np.ndarray:
        """Document frequency of every term (computed once, on first use)."""
        if self._df is None:
            self._df = document_frequencies(self.terms, self.offsets, len(self.vocab))
        return self._df

    def coverage(self, query: str, positions: Sequence[int]) -> list[float]:
        """For each chunk position, the share of the query's IDF mass (Lucene IDF of its
        distinct terms, unknown terms counting as the rarest) that the chunk contains: 1.0
        when every query term is in it, near 0 when it shares only common words. How well
        a BM25 match covers the question, whatever the scale of its score."""
        analysed = list(dict.fromkeys(self.analyzer(query)))
        if not analysed or not len(positions):
            return [0.0 for _ in positions]
        n = max(len(self.ids), 1)
        rare = math.log(1 + (n + 0.5) / 0.5)
        known = np.array([self.term_of[t] for t in analysed if t in self.term_of], dtype=np.int64)
        df = self.df[known] if len(known) else np.zeros(0)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        total = float(idf.sum()) + rare * (len(analysed) - len(known))
        out = []
        for p in positions:
            present = np.isin(known, self.terms[self.offsets[p] : self.offsets[p + 1]])
            out.append(float(idf[present].sum()) / total if total > 0 else 0.0)
        return out

    def scores(self, query: str) -> np.ndarray:
        """A BM25 score for every chunk (same ranking on both engines)."""
        terms = self.query_terms(query)
        if not terms or not self.ids:
            return np.zeros(len(self.ids), dtype=np.float32)
        if self.engine == "bm25s":
            return np.asarray(self._bm25s.get_scores_from_ids(terms), dtype=np.float32) * (self.k1 + 1)
        if self._okapi is None:
            self._okapi = _lucene_okapi(self._doc_terms(), self.k1, self.b)
        return np.asarray(self._okapi.get_scores(terms), dtype=np.float32)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top k (position, score) pairs with a positive score, best first."""
        scores = self.scores(query)
        if k <= 0 or not len(scores):
            return []
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # score desc, then position: deterministic ties
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
