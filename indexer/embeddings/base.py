"""The embedder interface: a name, a dimension, and two methods."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors.

    `embed_documents` and `embed_query` differ for models trained with prefixes
    (e5's `passage:` / `query:`, nomic's `search_document:` / `search_query:`).
    """

    name: str
    batch_size: int = 64

    @property
    @abstractmethod
    def dimension(self) -> int: ...

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dimension) float32, rows L2-normalised."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """(dimension,) float32, L2-normalised."""

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries at once (a build's probes): `embed_query` of each, where a model
        cannot batch them; a local model embeds them in one batch and remembers each."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.embed_query(t) for t in texts])

    def embed_few(self, texts: list[str]) -> np.ndarray:
        """A few short texts a query waits for (the units answer-sized context reads): as
        `embed_documents`, on one thread where the model can choose (a small batch gains
        little from more, and on a busy machine it waits for every one of them)."""
        return self.embed_documents(texts)

    def describe(self) -> str:
        return self.name


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        norm = float(np.linalg.norm(vectors))
        return vectors / norm if norm > 0 else vectors
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
