"""What every strategy of one `build` call shares (`BuildJob`): where it writes, what
it embeds and analyses with, the files found, and how it reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..embeddings import CachedEmbedder, Embedder, EmbeddingCache
from ..loaders import Discovery
from ..settings import Settings
from ..store import Store
from ..text.analyzer import Analyzer
from .options import BuildOptions


@dataclass(frozen=True, kw_only=True)
class BuildJob:
    """One `build` call: its store and settings, its options, the embedding model and the
    embedding cache, the BM25 analyzer every strategy uses, the files discovery found
    under `source` (the folders given, resolved; `labels`: what each one's doc_ids start
    with, `loaders.files.input_labels`), a progress bar factory and a note sink."""

    store: Store
    settings: Settings
    options: BuildOptions
    model: Embedder
    cache: EmbeddingCache
    analyzer: Analyzer
    found: Discovery
    source: list[str]
    progress: Callable
    say: Callable[[str], None]
    labels: tuple[str, ...] = ()

    def embedder(self) -> CachedEmbedder:
        """The model through the cache, counting what one strategy's build computes."""
        return CachedEmbedder(self.model, self.cache)
