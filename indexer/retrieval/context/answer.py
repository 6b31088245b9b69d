"""Answer-sized context: the best few spans for a question under a token budget.

Big chunks decide where to look, the packer what to hand over. It takes the candidates
of the collection's own search (`candidates` chunks, its saved or default settings),
cuts them into the units their maps record (`context.units`), scores every unit
(`context.score`: BM25 with the collection's analyzer and statistics, the collection's
embedder on the unit, where the search ranked its chunk), and packs the most likely
units into exact spans under the budget (`context.pack`), stopping once the units taken
hold `mass` of the probability.

Unit vectors are made when a question first needs them (`context.vectors`): the units
are shortlisted by their lexical evidence and only the shortlist is embedded, once ever,
through the index's embedding cache. Where the embedder cannot be reached the units are
scored without vectors, and `Context.scoring` says "bm25" (`Context.note` why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from ...errors import EmbedderError, UsageError
from ...text.tokens import Tokenizer, get_tokenizer
from ...types import Hit
from ..options import ResolvedOptions, SearchOptions
from ..searching import run as searching
from ..searching.snapshot import Snapshot
from .pack import Context, pack, render
from .score import (
    LEXICAL,
    WEIGHTS,
    Cosines,
    lexical_features,
    probabilities,
    query_idf,
    with_cosines,
)
from .units import Gaps, Unit, candidate_units
from .vectors import SHORTLIST, shortlist, unit_vectors

CANDIDATES = 20  # chunks of the search a context is packed from
MASS = 0.97  # stop once the units taken hold this much of the probability
MIN_BUDGET = 16

__all__ = [
    "CANDIDATES",
    "MASS",
    "MIN_BUDGET",
    "Context",
    "Scored",
    "answer_context",
    "check",
    "definition_units",
    "scored_units",
    "unit_cosines",
]


def answer_context(
    snapshot: Snapshot,
    query: str,
    budget: int,
    options: SearchOptions | ResolvedOptions | None = None,
    *,
    candidates: int = CANDIDATES,
    mass: float = MASS,
) -> Context:
    """The context for `query` from one version of a collection (`snapshot`) in at most
    `budget` tokens of the tool's tokenizer, labels included."""
    check(budget, mass)
    base = snapshot.resolve(options)
    wanted = replace(base, k=max(candidates, base.k, 1))
    hits = searching.search(snapshot, query, wanted)
    return scored_units(snapshot, query, hits).pack(budget, mass, base.k)


def check(budget: int, mass: float = MASS) -> None:
    if budget < MIN_BUDGET:
        raise UsageError(f"--budget must be at least {MIN_BUDGET} tokens, not {budget}")
    if not 0 < mass <= 1:
        raise UsageError(f"mass must be above 0 and at most 1, not {mass}")


@dataclass
class Scored:
    """The units of a search's candidates with their probabilities: packed at any budget."""

    query: str
    strategy: str
    hits: list[Hit]
    units: list[Unit]
    probs: np.ndarray
    gaps: Gaps
    scoring: str
    tokenizer: Tokenizer
    note: str = ""  # why the units were scored without vectors, or why it cost more

    def pack(self, budget: int, mass: float = MASS, whole_k: int = 5) -> Context:
        """The spans under `budget` (`context.pack.pack`), and what they cost."""
        if self.units:
            first = definition_units(self.hits, self.units)
            spans, label_tokens = pack(
                self.units, self.probs, budget, self.tokenizer, mass, self.gaps, first
            )
        else:
            spans, label_tokens = [], 0
        whole = sum(h.chunk.n_tokens for h in self.hits[:whole_k])  # what a plain search hands over
        return Context(
            self.query,
            budget,
            spans,
            self.tokenizer.count(render(spans)),
            label_tokens,
            len(self.hits),
            len(self.units),
            self.scoring,
            self.strategy,
            whole,
            min(whole_k, len(self.hits)),
            self.note,
        )


def definition_units(hits: list[Hit], units: list[Unit]) -> list[int]:
    """The units of the definition an exact symbol lookup names (its top hit, ranked there
    by the exact-match tier), in document order: what such a query asks for is the
    definition from its first line, so those go first."""
    if not hits or hits[0].match != "exact symbol":
        return []
    c = hits[0].chunk
    inside = [
        i
        for i, u in enumerate(units)
        if u.doc_id == c.doc_id and u.start >= c.start and u.end <= c.end
    ]
    name = re.compile(rf"(?<![\w$]){re.escape(c.symbol.rsplit('.', 1)[-1])}(?![\w$])")
    at = next((k for k, i in enumerate(inside) if name.search(units[i].text.split("\n", 1)[0])), 0)
    return inside[at:]  # from the line that names it: a chunk may hold what comes before


def scored_units(snapshot: Snapshot, query: str, hits: list[Hit]) -> Scored:
    """The units of `hits` (candidates of a search of `snapshot` for `query`) scored:
    first by their lexical evidence, then the shortlist's with the embedder too
    (`context.vectors`)."""
    parts = snapshot.parts
    tokenizer = get_tokenizer(cache_dir=parts.store.settings.tiktoken_dir)
    gaps: Gaps = {}
    units = candidate_units(hits, tokenizer, gaps)
    scored = Scored(
        query, snapshot.entry.strategy, hits, units, np.zeros(0), gaps, "bm25", tokenizer
    )
    if not units:
        return scored
    lexical = lexical_features(units, query_idf(parts.bm25, query), parts.unit_terms)
    scored.probs = probabilities(lexical, LEXICAL)
    size = None if snapshot.entry.extra.get("unit_vectors") else SHORTLIST
    known = np.zeros(len(units), dtype=bool)
    known[shortlist(scored.probs, size)] = True
    try:
        cos = unit_cosines(snapshot, query, units, known)
    except EmbedderError as exc:
        scored.note = f"units scored by BM25 alone: the embedder failed ({exc})"
        return scored
    scored.probs = probabilities(with_cosines(lexical, units, cos), WEIGHTS)
    scored.scoring = "bm25+embedding"
    scored.note = unit_vectors(parts.store.cache_dir).note
    return scored


def unit_cosines(
    snapshot: Snapshot, query: str, units: list[Unit], known: np.ndarray | None = None
) -> Cosines:
    """The embedder on the `known` units (None: all): their cosines with the query and
    their vectors (`context.vectors`: from the cache, or embedded now and kept); the
    other units' rows are 0, for `with_cosines` to estimate."""
    parts = snapshot.parts
    chosen = np.flatnonzero(known) if known is not None else np.arange(len(units))
    vectors = np.zeros((len(units), parts.embedder.dimension), dtype=np.float32)
    texts = [units[i].embedded_text() for i in chosen]
    vectors[chosen] = unit_vectors(parts.store.cache_dir).vectors(parts.embedder, texts)
    q = snapshot.sides.query_vector(query)
    return Cosines(values=vectors @ q, vectors=vectors, query=q, known=known)
