"""Chunking strategies: one module per kind, registered in `registry` (kinds, presets,
the `name:key=value` syntax)."""

from __future__ import annotations

from .base import Chunker, ChunkerContext, Param
from .blocks import BlocksChunker
from .code import AutoChunker, CodeChunker
from .contextual import ContextualChunker
from .fixed import FixedChunker
from .headers import HeadersChunker
from .parent import ParentChunker
from .registry import (
    DEFAULT_STRATEGY,
    PRESETS,
    REGISTRY,
    StrategySpec,
    canonical_name,
    check_name,
    collection_name,
    collection_names,
    known_strategies,
    parse_strategy,
    register,
)
from .semantic import SemanticChunker

for _cls in (
    FixedChunker,
    HeadersChunker,
    BlocksChunker,
    SemanticChunker,
    ParentChunker,
    ContextualChunker,
    CodeChunker,
    AutoChunker,
):
    register(_cls)

__all__ = [
    "DEFAULT_STRATEGY",
    "PRESETS",
    "REGISTRY",
    "AutoChunker",
    "BlocksChunker",
    "Chunker",
    "ChunkerContext",
    "CodeChunker",
    "ContextualChunker",
    "FixedChunker",
    "HeadersChunker",
    "Param",
    "ParentChunker",
    "SemanticChunker",
    "StrategySpec",
    "canonical_name",
    "check_name",
    "collection_name",
    "collection_names",
    "known_strategies",
    "parse_strategy",
    "register",
]
