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

    def of(self, doc: Document) -> list[DocUnit]:
        units = document_units(doc, self.tokenizer)
        texts = list(dict.fromkeys(unit_texts(doc, units)))
        before = self.embedder.computed
        for i in range(0, len(texts), BATCH):
            self.embedder.embed_documents(texts[i:i + BATCH])
        self.embedded += self.embedder.computed - before
        return units
