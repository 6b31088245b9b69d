"""Embedders by name, and a cache-aware wrapper that counts what it really computed."""

from __future__ import annotations

import os

import numpy as np

from ..config import ENV_EMBEDDER
from ..errors import EmbedderError
from .base import Embedder, normalise
from .cache import EmbeddingCache, text_key

DEFAULT_EMBEDDER = "use-m3"
ALIASES = {"use": "use-m3", "use-m3": "use-m3", "e5": "e5-small", "e5-small": "e5-small"}

__all__ = [
    "CachedEmbedder", "DEFAULT_EMBEDDER", "Embedder", "EmbeddingCache", "get_embedder", "canonical_name",
    "normalise",
]


def canonical_name(name: str | None) -> str:
    """The canonical embedder name for a user-given one (aliases, env default)."""
    name = (name or os.environ.get(ENV_EMBEDDER) or DEFAULT_EMBEDDER).strip()
    if name.startswith("ollama:"):
        return name
    if name not in ALIASES:
        raise EmbedderError(
            f"unknown embedder {name!r}; use one of use-m3 (default), e5-small, or ollama:<model>"
        )
    return ALIASES[name]


_instances: dict[tuple[str, str | None], Embedder] = {}


def get_embedder(name: str | None = None, ollama_host: str | None = None) -> Embedder:
    """An embedder by name; local models are loaded once per process."""
    name = canonical_name(name)
    key = (name, ollama_host if name.startswith("ollama:") else None)
    if key not in _instances:
        if name.startswith("ollama:"):
            from .ollama import OllamaEmbedder

            _instances[key] = OllamaEmbedder(name.split(":", 1)[1], ollama_host)
        elif name == "e5-small":
            from .local import E5Embedder

            _instances[key] = E5Embedder()
        else:
            from .local import USEEmbedder

            _instances[key] = USEEmbedder()
    return _instances[key]


class CachedEmbedder:
    """Embeds documents through the cache, in batches, counting calls and hits."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.name = embedder.name
        self.computed = 0
        self.cached = 0

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.name, list(set(keys))) if self.cache else {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in found:
                missing.setdefault(key, text)
        if missing:
            miss_keys = list(missing)
            step = self.embedder.batch_size
            new: list[tuple[bytes, np.ndarray]] = []
            for i in range(0, len(miss_keys), step):
                batch = miss_keys[i : i + step]
                vectors = self.embedder.embed_documents([missing[k] for k in batch])
                new.extend(zip(batch, vectors))
            if self.cache:
                self.cache.put_many(self.name, new)
            found.update(new)
        self.computed += len(missing)
        self.cached += len(texts) - len(missing)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)
