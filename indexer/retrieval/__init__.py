"""Searching stored collections: BM25 beside each collection, rank and score fusion, and
the `Index` that answers queries (embedding, bm25 or hybrid) with `Hit`s."""

from .context_pack import Context, Span
from .index import Index, entry_fusion, search, search_summary
from .options import DEFAULTS, FUSIONS, MODES, Query, SearchOptions, check_query, resolve

__all__ = ["Context", "DEFAULTS", "FUSIONS", "Index", "MODES", "Query", "SearchOptions", "Span", "check_query",
           "entry_fusion", "resolve", "search", "search_summary"]
