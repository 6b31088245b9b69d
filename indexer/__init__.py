"""indexer: chunk documents with several strategies, store each in Chroma, search with
embeddings, BM25 or both, and measure which strategy wins on your own questions.

The functions below are the library API; the `indexer` command is a thin layer over them.
Heavy dependencies load on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "chunk"]


def chunk(paths, strategies, **options):
    """Chunk files in memory. See `indexer.chunking.chunk`."""
    from .chunking import chunk as _chunk

    return _chunk(paths, strategies, **options)
