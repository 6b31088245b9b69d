"""Answer-sized context: the best few spans for a question under a token budget.

Big chunks decide where to look, the packer what to hand over. It takes the candidates
of the collection's own search (`candidates` chunks, its saved or default settings),
cuts them into the units their maps record (`context_units`), scores every unit
(`context_score`: BM25 with the collection's analyzer and statistics, the collection's
embedder on the unit, where the search ranked its chunk), and packs the most likely
units into exact spans under the budget (`context_pack`), stopping once the units taken
hold `mass` of the probability.

Unit vectors are made at build time, through the index's embedding cache; a query reads
them from there. Where the cache lacks them (an index built before unit maps, another
machine sharing a Chroma server) up to MISSING_EMBEDDED are embedded on the spot, and
beyond that the units are scored without vectors (`Context.scoring` says "bm25").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
import numpy as np

from ..embeddings import EmbeddingCache, text_key
from ..errors import UsageError
from ..text.tokens import Tokenizer, get_tokenizer
from ..types import Hit
from . import searching
from .context_pack import Context, pack, render
from .context_score import LEXICAL, WEIGHTS, features, probabilities, query_idf
from .context_units import Gaps, Unit, candidate_units
from .options import ResolvedOptions, SearchOptions
from .snapshot import Snapshot

CANDIDATES = 20  # chunks of the search a context is packed from
MASS = 0.97  # stop once the units taken hold this much of the probability
MISSING_EMBEDDED = 32  # unit vectors a query embeds itself when the cache lacks them
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

    def pack(self, budget: int, mass: float = MASS, whole_k: int = 5) -> Context:
        """The spans under `budget` (`context_pack.pack`), and what they cost."""
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
    """The units of `hits` (candidates of a search of `snapshot` for `query`) scored."""
    parts = snapshot.parts
    tokenizer = get_tokenizer(cache_dir=parts.store.settings.tiktoken_dir)
    gaps: Gaps = {}
    units = candidate_units(hits, tokenizer, gaps)
    scoring, probs = "bm25", np.zeros(0)
    if units:
        embedded = unit_cosines(snapshot, query, units)
        cosines, vectors = embedded if embedded is not None else (None, None)
        scoring = "bm25+embedding" if cosines is not None else "bm25"
        matrix = features(
            units,
            query_idf(parts.bm25, query),
            parts.unit_terms,
            cosines,
            vectors,
            snapshot.sides.query_vector(query) if vectors is not None else None,
        )
        probs = probabilities(matrix, WEIGHTS if cosines is not None else LEXICAL)
    return Scored(query, snapshot.entry.strategy, hits, units, probs, gaps, scoring, tokenizer)


def unit_cosines(
    snapshot: Snapshot, query: str, units: list[Unit]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Cosine of each unit's vector with the query's; None when too many are missing."""
    texts = [u.embedded_text() for u in units]
    keys = [text_key(t) for t in texts]
    found = _cached_vectors(snapshot, keys)
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if len(missing) > MISSING_EMBEDDED:
        return None
    if missing:
        by_key = dict(zip(keys, texts))
        vectors = snapshot.parts.embedder.embed_documents([by_key[k] for k in missing])
        found.update(zip(missing, vectors))
    matrix = np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
    return matrix @ snapshot.sides.query_vector(query), matrix


def _cached_vectors(snapshot: Snapshot, keys: list[bytes]) -> dict[bytes, np.ndarray]:
    """The vectors the index's embedding cache holds of these text keys (by key)."""
    cache = EmbeddingCache.reader(snapshot.parts.store.cache_dir)
    if cache is None:
        return {}
    found = cache.get_many(snapshot.entry.embedder, list(set(keys)))
    cache.close()
    return found
