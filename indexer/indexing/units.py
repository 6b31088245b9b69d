"""A build's units (what answer-sized context packs): cut from each document once and
embedded through the build's cached embedder, so that a query finds their vectors in
the index's embedding cache (`retrieval.context`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..chunkers.unit_map import DocUnit, document_units, unit_texts
from ..embeddings import CachedEmbedder
from ..text.tokens import Tokenizer
from ..types import Document
from .estimates import duration

BATCH = 256
OVER = 30.0  # seconds of a document's units left after its first batch worth a line


class DocumentUnits:
    """Units of the documents a build processes, their vectors cached as they are cut."""

    def __init__(
        self,
        embedder: CachedEmbedder,
        tokenizer: Tokenizer,
        say: Callable[[str], object] | None = None,
    ) -> None:
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.say = say  # where a big document's line goes (how long its units take)
        self.embedded = 0  # unit texts the model computed (not found in the cache)
        self.cached = 0  # unit texts found in the cache

    def of(self, doc: Document) -> list[DocUnit]:
        units = document_units(doc, self.tokenizer)
        texts = list(dict.fromkeys(unit_texts(doc, units)))
        computed, cached = self.embedder.computed, self.embedder.cached
        for i in range(0, len(texts), BATCH):
            t0 = time.perf_counter()
            self.embedder.embed_documents(texts[i : i + BATCH])
            if i == 0:
                self._announce(doc, len(texts), time.perf_counter() - t0)
        self.embedded += self.embedder.computed - computed
        self.cached += self.embedder.cached - cached
        return units

    def _announce(self, doc: Document, n: int, first: float) -> None:
        """One line when a document's units will take long (one huge file: the build says
        nothing else until its first chunk batch)."""
        rest = first * (n - BATCH) / BATCH
        if self.say is not None and rest >= OVER:
            self.say(
                f"{doc.doc_id}: embedding {n:,} sentences for answer-sized context, "
                f"about {duration(rest)} before its chunks"
            )

    def chunk_counts(self) -> tuple[int, int]:
        """(computed, cached) of the build's embedder, its unit texts left out: what a
        build report counts for its chunks."""
        return self.embedder.computed - self.embedded, self.embedder.cached - self.cached
