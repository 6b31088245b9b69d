"""What every strategy of one `build` call shares (`BuildJob`): where it writes, what
it embeds and analyses with, the files found, and how it reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..embeddings import CachedEmbedder, Embedder, EmbedderChoice, EmbeddingCache
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
    with, `loaders.files.input_labels`), a progress bar factory, a note sink, and how the
    embedder was chosen (recorded on each collection's entry)."""

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
    choice: EmbedderChoice | None = None

    def embedder(self) -> CachedEmbedder:
        """The model through the cache, counting what one strategy's build computes."""
        return CachedEmbedder(self.model, self.cache)
