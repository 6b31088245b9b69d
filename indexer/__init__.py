"""indexer: chunk documents with several strategies, store each in Chroma, search with
embeddings, BM25 or both, and measure which strategy wins on your own questions.

The names below are the library API; the `indexer` command is a thin layer over them.
They load lazily, so `import indexer` is cheap and heavy dependencies (chromadb, the
embedding model) load on first use. A type checker sees every name with its real type
(the package ships `py.typed`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import VERSION as __version__

# the library API: each public name and the (module, attribute) it loads from on first use
API = {
    # functions
    "chunk": ("indexer.indexing.pipeline", "chunk"),
    "boundaries": ("indexer.evaluation.chunk_boundaries", "boundaries"),
    "stored_boundaries": ("indexer.evaluation.boundaries", "stored_boundaries"),
    "build": ("indexer.indexing.building", "build"),
    "search": ("indexer.retrieval", "search"),
    "evaluate": ("indexer.evaluation", "evaluate"),
    "tune": ("indexer.evaluation.tune", "tune"),
    "import_beir": ("indexer.evaluation.beir", "import_beir"),
    "make_questions": ("indexer.questions", "make_questions"),
    "cached_questions": ("indexer.questions", "cached_questions"),
    "parse_strategy": ("indexer.chunkers", "parse_strategy"),
    "load_documents": ("indexer.loaders", "load_documents"),
    "get_embedder": ("indexer.embeddings", "get_embedder"),
    # what they take
    "Settings": ("indexer.settings", "Settings"),
    "BuildOptions": ("indexer.indexing.options", "BuildOptions"),
    "SearchOptions": ("indexer.retrieval", "SearchOptions"),
    "Query": ("indexer.retrieval", "Query"),
    "StrategySpec": ("indexer.chunkers", "StrategySpec"),
    # what they open and return
    "Index": ("indexer.retrieval", "Index"),
    "Store": ("indexer.store", "Store"),
    "Document": ("indexer.types", "Document"),
    "Chunk": ("indexer.types", "Chunk"),
    "Hit": ("indexer.types", "Hit"),
    "Context": ("indexer.retrieval", "Context"),
    "Span": ("indexer.retrieval", "Span"),
    "BuildReport": ("indexer.indexing.report", "BuildReport"),
    "Evaluation": ("indexer.evaluation", "Evaluation"),
    "TuneResult": ("indexer.evaluation.tune", "TuneResult"),
    "QuestionSet": ("indexer.questions", "QuestionSet"),
    "Embedder": ("indexer.embeddings", "Embedder"),
    # what they raise: every error is an IndexerError; UsageError is the caller's mistake
    "IndexerError": ("indexer.errors", "IndexerError"),
    "UsageError": ("indexer.errors", "UsageError"),
    "UnknownStrategy": ("indexer.errors", "UnknownStrategy"),
    "InvalidParameter": ("indexer.errors", "InvalidParameter"),
    "NothingToIndex": ("indexer.errors", "NothingToIndex"),
    "CollectionNotFound": ("indexer.errors", "CollectionNotFound"),
    "EmbedderMismatch": ("indexer.errors", "EmbedderMismatch"),
    "EmbedderError": ("indexer.errors", "EmbedderError"),
    "StoreError": ("indexer.errors", "StoreError"),
    "DiskFull": ("indexer.errors", "DiskFull"),
    "ReadOnlyIndex": ("indexer.errors", "ReadOnlyIndex"),
    "LockTimeout": ("indexer.errors", "LockTimeout"),
    "StaleIndex": ("indexer.errors", "StaleIndex"),
    "QuestionSetError": ("indexer.errors", "QuestionSetError"),
}

__all__ = [  # the same names as API (tests/test_api_types.py)
    "__version__",
    "chunk",
    "boundaries",
    "stored_boundaries",
    "build",
    "search",
    "evaluate",
    "tune",
    "import_beir",
    "make_questions",
    "cached_questions",
    "parse_strategy",
    "load_documents",
    "get_embedder",
    "Settings",
    "BuildOptions",
    "SearchOptions",
    "Query",
    "StrategySpec",
    "Index",
    "Store",
    "Document",
    "Chunk",
    "Hit",
    "Context",
    "Span",
    "BuildReport",
    "Evaluation",
    "TuneResult",
    "QuestionSet",
    "Embedder",
    "IndexerError",
    "UsageError",
    "UnknownStrategy",
    "InvalidParameter",
    "NothingToIndex",
    "CollectionNotFound",
    "EmbedderMismatch",
    "EmbedderError",
    "StoreError",
    "DiskFull",
    "ReadOnlyIndex",
    "LockTimeout",
    "StaleIndex",
    "QuestionSetError",
]

if TYPE_CHECKING:  # what a type checker reads; at run time __getattr__ loads each on first use
    from .chunkers import StrategySpec, parse_strategy
    from .embeddings import Embedder, get_embedder
    from .errors import (
        CollectionNotFound,
        DiskFull,
        EmbedderError,
        EmbedderMismatch,
        IndexerError,
        InvalidParameter,
        LockTimeout,
        NothingToIndex,
        QuestionSetError,
        ReadOnlyIndex,
        StaleIndex,
        StoreError,
        UnknownStrategy,
        UsageError,
    )
    from .evaluation import Evaluation, evaluate
    from .evaluation.beir import import_beir
    from .evaluation.boundaries import stored_boundaries
    from .evaluation.chunk_boundaries import boundaries
    from .evaluation.tune import TuneResult, tune
    from .indexing.building import build
    from .indexing.options import BuildOptions
    from .indexing.pipeline import chunk
    from .indexing.report import BuildReport
    from .loaders import load_documents
    from .questions import QuestionSet, cached_questions, make_questions
    from .retrieval import Context, Index, Query, SearchOptions, Span, search
    from .settings import Settings
    from .store import Store
    from .types import Chunk, Document, Hit


def __getattr__(name: str) -> Any:
    if name in API:
        module, attr = API[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")
