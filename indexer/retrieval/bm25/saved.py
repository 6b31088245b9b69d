"""A saved BM25 index's parts, mapped from its folder (`bm25.files`): the base segment and
the delta, the deleted positions, the chunk ids and the vocabulary — checked against each
other and against the chunk count its version expects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import IndexerError
from ...text.analyzer import Analyzer
from . import files
from .lookup import IdTable, Vocabulary, strings_of
from .postings import Postings, Segment


@dataclass
class Saved:
    """What `BM25Index.load` maps: the parts of the index and its settings."""

    ids: IdTable
    vocab: Vocabulary
    postings: Postings
    analyzer: Analyzer
    k1: float
    b: float


def read_saved(folder: Path, params: files.Params, expected: int | None = None) -> Saved:
    """The parts of the index saved in `folder` (`params`: its params.json). Damaged files
    (unreadable, inconsistent with each other or with the `expected` number of chunks)
    raise IndexerError."""
    try:
        saved, consistent = _mapped(folder, params)
    except IndexerError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as exc:
        raise files.damaged(folder, exc.__class__.__name__) from None
    base = saved.postings.segments[0]
    if (
        not consistent
        or len(base) != params["base"]
        or (expected is not None and expected != saved.postings.n)
    ):
        raise files.damaged(folder, "its files disagree")
    return saved


def mapped_segment(folder: Path, prefix: str = "", first: int = 0) -> Segment:
    """A segment's arrays mapped (`prefix`: `delta_` for the delta's)."""
    return Segment(
        {
            "terms": files.mapped(folder, f"{prefix}terms", np.int32),
            "offsets": files.mapped(folder, f"{prefix}offsets", np.int64),
            "keys": files.mapped(folder, f"{prefix}keys", np.int32),
            "indptr": files.mapped(folder, f"{prefix}indptr", np.int64),
            "docs": files.mapped(folder, f"{prefix}docs", np.int32),
            "tfs": files.mapped(folder, f"{prefix}tfs", np.uint16),
        },
        first,
    )


def _mapped(folder: Path, params: files.Params) -> tuple[Saved, bool]:
    """The parts, and whether their sizes agree with each other."""
    base = mapped_segment(folder)
    segments = [base]
    deleted = np.zeros(0, np.int64)
    extra_ids: list[str] = []
    extra_terms: list[str] = []
    if params["delta"] or params["deleted"]:
        deleted = files.mapped(folder, "deleted", np.int64)
        extra_ids = strings_of(files.mapped(folder, "delta_ids", np.bytes_))
        extra_terms = strings_of(files.mapped(folder, "delta_vocab", np.bytes_))
    if params["delta"]:
        segments.append(mapped_segment(folder, "delta_", len(base)))
    ids = IdTable(
        files.mapped(folder, "ids", np.bytes_),
        files.mapped(folder, "ids_sorted", np.bytes_),
        files.mapped(folder, "ids_rank", np.int32),
        extra=extra_ids,
    )
    vocab = Vocabulary(
        files.mapped(folder, "vocab_bytes", np.uint8),
        files.mapped(folder, "vocab_offsets", np.int64),
        extra_terms,
    )
    k1, b = float(params["k1"]), float(params["b"])
    analyzer = Analyzer.from_dict(params["analyzer"])
    consistent = (
        all(s.consistent() for s in segments)
        and len(ids) == sum(len(s) for s in segments)
        and len(ids.ordered) == len(ids.rank) == ids.base
    )
    return Saved(
        ids, vocab, Postings(segments, deleted, k1, b), analyzer=analyzer, k1=k1, b=b
    ), consistent
