"""A build's units (what answer-sized context packs): cut from each document once and
embedded through the build's cached embedder, so that a query finds their vectors in
the index's embedding cache (`retrieval.context`)."""

from __future__ import annotations

from ..chunkers.unit_map import DocUnit, document_units, unit_texts
from ..embeddings import CachedEmbedder
from ..text.tokens import Tokenizer
from ..types import Document

BATCH = 256


class DocumentUnits:
    """Units of the documents a build processes, their vectors cached as they are cut."""

    def __init__(self, embedder: CachedEmbedder, tokenizer: Tokenizer) -> None:
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.embedded = 0  # unit texts the model computed (not found in the cache)
        self.cached = 0  # unit texts found in the cache

    def of(self, doc: Document) -> list[DocUnit]:
        units = document_units(doc, self.tokenizer)
        texts = list(dict.fromkeys(unit_texts(doc, units)))
        computed, cached = self.embedder.computed, self.embedder.cached
        for i in range(0, len(texts), BATCH):
            self.embedder.embed_documents(texts[i : i + BATCH])
        self.embedded += self.embedder.computed - computed
        self.cached += self.embedder.cached - cached
        return units

    def chunk_counts(self) -> tuple[int, int]:
        """(computed, cached) of the build's embedder, its unit texts left out: what a
        build report counts for its chunks."""
        return self.embedder.computed - self.embedded, self.embedder.cached - self.cached
