"""Embeddings from an Ollama server (GPU-backed speed and stronger models), through the
official `ollama` client. Model-specific prefixes are applied for the models that were
trained with them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbedderError
from ..llm.server import ollama_errors, resolve_host
from .base import Embedder, normalise

if TYPE_CHECKING:  # imported when first used: the client is not loaded for other embedders
    import ollama

# model family -> (document prefix, query prefix)
PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_document: ", "search_query: "),
    "nomic-embed": ("search_document: ", "search_query: "),
    "mxbai-embed-large": ("", "Represent this sentence for searching relevant passages: "),
    "snowflake-arctic-embed": ("", "Represent this sentence for searching relevant passages: "),
    "multilingual-e5": ("passage: ", "query: "),
    "e5": ("passage: ", "query: "),
}


def prefixes_for(model: str) -> tuple[str, str]:
    family = model.split(":", 1)[0].split("/")[-1]
    for key in sorted(PREFIXES, key=len, reverse=True):
        if family.startswith(key):
            return PREFIXES[key]
    return "", ""


class OllamaEmbedder(Embedder):
    batch_size = 32

    def __init__(self, model: str, host: str | None = None) -> None:
        if not model:
            raise EmbedderError(
                "give the Ollama model after the colon, e.g. --embedder ollama:nomic-embed-text"
            )
        self.model = model
        self.name = f"ollama:{model}"
        self.host = resolve_host(host)
        self.doc_prefix, self.query_prefix = prefixes_for(model)
        self._client: ollama.Client | None = None
        self._dimension: int | None = None

    @property
    def client(self) -> ollama.Client:
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.host)
        return self._client

    def _embed(self, texts: list[str]) -> np.ndarray:
        with ollama_errors(self.host, self.model, ""):
            response = self.client.embed(model=self.model, input=texts)
        vectors = np.asarray(response.embeddings, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise EmbedderError(f"Ollama returned {len(vectors)} embeddings for {len(texts)} texts")
        self._dimension = vectors.shape[1]
        return normalise(vectors)

    @property
    def dimension(self) -> int:
        if self._dimension is None:  # asked once: `_embed` keeps it
            return int(self._embed(["dimension probe"]).shape[1])
        return self._dimension

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._embed([self.doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text])[0]
