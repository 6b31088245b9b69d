"""Embedders by name (a registry, like the chunkers'), and a cache-aware wrapper that counts
what it really computed.

    get_embedder("e5-small")            # a registered local model, loaded once per process
    get_embedder("ollama:nomic-embed-text", settings)   # any Ollama model, by prefix
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from ..errors import EmbedderError
from ..settings import DEFAULT_EMBEDDER, Settings, settings_for
from .base import Embedder, normalise
from .cache import EmbeddingCache, stored, text_key

__all__ = [
    "CachedEmbedder",
    "DEFAULT_EMBEDDER",
    "Embedder",
    "EmbeddingCache",
    "REGISTRY",
    "canonical_name",
    "get_embedder",
    "normalise",
    "register",
]

# name -> factory(settings, argument after the colon for prefixed names)
REGISTRY: dict[str, Callable[[Settings, str], Embedder]] = {}
ALIASES = {"use": "use-m3", "e5": "e5-small"}
PREFIXED = {"ollama"}  # names of the form `ollama:<model>`


def register(name: str, prefixed: bool = False):
    """Register an embedder factory under `name` (`prefixed`: names like `name:<model>`)."""

    def decorate(factory):
        REGISTRY[name] = factory
        if prefixed:
            PREFIXED.add(name)
        return factory

    return decorate


@register("use-m3")
def _use(settings: Settings, _arg: str) -> Embedder:
    from .local import USEEmbedder

    return USEEmbedder(settings.cache_dir)


@register("e5-small")
def _e5(settings: Settings, _arg: str) -> Embedder:
    from .local import E5Embedder

    return E5Embedder()


@register("ollama", prefixed=True)
def _ollama(settings: Settings, model: str) -> Embedder:
    from .ollama import OllamaEmbedder

    return OllamaEmbedder(model, settings.ollama_host)


def _known() -> str:
    plain = [n for n in REGISTRY if n not in PREFIXED]
    return ", ".join(plain) + "".join(f", or {p}:<model>" for p in sorted(PREFIXED))


def canonical_name(name: str | None, settings: Settings | None = None) -> str:
    """The canonical embedder name for a user-given one (aliases; None is the settings')."""
    name = (name or (settings.embedder if settings else "") or DEFAULT_EMBEDDER).strip()
    prefix = name.split(":", 1)[0]
    if ":" in name and prefix in PREFIXED:
        return name
    name = ALIASES.get(name, name)
    if name not in REGISTRY or name in PREFIXED:
        raise EmbedderError(f"unknown embedder {name!r}; use one of {_known()}")
    return name


_instances: dict[tuple[str, str], Embedder] = {}
_lock = threading.Lock()


def get_embedder(name: str | None = None, settings: Settings | None = None) -> Embedder:
    """An embedder by name; each is created once per process (and per Ollama host)."""
    settings = settings_for(settings)
    name = canonical_name(name, settings)
    prefix, _, arg = name.partition(":") if name.split(":", 1)[0] in PREFIXED else (name, "", "")
    key = (name, settings.ollama_host if prefix in PREFIXED else "")
    with _lock:
        if key not in _instances:
            _instances[key] = REGISTRY[prefix](settings, arg)
        return _instances[key]


class CachedEmbedder(Embedder):
    """A model as an `Embedder` whose documents go through the cache, in batches,
    counting calls and hits."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.name = embedder.name
        self.computed = 0
        self.cached = 0
        self.seconds = 0.0  # spent inside the model (documents and queries, its loading too)

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
            found.update(self._compute(missing))
        self.computed += len(missing)
        self.cached += len(texts) - len(missing)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _compute(self, missing: dict[bytes, str]) -> list[tuple[bytes, np.ndarray]]:
        """Embed the texts the cache lacks, in the model's batches, and store them: the
        vectors as the cache returns them next time (float16), so a rebuild cuts and
        stores exactly the same whether they were computed now or read back."""
        miss_keys = list(missing)
        step = self.embedder.batch_size
        new: list[tuple[bytes, np.ndarray]] = []
        for i in range(0, len(miss_keys), step):
            batch = miss_keys[i : i + step]
            t0 = time.perf_counter()
            vectors = self.embedder.embed_documents([missing[k] for k in batch])
            self.seconds += time.perf_counter() - t0
            new.extend(zip(batch, vectors))
        if self.cache:
            self.cache.put_many(self.name, new)
            new = [(k, stored(v)) for k, v in new]
        return new

    def warm(self) -> None:
        """Load the model (one tiny text embedded), so the next batch's time is its own."""
        t0 = time.perf_counter()
        try:
            self.embedder.embed_documents(["warm up"])
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.embedder.embed_queries(texts)
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_query(self, text: str) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.embedder.embed_query(text)
        finally:
            self.seconds += time.perf_counter() - t0
