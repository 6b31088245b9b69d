"""Unit vectors for answer-sized context, made when a question first needs them.

A build embeds what search reads: the chunks. The sentences, list items, table rows and
code runs inside them are embedded when a question needs them, and only those: the packer
shortlists a question's units by their lexical evidence (`context.score.LEXICAL`: BM25
with the collection's statistics, the chunk's search score, its section, its neighbours),
and the SHORTLIST most likely get the embedder's cosine. Their vectors are read from the
index's embedding cache; the ones it lacks are embedded now and written there, so each
unit is embedded once ever: a second query, another process or `indexer serve` reads it.
A collection built with `--unit-vectors` (every unit embedded at build time) shortlists
every unit.

The shortlist depends on the question and the candidates only, never on what earlier
queries left in the cache: a question gets the same context on a fresh index and on a
used one. Where the cache cannot be written (a read-only index, a damaged file a build
has not set aside yet) the vectors made are remembered by the process instead: a query
costs more, and scores the same.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...embeddings import Embedder, EmbeddingCache, text_key
from ...embeddings.cache import stored

SHORTLIST = 32  # units per question that get a vector (bench/context.py: as every unit, measured)
MEMO = 50_000  # vectors a process remembers where the cache cannot take them


def shortlist(lexical: np.ndarray, size: int | None = SHORTLIST) -> np.ndarray:
    """Indexes of the `size` units most likely by their lexical evidence (ties in unit
    order); None: every unit."""
    if size is None or size >= len(lexical):
        return np.arange(len(lexical))
    return np.sort(np.argsort(-lexical, kind="stable")[:size])


class UnitVectors:
    """The vectors of unit texts for one index (its cache folder) and model: from the
    cache, else embedded now and kept (in the cache, or in this process)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cache: EmbeddingCache | None = None
        self.opened = False
        self.identity: tuple[int, int] | None = None  # the cache file's, when opened
        self.memo: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self.lock = threading.Lock()
        self.note = ""  # why vectors are not kept in the cache, when they are not

    def vectors(self, model: Embedder, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dimension) float32: each text's vector as the cache holds it."""
        keys = [text_key(t) for t in texts]
        found = self._known(model.name, keys)
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing:
            found.update(self._embed(model, missing))
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _known(self, model: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        with self.lock:
            found = {k: self.memo[(model, k)] for k in keys if (model, k) in self.memo}
        cache = self._cache()
        wanted = [k for k in dict.fromkeys(keys) if k not in found]
        if cache is not None and wanted:
            found.update(cache.get_many(model, wanted))
        return found

    def _embed(self, model: Embedder, missing: dict[bytes, str]) -> dict[bytes, np.ndarray]:
        """Embed the texts (as the cache would give them back) and keep them."""
        keys, step = list(missing), max(model.batch_size, 1)
        made: dict[bytes, np.ndarray] = {}
        for i in range(0, len(keys), step):
            batch = keys[i : i + step]
            made.update(zip(batch, model.embed_few([missing[k] for k in batch])))
        cache = self._cache()
        kept = cache is not None and cache.put_many(model.name, list(made.items()))
        if not kept:
            self._remember(model.name, made)
        return {k: stored(v) for k, v in made.items()}

    def _remember(self, model: str, made: dict[bytes, np.ndarray]) -> None:
        with self.lock:
            for k, v in made.items():
                self.memo[(model, k)] = stored(v)
            while len(self.memo) > MEMO:
                self.memo.popitem(last=False)
            self.note = self.note or (
                f"the embedding cache in {self.folder} cannot be written: unit vectors are "
                "embedded again by each process that needs them"
            )

    def _cache(self) -> EmbeddingCache | None:
        """The cache, opened once; again when its file was replaced (a build set a
        damaged one aside) or removed, so a long-lived process keeps writing the live one."""
        path = self.folder / EmbeddingCache.FILE
        with self.lock:
            if not self.opened or _identity(path) != self.identity:
                self.cache = EmbeddingCache.for_queries(self.folder)
                self.identity, self.opened = _identity(path), True
            return self.cache


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


_OPEN: dict[Path, UnitVectors] = {}
_OPEN_LOCK = threading.Lock()


def unit_vectors(folder: Path) -> UnitVectors:
    """The process's `UnitVectors` of the index whose cache folder is `folder` (one open
    cache per index, shared by every collection and thread)."""
    key = folder.absolute()
    with _OPEN_LOCK:
        if key not in _OPEN:
            _OPEN[key] = UnitVectors(key)
        return _OPEN[key]
