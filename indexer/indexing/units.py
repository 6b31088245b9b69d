"""A build's units (what answer-sized context packs): cut from each document once, for
the unit maps its chunks record. By default none is embedded: a question embeds the few
its context needs and keeps them in the index's embedding cache
(`retrieval.context.vectors`). With `BuildOptions.unit_vectors` every unit is embedded
here through the build's cached embedder, as before: about as many texts as the
folder has sentences, the build's largest cost by far (2.5-4x the chunks' alone)."""

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
    """Units of the documents a build processes (their vectors cached as they are cut,
    when `embed`)."""

    def __init__(
        self,
        embedder: CachedEmbedder,
        tokenizer: Tokenizer,
        say: Callable[[str], object] | None = None,
        embed: bool = False,
    ) -> None:
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.say = say  # where a big document's line goes (how long its units take)
        self.embed = embed
        self.embedded = 0  # unit texts the model computed (not found in the cache)
        self.cached = 0  # unit texts found in the cache
        self.texts = 0  # unit texts embedded or found (what the build's estimate counts)
        self.seconds = 0.0  # spent embedding them

    def of(self, doc: Document) -> list[DocUnit]:
        units = document_units(doc, self.tokenizer)
        if self.embed:
            self._embed(doc, units)
        return units

    def _embed(self, doc: Document, units: list[DocUnit]) -> None:
        texts = list(dict.fromkeys(unit_texts(doc, units)))
        computed, cached = self.embedder.computed, self.embedder.cached
        start = time.perf_counter()
        for i in range(0, len(texts), BATCH):
            t0 = time.perf_counter()
            self.embedder.embed_documents(texts[i : i + BATCH])
            if i == 0:
                self._announce(doc, len(texts), time.perf_counter() - t0)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        self.embedded += self.embedder.computed - computed
        self.cached += self.embedder.cached - cached

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
