"""semantic: start a new chunk where consecutive sentences stop being similar.

Every sentence unit (sentence, table row, list item, heading, code block) is embedded
through the embedding cache. By default a chunk ends among the lowest `percentile` % of
the document's neighbour similarities: the cut adapts to the embedder, since absolute
thresholds do not transfer (nomic-embed-text bunches scores in 0.65–0.87, where the
seed's 0.75 is a sensible cut; USE's median is near 0.2, where 0.75 cuts at every
sentence). `threshold=0.75` asks for the absolute cut instead. `min_tokens` keeps lone
fragments out and `max_tokens` caps a chunk. Headings are not used as boundaries; the
header (with `header=true`) is the heading path where the chunk starts, as for every
other strategy.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..errors import UsageError
from ..types import Chunk, Document
from .base import Chunker, Param, header_of
from .packing import PROSE, fit
from .units import sentence_units

EMBED_BATCH = 1024  # sentence units embedded (and held in memory) at a time


class SemanticChunker(Chunker):
    kind = "semantic"
    description = "sentences grouped until the similarity of neighbours drops"
    uses_embedder = True
    params = {
        "threshold": Param(
            float,
            None,
            "break where cosine similarity of neighbours is below this (overrides percentile)",
        ),
        "percentile": Param(
            float, 25.0, "break at the lowest this-% neighbour similarities of each document"
        ),
        "min_tokens": Param(
            int, 24, "never end a chunk shorter than this (except at a document end)"
        ),
        "max_tokens": Param(int, 256, "never let a chunk grow past this"),
        "header": Param(bool, True, "the heading path where a chunk starts goes into its header"),
    }
    # the parameters, set from `params` by Chunker.__init__
    threshold: float | None
    percentile: float
    min_tokens: int
    max_tokens: int
    header: bool

    def validate(self) -> None:
        if self.threshold is not None:
            self.require(
                -1.0 <= self.threshold <= 1.0,
                f"threshold ({self.threshold}) must be between -1 and 1",
            )
        self.require(
            0.0 < self.percentile < 100.0, f"percentile ({self.percentile}) must be in (0, 100)"
        )
        self.require(self.max_tokens >= 8, f"max_tokens ({self.max_tokens}) must be at least 8")
        self.require(
            0 <= self.min_tokens <= self.max_tokens,
            f"min_tokens ({self.min_tokens}) must be between 0 and max_tokens ({self.max_tokens})",
        )

    def _model(self):
        if self.embedder is None:  # the caller's: a build's, `chunk`'s (settings.embedder)
            raise UsageError(
                "the semantic strategy embeds sentences: create it with an embedder "
                "(spec.create(embedder=...) or ChunkerContext(embedder=...))"
            )
        return self.embedder

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        units = self._units(doc)
        if not units:
            return
        breaks = self._breaks(doc, units)
        out: list[Chunk] = []  # at most the chunks of one flush
        group: list[tuple[int, int, int]] = []
        size = 0
        for i, unit in enumerate(units):
            if group and self._ends_before(unit, size, breaks[i - 1]):
                group = self._flush(doc, group, out)
                size = sum(u[2] + 1 for u in group)
                yield from out
                out.clear()
            group.append(unit)
            size += unit[2] + (1 if len(group) > 1 else 0)
        while group:
            group = self._flush(doc, group, out)
        yield from out

    def _units(self, doc: Document) -> list[tuple[int, int, int]]:
        """The sentence units as (start, end, tokens); a unit longer than max_tokens is cut
        first, so that every piece fits."""
        units = []
        for u in sentence_units(doc):
            for s, e, n in fit(self, doc, u.start, end=u.end, limit=self.max_tokens, levels=PROSE):
                units.append((s, e, n))
        return units

    def _ends_before(self, unit: tuple[int, int, int], size: int, shift: bool) -> bool:
        """Whether the group of `size` tokens ends before `unit`: at a topic shift once it is
        min_tokens long, or where the unit would take it past max_tokens."""
        return (shift and size >= self.min_tokens) or size + unit[2] + 1 > self.max_tokens

    def _breaks(self, doc: Document, units: list[tuple[int, int, int]]) -> list[bool]:
        """breaks[i]: a topic shift between unit i and unit i + 1."""
        if len(units) < 2:
            return []
        sims = self._similarities(doc, units)
        if self.threshold is not None:
            return (sims < self.threshold).tolist()
        cut = float(np.percentile(sims, self.percentile))
        return (sims <= cut).tolist()

    def _similarities(self, doc: Document, units: list[tuple[int, int, int]]) -> np.ndarray:
        """Cosine similarity of each unit with the next, embedding EMBED_BATCH units at a
        time: memory holds one batch of vectors, not one per sentence of the document."""
        model = self._model()
        sims = np.empty(len(units) - 1, dtype=np.float32)
        previous = None
        for i in range(0, len(units), EMBED_BATCH):
            batch = units[i : i + EMBED_BATCH]
            vectors = np.asarray(
                model.embed_documents([doc.text[s:e] for s, e, _ in batch]), dtype=np.float32
            )
            if previous is not None:
                sims[i - 1] = float(previous @ vectors[0])
            sims[i : i + len(batch) - 1] = np.einsum("ij,ij->i", vectors[:-1], vectors[1:])
            previous = vectors[-1]
        return sims

    def _flush(self, doc: Document, group: list[tuple[int, int, int]], out: list[Chunk]) -> list:
        """Emit the longest prefix of `group` within max_tokens; return the rest."""
        take = len(group)
        while True:
            start, end = group[0][0], group[take - 1][1]
            n = group[0][2] if take == 1 else self.count(doc.text[start:end])
            if n <= self.max_tokens or take == 1:
                break
            take -= 1
        path = doc.heading_path_at(start)
        out.append(
            self.make_chunk(
                doc,
                start,
                end,
                kind="semantic",
                header=header_of(path) if self.header else "",
                heading_path=path,
                n_tokens=n,
            )
        )
        return group[take:]
