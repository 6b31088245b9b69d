"""The options commands share: what to read, where the index lives, which embedder, what a
build takes, and the output switches; their parameter types, and the `BuildOptions` the
build options make. How to search: `search_options`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..settings import (
    DEFAULT_DB_DIR,
    DEFAULT_EMBEDDER,
    DEFAULT_MAX_FILE_SIZE,
    DEFAULT_MAX_PDF_PAGES,
)
from .groups import Output, Place, grouped
from .library import (
    LibraryChoice,
    LibraryOption,
    build_defaults,
    default_strategy,
    engines,
    languages,
)

if TYPE_CHECKING:
    from ..indexing.options import BuildOptions

F = TypeVar("F", bound=Callable[..., Any])


# -- options ----------------------------------------------------------------------------------
def _parse_size(value: str) -> int:
    text = str(value).strip().upper().replace(" ", "")
    units = {
        "KB": 1024,
        "MB": 1024**2,
        "GB": 1024**3,
        "K": 1024,
        "M": 1024**2,
        "G": 1024**3,
        "B": 1,
    }
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


class SizeType(click.ParamType):
    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            size = value if isinstance(value, int) else _parse_size(value)
        except ValueError:
            self.fail(f"{value!r} is not a size like 5MB or 200KB", param, ctx)
        if size < 1:
            self.fail(f"{value!r} is not a positive size like 5MB or 200KB", param, ctx)
        return size


def corpus_options(func: F) -> F:
    """Options that select and read input files."""
    func = click.option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="Only index files matching this gitignore-style pattern (repeatable).",
    )(func)
    func = click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Skip files or folders matching this gitignore-style pattern (repeatable).",
    )(func)
    func = click.option(
        "--max-file-size",
        type=SizeType(),
        default=DEFAULT_MAX_FILE_SIZE,
        show_default=f"{DEFAULT_MAX_FILE_SIZE / 1024**2:g}MB",
        help="Skip files larger than this.",
    )(func)
    func = click.option(
        "--encoding",
        default=None,
        help="Decode every file with this encoding instead of detecting it.",
    )(func)
    return func


class StrategiesOption(click.Option):
    """`--strategy`, repeatable, whose help lists the presets from the registry: read
    when help is shown, so `indexer --help` imports no chunker."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from ..chunkers import PRESETS, REGISTRY

        presets = "; ".join(
            f"{name} = {kind}:{','.join(f'{k}={v}' for k, v in values.items())}" if values else name
            for name, (kind, values) in PRESETS.items()
        )
        self.help = (
            f"Strategy, repeatable [default: {default_strategy()}]: a preset, or a kind with parameters "
            f"(fixed:size=32,overlap=8; any preset takes them too). Presets: {presets}. "
            f"Kinds: {', '.join(REGISTRY)}."
        )
        return super().get_help_record(ctx)


def strategies_option(func: F) -> F:
    return click.option(
        "--strategy", "-s", "strategies", multiple=True, metavar="S", cls=StrategiesOption
    )(func)


def max_pdf_pages_option(func: F) -> F:
    return click.option(
        "--max-pdf-pages",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_PDF_PAGES,
        show_default=True,
        help="Skip PDFs with more pages than this (PDFs are capped by pages, not --max-file-size).",
    )(func)


def json_option(func: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="JSON lines: one object per result."
    )(func)


def quiet_option(func: F) -> F:
    return click.option("--quiet", "-q", is_flag=True, help="No progress bars or notes on stderr.")(
        func
    )


def db_options(func: F) -> F:
    """Where the index lives."""
    func = click.option(
        "--db",
        type=click.Path(file_okay=False),
        default=None,
        help=f"Index folder [env INDEXER_DB; default ./{DEFAULT_DB_DIR}].",
    )(func)
    func = click.option(
        "--chroma-url",
        default=None,
        metavar="URL",
        help="Use a Chroma server (http://host:port) instead of the embedded database "
        "[env INDEXER_CHROMA_URL].",
    )(func)
    return func


def ollama_option(func: F) -> F:
    """For commands that embed or call an LLM."""
    return click.option(
        "--ollama-host",
        default=None,
        metavar="URL",
        help="Ollama server for ollama:<model> embedders and LLMs [env OLLAMA_HOST].",
    )(func)


def embedder_option(func: F) -> F:
    return click.option(
        "--embedder", default=None, metavar="NAME", cls=LibraryOption, help=_embedder_help
    )(func)


def _embedder_help() -> str:
    from ..embeddings import ENGLISH_EMBEDDER, MULTILINGUAL_EMBEDDER, PREFIXED, REGISTRY

    names = [name for name in REGISTRY if name not in PREFIXED]
    chosen = (
        f"{DEFAULT_EMBEDDER} (default: chosen per collection, {ENGLISH_EMBEDDER} for English "
        f"and source code, else {MULTILINGUAL_EMBEDDER})"
    )
    return f"{chosen}, {', '.join(names)}, or {' / '.join(f'{p}:<model>' for p in sorted(PREFIXED))} [env INDEXER_EMBEDDER]."


