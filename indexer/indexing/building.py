"""Build: plan what changed, chunk and embed it, and hand it to the store — per strategy.

The plan (`planning.py`) compares the files with the manifest of the live version. A
first build, a changed setting (strategy parameters, embedder, analyzer...) or `--full`
writes a whole new version; otherwise only new and changed files are chunked and
embedded, and the store applies the difference to the live collection as the next
generation (unchanged chunks of a changed file keep their records). Readers see a new
version only when published; a kill leaves the previous one answering and the next
build removes it (see `indexer.store`). `BuildOptions.on_stage` is told each stage a
build reaches (`options.STAGES`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..chunkers import StrategySpec
from ..embeddings import EmbedderChoice, EmbeddingCache, get_embedder
from ..errors import IndexerError, NothingToIndex
from ..loaders import Discovery, discover
from ..loaders.files import input_labels
from ..settings import Settings, settings_for
from ..store import Entry, Store
from ..store.chroma import is_disk_full
from ..text.analyzer import Analyzer, detect_language
from .embedder_choice import embedder_for, kept_choice, samples, superseded
from .job import BuildJob
from .options import BuildOptions
from .pipeline import nothing_message, resolve_strategies
from .report import BuildReport
from .strategy_build import StrategyBuild, build_settings


def _no_progress(*_args: Any, **_kw: Any) -> AbstractContextManager[Callable[..., None]]:
    return contextlib.nullcontext(lambda n=1: None)


def build(
    paths: Sequence[str | Path],
    strategies: Sequence[str | StrategySpec],
    options: BuildOptions | None = None,
    *,
    settings: Settings | None = None,
    progress: Callable[..., Any] | None = None,
    on_message: Callable[[str], None] | None = None,
    changed: set[str] | None = None,
) -> list[BuildReport]:
    """Build (or update) one collection per strategy. See the module docstring.

    `options` says how (`BuildOptions`), `settings` where (the index folder or Chroma
    server), with which embedder (`settings.embedder`; `auto`, the default, is chosen
    from the files: `embeddings.choose_embedder`) and which Ollama. `changed`
    (doc_ids, from file-system events) limits hashing to them (see `trusted_hashes`)."""
    options = options or BuildOptions()
    settings = settings_for(settings)
    options.check()
    specs = resolve_strategies(list(strategies), options.name)
    new_folder = not settings.db.exists()
    roots: list[str | os.PathLike[str]] = list(paths)
    found = _discovered(roots, options, settings)
    sample = samples(found, options.encoding) if options.lang == "auto" else None
    analyzer = _analyzer(options, sample)
    store = Store(settings, create=True)
    source = [str(Path(p).resolve()) for p in paths]
    reports: list[BuildReport] = []
    try:
        kept = kept_choice(store, specs, source, lang=analyzer.lang, again=options.full)
        choice = embedder_for(settings, found, analyzer.lang, sample, kept)
        model = get_embedder(choice.name, settings)
        with contextlib.closing(EmbeddingCache.in_folder(store.cache_dir)) as cache:
            job = BuildJob(
                store=store,
                settings=settings,
                options=options,
                model=model,
                cache=cache,
                analyzer=analyzer,
                found=found,
                source=source,
                progress=progress or _no_progress,
                say=on_message or _no_message,
                labels=tuple(input_labels(roots)),
                choice=choice,
            )
            _announce(job, choice, superseded(store, specs, source, choice))
            _build_each(job, specs, changed, reports)
    except BaseException as exc:
        # a failed first build leaves no empty index behind
        full = _after_failure(store, exc, discard=new_folder and not reports)
        if full is not None:
            raise full from None
        raise
    return reports


def _discovered(
    roots: list[str | os.PathLike[str]], options: BuildOptions, settings: Settings
) -> Discovery:
    """The files under `roots` the build reads; NothingToIndex, saying why, when none."""
    found = discover(
        roots,
        options.include,
        options.exclude,
        options.max_file_size,
        skip_dirs=(settings.db,),
        max_pdf_pages=options.max_pdf_pages,
    )
    if not found.files:
        raise NothingToIndex(nothing_message(roots, found), found.skipped)
    return found


def _no_message(_msg: str) -> None:
    """Where a build's notes go when no one listens."""


def _after_failure(store: Store, exc: BaseException, discard: bool) -> IndexerError | None:
    """Tidy up after a failed build (`discard`: remove the index folder it created, if
    empty); the error to raise in place of `exc`, if any: a full disk met writing a side
    file or the cache (Chroma's are translated where they happen)."""
    full = store.fault(exc) if is_disk_full(exc) else None
    if discard:
        store.builds.discard_if_empty()
    return full


def _analyzer(options: BuildOptions, sample: list[str] | None) -> Analyzer:
    """The BM25 analyzer of the build: its language given, or detected from `sample`
    (some text of the files)."""
    lang = detect_language(sample) if sample is not None else options.lang
    return Analyzer.for_language(
        lang, stem=options.stem, fold=options.fold, stopwords=options.stopwords
    )


def _build_each(
    job: BuildJob, specs: list[StrategySpec], changed: set[str] | None, reports: list[BuildReport]
) -> None:
    """Build each strategy in turn, its report appended as it is done."""
    for spec in specs:
        reports.append(StrategyBuild(job, spec).run(changed))
        if job.cache.note:
            reports[-1].notes.append(job.cache.note)


def _announce(job: BuildJob, choice: EmbedderChoice, before: list[Entry]) -> None:
    """One line when the build chose its embedder (none was named): which, and why; and
    one for each collection the rule chose another model for `before`, which stays."""
    if choice.by == "rule":
        job.say(f"embedder {choice.name}: {choice.why} (--embedder NAME chooses another)")
    for old in before:
        drop = job.store.command("drop", "-s", old.strategy, "--embedder", old.embedder)
        job.say(
            f"{old.strategy} built with {old.embedder}, chosen before, stays beside it; "
            f"reads naming no model take {choice.name} now: {drop} removes it"
        )


__all__ = ["BuildOptions", "BuildReport", "build", "build_settings"]
