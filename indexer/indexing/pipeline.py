"""Chunk a corpus without storing anything: the library behind `indexer chunk`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..chunkers import ChunkerContext, StrategySpec, parse_strategy
from ..embeddings import get_embedder
from ..errors import NothingToIndex
from ..loaders import Discovery, load_documents
from ..settings import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_PDF_PAGES, Settings, settings_for
from ..text.analyzer import detect_language
from ..text.tokens import get_tokenizer
from ..types import Chunk, Document
from .embedder_choice import embedder_for, samples


@dataclass
class ChunkStats:
    """Per-strategy summary numbers of a chunking run."""

    strategy: str
    description: str
    files: int = 0
    chunks: int = 0
    tokens: int = 0
    max_tokens: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    def add(self, chunk: Chunk) -> None:
        self.chunks += 1
        self.tokens += chunk.n_tokens
        self.max_tokens = max(self.max_tokens, chunk.n_tokens)
        self.kinds[chunk.kind] = self.kinds.get(chunk.kind, 0) + 1

    @property
    def avg_tokens(self) -> float:
        return self.tokens / self.chunks if self.chunks else 0.0

    def to_dict(self) -> dict:
        return {
            "strategy": self.strategy,
            "description": self.description,
            "files": self.files,
            "chunks": self.chunks,
            "avg_tokens": round(self.avg_tokens, 1),
            "max_tokens": self.max_tokens,
            "kinds": self.kinds,
        }


def resolve_strategies(
    strategies: Sequence[str | StrategySpec], name: str | None = None
) -> list[StrategySpec]:
    specs = [s if isinstance(s, StrategySpec) else parse_strategy(s) for s in strategies]
    if name is not None:
        if len(specs) != 1:
            raise ValueError("--name applies to a single --strategy")
        specs = [
            parse_strategy(strategies[0], name=name)
            if not isinstance(strategies[0], StrategySpec)
            else specs[0]
        ]
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            from ..errors import UsageError

            raise UsageError(f"strategy {spec.name!r} given twice")
        seen.add(spec.name)
    return specs


def iter_chunks(
    paths: list[str | os.PathLike],
    strategies: list[str | StrategySpec],
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    encoding: str | None = None,
    skip_dirs: tuple[str | os.PathLike, ...] = (),
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
    *,
    settings: Settings | None = None,
) -> tuple[Discovery, dict[str, ChunkStats], Iterator[tuple[str, Document, list[Chunk]]]]:
    """Stream (strategy name, document, its chunks) for every document and strategy.

    Returns the discovery report (skipped files are appended while streaming), the
    per-strategy stats (filled while streaming) and the stream itself. `settings` gives
    the tokenizer's cache folder, the embedder of strategies that embed while chunking
    (semantic: `settings.embedder`) and the Ollama host (contextual's LLM).
    """
    settings = settings_for(settings)
    specs = resolve_strategies(strategies)
    found, docs = load_documents(
        paths, include, exclude, max_file_size, skip_dirs, encoding, max_pdf_pages
    )
    if not found.files:
        raise NothingToIndex(nothing_message(paths, found), found.skipped)
    embedder = None
    if any(s.uses_embedder for s in specs):  # the embedder a build of these files would choose
        sample = samples(found, encoding)
        choice = embedder_for(settings, found, detect_language(sample), sample)
        embedder = get_embedder(choice.name, settings)
    context = ChunkerContext(
        tokenizer=get_tokenizer(cache_dir=settings.tiktoken_dir),
        embedder=embedder,
        ollama_host=settings.ollama_host,
    )
    chunkers = [spec.create(context=context) for spec in specs]
    stats = {spec.name: ChunkStats(spec.name, spec.describe()) for spec in specs}

    def stream() -> Iterator[tuple[str, Document, list[Chunk]]]:
        loaded = 0
        for doc in docs:
            loaded += 1
            for chunker in chunkers:
                chunks = chunker.chunk(doc)
                st = stats[chunker.name]
                st.files += 1
                for c in chunks:
                    st.add(c)
                yield chunker.name, doc, chunks
        if not loaded:
            raise NothingToIndex(nothing_message(paths, found), found.skipped)

    return found, stats, stream()


def nothing_message(paths: Iterable[str | os.PathLike[str]], found: Discovery) -> str:
    where = ", ".join(str(p) for p in paths)
    detail = ""
    if found.skipped:
        detail = f" ({len(found.skipped)} skipped; see the reasons above)"
    elif found.unsupported:
        exts = ", ".join(sorted(found.unsupported))
        detail = f" (only unsupported file types: {exts})"
    return (
        f"nothing to index in {where}{detail}; "
        "point at a folder with Markdown, text, HTML, PDF or source files, or check --include/--exclude"
    )


def chunk(
    paths: list[str | os.PathLike],
    strategies: list[str | StrategySpec],
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    encoding: str | None = None,
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
    *,
    settings: Settings | None = None,
) -> tuple[dict[str, list[Chunk]], dict[str, ChunkStats], Discovery]:
    """Chunk a corpus in memory: {strategy name: chunks}, stats, discovery report."""
    found, stats, stream = iter_chunks(
        list(paths),
        list(strategies),
        include,
        exclude,
        max_file_size,
        encoding,
        max_pdf_pages=max_pdf_pages,
        settings=settings,
    )
    out: dict[str, list[Chunk]] = {name: [] for name in stats}
    for name, _doc, chunks in stream:
        out[name].extend(chunks)
    return out, stats, found
