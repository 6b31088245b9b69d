"""How a build runs, apart from where (`Settings`): `BuildOptions`, with the library's
defaults (the CLI shows them, and `watch` passes them on)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

from ..errors import UsageError
from ..retrieval.bm25.index import ENGINES
from ..settings import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_PDF_PAGES
from ..text.analyzer import LANGUAGE_DEFAULTS

# the BM25 analyzer's languages; auto: decided from the documents
LANGUAGES = (
    "auto",
    *LANGUAGE_DEFAULTS,
)
# the stages a build passes, in order, each told to `BuildOptions.on_stage`
STAGES = ("locked", "embedding", "publish", "published")


@dataclass(frozen=True)
class BuildOptions:
    """How a build runs, apart from where (`Settings`): which files and how they are read,
    the collection name, the BM25 analyzer and engine, and what to do about a previous or
    running build. The defaults are the library's (the CLI shows them).

    `on_stage(name)`, when given, is called as each strategy's build reaches a stage
    (`STAGES`): `locked` (its build lease is held, nothing planned yet), `embedding` (a
    batch of new records was written; once per batch, none when no file changed),
    `publish` (everything is written, the switch is next) and `published` (readers see
    the new version). It runs in the building thread: raising there stops the build as
    any failure does (before `published`, the previous version stays live), and
    blocking there holds the build (the crash tests pause a build at a stage this way)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES
    encoding: str | None = None  # decode every file with this encoding instead of detecting it
    name: str | None = None  # collection name for a single strategy
    full: bool = False  # rebuild from scratch, not only what changed
    wait: bool = True  # wait for a running build of the strategy (else LockTimeout)
    lang: str = "auto"  # BM25 analyzer language (LANGUAGES)
    stem: int | None = None  # BM25 prefix stem length, 0 = off (None: the language's)
    fold: bool | None = None  # BM25: fold diacritics (None: the language's)
    stopwords: bool | None = None  # BM25: drop common words (None: the language's)
    bm25_engine: str = "auto"  # ENGINES (auto: postings)
    # embed every unit (sentence, list item, table row, code run) at build time, as
    # answer-sized context did before issue 53: 2.5-4x a build's embedding; by default a
    # question embeds the few it needs (`retrieval.context.vectors`)
    unit_vectors: bool = False
    on_stage: Callable[[str], None] | None = None  # told each stage a build reaches (STAGES)

    def stage(self, name: str) -> None:
        """Tell `on_stage` (if any) that a build reached stage `name`."""
        if self.on_stage is not None:
            self.on_stage(name)

    def check(self) -> None:
        if self.bm25_engine not in ENGINES:
            raise UsageError(
                f"unknown BM25 engine {self.bm25_engine!r}; use one of {', '.join(ENGINES)}"
            )
        if self.lang not in LANGUAGES:
            raise UsageError(
                f"--lang must be {', '.join(LANGUAGES[1:])} or auto, not {self.lang!r}"
            )
        if self.stem is not None and self.stem < 0:
            raise UsageError(f"--stem must be 0 (off) or a prefix length, not {self.stem}")


BUILD_FIELDS = {f.name for f in fields(BuildOptions)}