def built_with_option(func: F) -> F:
    """`--embedder` on commands that read: the collection built with that embedder."""
    return click.option(
        "--embedder", default=None, metavar="NAME", cls=LibraryOption, help=_built_with_help
    )(func)


def _built_with_help() -> str:
    return (
        "Read the collection built with this embedder (names as for build); a strategy built with several "
        "is read through the one INDEXER_EMBEDDER names, else the one a build naming none chose."
    )


def store_options(func: F) -> F:
    """Where the index lives, which embedding model a build embeds with, and where Ollama is."""
    return embedder_option(ollama_option(db_options(func)))


def read_options(func: F) -> F:
    """Where the index lives, which embedder's collection to read, and where Ollama is."""
    return built_with_option(ollama_option(db_options(func)))


# what `build` takes, and `watch` too (a watch is a series of builds): defined once
BUILD_ARGS: tuple[Callable[[Any], Any], ...] = (
    click.option(
        "--name", default=None, help="Collection name for a single --strategy (default: derived)."
    ),
    corpus_options,
    max_pdf_pages_option,
    click.option(
        "--full",
        is_flag=True,
        help="Rebuild from scratch instead of only changed files (watch: at its first sync).",
    ),
    click.option(
        "--no-wait",
        is_flag=True,
        help="Fail at once if another build of the strategy is running (watch: retry later) "
        "instead of waiting for it.",
    ),
    click.option(
        "--lang",
        type=LibraryChoice(languages),
        default=None,
        cls=LibraryOption,
        help=lambda: (
            f"BM25 analyzer language [default: {build_defaults().lang}, decided from the documents; "
            f"watch: the collection's, else {build_defaults().lang}]."
        ),
    ),
    click.option(
        "--stem",
        type=int,
        default=None,
        help="BM25 prefix stem length, 0 = off [default: per language; watch: the collection's].",
    ),
    click.option(
        "--fold/--no-fold",
        default=None,
        help="BM25: fold diacritics (ç→c, ı→i...) [default: per language; watch: the collection's].",
    ),
    click.option(
        "--stopwords/--no-stopwords",
        default=None,
        help="BM25: drop common words [default: per language; watch: the collection's].",
    ),
    click.option(
        "--bm25-engine",
        type=LibraryChoice(engines),
        default=None,
        cls=LibraryOption,
        help=lambda: (
            "BM25 engine stored with the collection (auto: postings, our own over mapped files; "
            "rank-bm25: the reference; bm25s: pip install 'indexer-rag[fast]') "
            f"[default: {build_defaults().bm25_engine}; watch: the collection's, else "
            f"{build_defaults().bm25_engine}]."
        ),
    ),
    click.option(
        "--unit-vectors",
        is_flag=True,
        help="Embed every sentence, list item, table row and code run for answer-sized context "
        "(--budget) now, as builds did before 0.2: 2.5-4x the embedding of the chunks alone. "
        "By default a question embeds the few units it reads, once, into the embedding cache.",
    ),
)


@dataclass(frozen=True, kw_only=True)
class BuildArgs:
    """What a build was asked on the command line (`BUILD_ARGS`): `options()` makes the
    library's `BuildOptions` of it."""

    name: str | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    encoding: str | None = None
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES
    full: bool = False
    no_wait: bool = False
    lang: str | None = None
    stem: int | None = None
    fold: bool | None = None
    stopwords: bool | None = None
    bm25_engine: str | None = None
    unit_vectors: bool = False

    def options(self) -> BuildOptions:
        """The `BuildOptions` these make (those left out: the library's)."""
        from ..indexing.options import BuildOptions

        library = BuildOptions()  # its lang and engine stand for those left out
        return BuildOptions(
            include=self.include,
            exclude=self.exclude,
            max_file_size=self.max_file_size,
            max_pdf_pages=self.max_pdf_pages,
            encoding=self.encoding,
            name=self.name,
            full=self.full,
            wait=not self.no_wait,
            stem=self.stem,
            fold=self.fold,
            stopwords=self.stopwords,
            lang=library.lang if self.lang is None else self.lang,
            bm25_engine=library.bm25_engine if self.bm25_engine is None else self.bm25_engine,
            unit_vectors=self.unit_vectors,
        )


@dataclass(frozen=True, kw_only=True)
class CorpusArgs:
    """Which files are read, and how (`corpus_options`)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    encoding: str | None = None


corpus_group = grouped("files", CorpusArgs, corpus_options)
output_options = grouped("output", Output, quiet_option, json_option)
where_to_build = grouped("where", Place, store_options)
where_to_read = grouped("where", Place, read_options)
where_index = grouped("where", Place, db_options)


def build_options(func: F) -> F:
    """The options of `build` (and `watch`): the strategies, then three groups: `where`
    (a `Place`), `build` (`BuildArgs`), `output` (`Output`)."""
    func = output_options(func)
    func = grouped("build", BuildArgs, *BUILD_ARGS)(func)
    func = where_to_build(func)
    return strategies_option(func)
