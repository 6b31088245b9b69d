"""indexer: chunk documents with several strategies, store each in Chroma, search with
embeddings, BM25 or both, and measure which strategy wins on your own questions.

The names below are the library API; the `indexer` command is a thin layer over them.
They load lazily, so `import indexer` is cheap and heavy dependencies (chromadb, the
embedding model) load on first use.
"""

from __future__ import annotations

from .version import VERSION as __version__

# the library API: each public name and the (module, attribute) it loads from on first use
API = {
    "chunk": ("indexer.indexing.pipeline", "chunk"),
    "boundaries": ("indexer.evaluation.chunk_boundaries", "boundaries"),
    "stored_boundaries": ("indexer.evaluation.boundaries", "stored_boundaries"),
    "build": ("indexer.indexing.building", "build"),
    "BuildOptions": ("indexer.indexing.options", "BuildOptions"),
    "search": ("indexer.retrieval", "search"),
    "Index": ("indexer.retrieval", "Index"),
    "SearchOptions": ("indexer.retrieval", "SearchOptions"),
    "Context": ("indexer.retrieval", "Context"),
    "Span": ("indexer.retrieval", "Span"),
    "evaluate": ("indexer.evaluation", "evaluate"),
    "tune": ("indexer.evaluation.tune", "tune"),
    "import_beir": ("indexer.evaluation.beir", "import_beir"),
    "make_questions": ("indexer.questions", "make_questions"),
    "cached_questions": ("indexer.questions", "cached_questions"),
    "Settings": ("indexer.settings", "Settings"),
    "Store": ("indexer.store", "Store"),
    "parse_strategy": ("indexer.chunkers", "parse_strategy"),
    "load_documents": ("indexer.loaders", "load_documents"),
    "get_embedder": ("indexer.embeddings", "get_embedder"),
}

__all__ = ["__version__", *API]


def __getattr__(name: str):
    if name in API:
        import importlib

        module, attr = API[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")
