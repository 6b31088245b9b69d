"""Narrowing a search to some documents by path globs (`SearchOptions.paths`, the CLI's
`--path`, `paths` in the web API and MCP).

A glob is matched against a document's `doc_id` (its path inside the indexed folder,
POSIX separators) with git's rules, as in a `.gitignore`: `*` and `?` stay inside one
folder, `**` crosses folders, a glob with no `/` matches a file name at any depth
(`*.pptx`), a glob ending in `/` takes everything under that folder (`docs/api/`).
Several globs are alternatives. The `Scope` they make is applied inside each side (the
rows scanned or Chroma's `where` on the stored path, BM25's candidates, the exact-match
tiers), so a narrowed search returns k hits whenever k exist among those documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from pathspec import GitIgnoreSpec

from ..rows.table import doc_key


@dataclass(frozen=True, kw_only=True)
class Scope:
    """The documents a search is narrowed to, the live chunk ids they hold, and masks of
    them over BM25's positions and (where the version has rows) the rows'."""

    paths: tuple[str, ...]
    documents: tuple[str, ...]
    ids: frozenset[str]
    bm25: NDArray[np.bool_] = field(repr=False)
    rows: NDArray[np.bool_] | None = field(default=None, repr=False)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.ids

    def __len__(self) -> int:
        return len(self.ids)


def matcher(paths: Sequence[str]) -> Callable[[str], bool]:
    """Whether a doc_id matches one of the globs."""
    return GitIgnoreSpec.from_lines(paths).match_file


def matching(documents: Iterable[str], paths: Sequence[str]) -> tuple[str, ...]:
    """The documents a glob of `paths` matches, sorted."""
    match = matcher(paths)
    return tuple(sorted(d for d in documents if match(d)))


def mask_of(ids: Iterable[str], position: Callable[[str], int], size: int) -> NDArray[np.bool_]:
    """A mask over `size` positions: those of `ids` (`position(id)`, -1 for none)."""
    mask = np.zeros(size, dtype=np.bool_)
    at = np.array([position(cid) for cid in ids], dtype=np.int64)
    mask[at[at >= 0]] = True
    return mask


def keys_of(documents: Sequence[str]) -> NDArray[np.uint64]:
    """The rows' keys of these documents."""
    return np.array([doc_key(d) for d in documents], dtype=np.uint64)
