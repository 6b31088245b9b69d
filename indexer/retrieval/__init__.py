"""Searching stored collections: BM25 beside each collection, rank and score fusion, and
the `Index` that answers queries (embedding, bm25 or hybrid) with `Hit`s."""

from .collections import (
    RULE,
    Chosen,
    choose,
    chosen,
    collection_label,
    describe,
    entry_fusion,
    search_summary,
    split_name,
)
from .context.pack import Context, Span
from .index import Index, search
from .options import (
    DEFAULTS,
    FUSIONS,
    MODES,
    Query,
    ResolvedOptions,
    SearchOptions,
    check_query,
    resolve,
)

__all__ = [
    "Context",
    "DEFAULTS",
    "FUSIONS",
    "Index",
    "MODES",
    "Query",
    "RULE",
    "ResolvedOptions",
    "Chosen",
    "SearchOptions",
    "Span",
    "check_query",
    "choose",
    "chosen",
    "collection_label",
    "describe",
    "entry_fusion",
    "resolve",
    "search",
    "search_summary",
    "split_name",
]
