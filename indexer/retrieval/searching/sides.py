"""Each side's candidates for a query: the embedding's nearest chunks (`dense`), BM25's
best matches (`sparse`), and how much of the query BM25's best match covers
(`coverage`), remembered for the last few queries — evaluating and tuning search the same
question under many settings.

The dense side scans the version's stored vectors exactly (`retrieval.rows`) where that
is the better way: under EXACT_UNDER chunks (HNSW is approximate: near-duplicate chunks
can hide the nearest ones from it), and in a one-shot process over SCAN_FROM chunks or
more (rather than wait for Chroma to load its whole HNSW index: seconds at a million
chunks). Otherwise it asks Chroma, for more when records outside the version (a build in
progress, superseded ones) crowd the live ones out.

To search another way (an in-memory copy, a lab), subclass `Sides` and override
`nearest` or `matching` (the uncached lookups) or `query_vector`, and pass the class to
`Snapshot.of`. `Sides` reads one version's parts (`snapshot.Parts`), never the handle.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Container
from typing import TYPE_CHECKING, TypeVar, cast

import numpy as np

from ...errors import EmbedderMismatch
from ...store import Entry
from .ranking import Side

if TYPE_CHECKING:
    from .parts import Parts
    from .scope import Scope

GATHER = 8_192  # a narrowed search reads only the scope's rows when it has no more
OVERSAMPLE = 2.0  # ...else asks Chroma for this many times its share more than it needs
MAX_ASK = 2_000  # ...up to this many (asking Chroma for 2,000 costs about 4x asking for 50)
SCAN_FROM = 50_000  # a one-shot handle scans the stored vectors of a collection this large
EXACT_UNDER = 20_000  # ...and every handle those of a smaller one: exact, and as fast as HNSW
RECENT = 96  # (side, query, depth) answers remembered
T = TypeVar("T")
Key = tuple[str, str, int, tuple[str, ...]]  # (side, query, depth, the scope's globs)
# what makes a version's `Sides` from its parts (the class itself, or a subclass's maker)
SidesFactory = Callable[..., "Sides"]


class Sides:
    """The candidate lists of one version (`parts`), remembered for the last RECENT
    (side, query, depth) asked. `one_shot`: a process that answers a query or two and
    exits scans a large collection's stored vectors rather than load its HNSW index."""

    def __init__(self, parts: Parts, *, one_shot: bool = False) -> None:
        self.parts = parts
        self.one_shot = one_shot
        self.store = parts.store
        self._recent: OrderedDict[Key, object] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def entry(self) -> Entry:
        return self.parts.entry

    # -- remembered ---------------------------------------------------------------------
    def dense(self, query: str, n: int, scope: Scope | None = None) -> Side:
        """(id, cosine similarity) of the n nearest live chunks (of the `scope`'s
        documents), nearest first."""
        return self._remembered(
            ("dense", query, n, _paths(scope)), lambda: self.nearest(query, n, scope=scope)
        )

    def sparse(self, query: str, n: int, scope: Scope | None = None) -> Side:
        """(id, BM25 score) of the n best live matches (in the `scope`), best first."""
        return self._remembered(
            ("sparse", query, n, _paths(scope)), lambda: self.matching(query, n, scope=scope)
        )

    def coverage(self, query: str, n: int, scope: Scope | None = None) -> float:
        """The share of the query's IDF mass in BM25's best match (0 for no match)."""
        return self._remembered(
            ("coverage", query, n, _paths(scope)), lambda: self._covered(query, n, scope)
        )

    def _remembered(self, key: Key, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._recent:
                self._recent.move_to_end(key)
                # a key's first part names the side, and each side stores one type: `compute`'s
                return cast(T, self._recent[key])
        value = compute()
        with self._lock:
            self._recent[key] = value
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
        return value

    def _covered(self, query: str, n: int, scope: Scope | None) -> float:
        top = self.sparse(query, n, scope)
        bm25 = self.parts.bm25
        return bm25.coverage(query, [bm25.position(top[0][0])])[0] if top else 0.0

    # -- looked up ----------------------------------------------------------------------
    def query_vector(self, query: str) -> np.ndarray:
        """The query's embedding. A Turkish collection's query typed without Turkish
        letters (`yurtdisina kargo var mi`) is embedded with its letters restored: BM25
        folds them anyway, the embedding would read different words."""
        text = query
        if self.entry.extra.get("analyzer", {}).get("lang") == "tr":
            from ...text.deasciify import deasciify, looks_turkish_ascii

            if looks_turkish_ascii(query):
                text = deasciify(query)
        vector = self.parts.embedder.embed_query(text)
        if vector.shape[-1] != self.entry.dimension:
            raise EmbedderMismatch(
                f"the embedder returned {vector.shape[-1]}-d vectors but {self.entry.strategy!r} "
                f"holds {self.entry.dimension}-d ones; rebuild it with this embedder"
            )
        return np.asarray(vector, dtype=np.float32)

    def nearest(self, query: str, n: int, scope: Scope | None = None) -> Side:
        """`dense`, not remembered: the stored vectors scanned, or Chroma asked."""
        n = min(n, len(scope) if scope is not None else len(self.parts.bm25))
        if n <= 0:
            return []
        vector = self.query_vector(query)
        if scope is not None:
            return self._nearest_in(vector, n, scope)
        rows = self.parts.rows if self._scans() else None
        if rows is not None:
            return rows.nearest(vector, n)
        return self._asked(vector, n, None)

    def _nearest_in(self, vector: np.ndarray, n: int, scope: Scope) -> Side:
        """The n nearest chunks of the scope's documents, the cheapest exact way: the
        scope's rows read alone when there are few (GATHER), else Chroma's index asked
        deeper until n of them are among its answers (OVERSAMPLE times the share they
        hold, up to MAX_ASK), else every row scanned with the others masked; without
        rows, Chroma's `where` on the stored path (0.3-0.7 s over 100,000 chunks)."""
        rows, mask = self.parts.rows, scope.rows
        if rows is None or mask is None:
            found = self._oversampled(vector, n, scope)
            return found if found is not None else self._asked(vector, n, scope)
        if len(scope) <= GATHER:
            return rows.nearest_among(vector, n, mask)
        found = None if self._scans() else self._oversampled(vector, n, scope)
        return found if found is not None else rows.nearest(vector, n, mask)

    def _oversampled(self, vector: np.ndarray, n: int, scope: Scope) -> Side | None:
        """Chroma's nearest chunks, asked for more than n (the scope's share of the
        collection considered) until n of the scope's are among them; None when that
        would take more than MAX_ASK."""
        share = len(scope) / max(len(self.parts.bm25), 1)
        ask = int(OVERSAMPLE * n / max(share, 1e-9)) + len(self.entry.pending_ids) + 8
        while ask <= MAX_ASK:
            got = self.store.records.nearest(self.entry, vector, ask)
            out = [(cid, s) for cid, s in got if cid in scope]
            if len(out) >= n or len(got) < ask:
                return out[:n]
            ask *= 4
        return None

    def _scans(self) -> bool:
        """Whether the stored vectors are scanned rather than Chroma's index asked: for a
        small collection, and in a one-shot process for a large one."""
        chunks = self.entry.chunks
        return chunks < EXACT_UNDER or (self.one_shot and chunks >= SCAN_FROM)

    def _asked(self, vector: np.ndarray, n: int, scope: Scope | None) -> Side:
        """The n nearest live chunks (of the scope) by Chroma's index, asked again for
        more while records outside the version crowd them out."""
        live: Container[str] = self.parts.bm25 if scope is None else scope
        documents = None if scope is None else scope.documents
        ask = n + len(self.entry.pending_ids) + 8
        while True:
            got = self.store.records.nearest(self.entry, vector, ask, documents)
            out = [(cid, s) for cid, s in got if cid in live]
            if len(out) >= n or len(got) < ask:
                return out[:n]
            ask *= 4

    def matching(self, query: str, n: int, scope: Scope | None = None) -> Side:
        """`sparse`, not remembered."""
        index = self.parts.bm25
        allowed = None if scope is None else scope.bm25
        return [(index.ids[pos], score) for pos, score in index.search(query, n, allowed)]


def _paths(scope: Scope | None) -> tuple[str, ...]:
    return () if scope is None else scope.paths
