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
import json
import time
from collections.abc import Callable
from pathlib import Path

from ..chunkers import ChunkerContext, StrategySpec
from ..chunkers.unit_map import unit_map
from ..embeddings import EmbeddingCache, get_embedder
from ..errors import NothingToIndex
from ..loaders import SkipFile, Skipped, SourceFile, discover, load_file, sample_text
from ..retrieval.bm25 import SIDE as BM25_SIDE, BM25Builder
from ..retrieval.bm25_repair import load_or_rebuild
from ..retrieval import rows_writer as side_rows
from ..retrieval.exact import SIDE as EXACT_SIDE, defined_in
from ..retrieval.exact import write_for_build as write_exact
from ..retrieval.fusion import calibrated
from .probing import measure_unchanged, measured
from ..settings import Settings, settings_for
from ..store import Entry, Store
from ..store.chroma import is_disk_full
from ..text.analyzer import Analyzer, detect_language
from ..text.tokens import DEFAULT_ENCODING, get_tokenizer
from ..types import Chunk
from ..version import VERSION
from .estimates import Timer, estimate_line
from .job import BuildJob
from .manifest import MANIFEST_FORMAT, file_mtime, with_identities
from .options import BuildOptions
from .pipeline import nothing_message, resolve_strategies
from .planning import Plan, plan_build
from .report import BuildReport
from .units import DocumentUnits

CHUNK_FORMAT = 12  # bump when a chunker's output changes for the same parameters (12: unit maps)
EMBED_BATCH = 256


def _no_progress(*_args, **_kw):
    return contextlib.nullcontext(lambda n=1: None)


def build_settings(spec: StrategySpec, embedder: str, analyzer: Analyzer, encoding: str | None) -> dict:
    """Everything that, if changed, invalidates every chunk or vector of a collection."""
    return {
        "kind": spec.kind, "params": spec.params, "embedder": embedder, "tokenizer": DEFAULT_ENCODING,
        "chunk_format": CHUNK_FORMAT, "encoding": encoding or "", "analyzer": analyzer.to_dict(),
    }  # not the BM25 engine: every engine reads the same files


def build(
    paths: list[str | Path],
    strategies: list[str | StrategySpec],
    options: BuildOptions | None = None,
    *,
    settings: Settings | None = None,
    progress: Callable | None = None,
    on_message: Callable[[str], None] | None = None,
    changed: set[str] | None = None,
) -> list[BuildReport]:
    """Build (or update) one collection per strategy. See the module docstring.

    `options` says how (`BuildOptions`), `settings` where (the index folder or Chroma
    server), with which embedder (`settings.embedder`) and which Ollama. `changed`
    (doc_ids, from file-system events) limits hashing to them (see `trusted_hashes`)."""
    options = options or BuildOptions()
    settings = settings_for(settings)
    options.check()
    specs = resolve_strategies(list(strategies), options.name)
    new_folder = not settings.db.exists()
    found = discover(paths, options.include, options.exclude, options.max_file_size, skip_dirs=(settings.db,),
                     max_pdf_pages=options.max_pdf_pages)
    if not found.files:
        raise NothingToIndex(nothing_message(paths, found), found.skipped)
    model = get_embedder(settings.embedder, settings)
    store = Store(settings, create=True)
    reports: list[BuildReport] = []
    try:
        cache = EmbeddingCache.in_folder(store.cache_dir)
        try:
            lang = _detect(found.files, options.encoding) if options.lang == "auto" else options.lang
            analyzer = Analyzer.for_language(lang, stem=options.stem, fold=options.fold,
                                             stopwords=options.stopwords)
            job = BuildJob(store, settings, options, model, cache, analyzer, found,
                           [str(Path(p).resolve()) for p in paths], progress or _no_progress,
                           on_message or (lambda _msg: None))
            for spec in specs:
                reports.append(_StrategyBuild(job, spec).run(changed))
                if cache.note:
                    reports[-1].notes.append(cache.note)
        finally:
            cache.close()
    except BaseException as exc:
        full = store.fault(exc) if is_disk_full(exc) else None  # a side file, the cache: Chroma's are translated
        if new_folder and not reports:  # a failed first build leaves no empty index behind
            store.builds.discard_if_empty()
        if full is not None:
            raise full from None
        raise
    return reports


def _detect(files: list[SourceFile], encoding: str | None) -> str:
    return detect_language([sample_text(src, encoding) for src in files[:25]])


class _StrategyBuild:
    """One strategy's build within a `BuildJob`."""

    def __init__(self, job: BuildJob, spec: StrategySpec) -> None:
        self.job, self.spec = job, spec
        # what the loops below use most, by short names
        self.store, self.embedder, self.analyzer = job.store, job.embedder(), job.analyzer
        self.encoding, self.progress, self.say = job.options.encoding, job.progress, job.say
        self.timer = Timer()
        self.report = BuildReport(spec.name, self.embedder.name, analyzer=self.analyzer.describe())
        self.build_settings = build_settings(spec, self.embedder.name, self.analyzer, self.encoding)
        self.definitions: list[tuple] = []  # what new chunks define (`exact.defined_in`)
        self.units = DocumentUnits(self.embedder, get_tokenizer(cache_dir=job.store.settings.tiktoken_dir))

    # -- running ---------------------------------------------------------------------------
    def run(self, changed: set[str] | None = None) -> BuildReport:
        t0 = time.perf_counter()
        spec, store, report, options = self.spec, self.store, self.report, self.job.options
        report.skipped.extend(self.job.found.skipped)  # what discovery turned away (size cap, links...)
        report.unsupported = dict(self.job.found.unsupported)
        with store.builds.lease(spec.name, self.embedder.name, wait=options.wait, on_wait=self.say):
            old, report.leftovers_removed = store.builds.prepare(spec.name, self.embedder.name)
            options.stage("locked")
            todo = plan_build(self.job, old, self.build_settings, report, self.timer, changed)
            if old is not None and not todo.reason:
                old = store.builds.deltas.merge(old, report.notes.append)
            if not todo.reason and not todo.process and not todo.removed:
                self._unchanged(old)
            else:
                report.mode = "full" if todo.reason else "incremental"
                report.reason = todo.reason
                if todo.reason:
                    report.added = len(todo.process)
                self._write(old, todo, t0)
        report.seconds = time.perf_counter() - t0
        report.timings = self.timer.totals
        report.embedded, report.cache_hits = self.units.chunk_counts()  # the units' own vectors apart
        return report

    def _unchanged(self, old: Entry) -> None:
        """Nothing changed: check the side files too, and rebuild a damaged BM25 index
        from the stored records (so `build` is how a user repairs one)."""
        report = self.report
        report.mode, report.collection, report.generation = "unchanged", old.collection, old.generation
        report.files, report.chunks = old.files, old.chunks
        report.avg_tokens, report.max_tokens = old.avg_tokens, old.max_tokens
        repaired: list[str] = []
        load_or_rebuild(self.store, old, on_repair=repaired.append, check_all=True)
        report.notes.extend(repaired)
        measure_unchanged(self.store, old, self.embedder)

    def _write(self, old: Entry | None, plan: Plan, t0: float) -> None:
        spec, store, report, settings = self.spec, self.store, self.report, self.job.settings
        engine = self.job.options.bm25_engine
        context = ChunkerContext(embedder=self.embedder, cache_dir=store.cache_dir, ollama_host=settings.ollama_host,
                                 tokenizer=get_tokenizer(cache_dir=settings.tiktoken_dir))
        chunker = spec.create(context=context)
        meta = {"strategy": spec.name, "kind": spec.kind, "params": json.dumps(spec.params, sort_keys=True),
                "tokenizer": DEFAULT_ENCODING, "embedder": self.embedder.name, "dimension": self.embedder.dimension,
                "source": json.dumps(self.job.source), "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        staging = store.builds.begin(spec.name, self.embedder.name, meta, old, full=bool(plan.reason),
                                     on_stage=self.job.options.stage)
        report.generation = staging.generation
        files: dict[str, dict] = {} if plan.reason else dict(plan.manifest["files"])
        skipped: dict[str, dict] = {} if plan.reason else {  # files that still fail as they did: keep the reason
            d: v for d, v in plan.manifest.get("skipped", {}).items() if v.get("hash") and plan.hashes.get(d) == v["hash"]}
        fresh = BM25Builder(self.analyzer)  # a full build's BM25; an incremental one's new chunks
        self.rows = side_rows.RowsWriter.for_build(store, old, staging.side_path(side_rows.SIDE),  # beside the index
                                                   self.embedder.dimension, bool(plan.reason))
        try:
            for doc_id in plan.removed:
                files.pop(doc_id, None)
            live = staging.live([s.doc_id for s in plan.process] + plan.removed, self.rows.previous)
            for doc_id in plan.removed:
                ids, parent_ids = live.get(doc_id, (set(), set()))
                staging.retire(ids, parent_ids)
            self._process(plan, staging, chunker, live, files, skipped, fresh)
            with self.timer("write"):
                staging.close()
            if not files:
                raise NothingToIndex(f"no chunks for strategy {spec.name}: every file was skipped "
                                     f"({len(report.skipped)} skipped); see the reasons above", report.skipped)
            with self.timer("bm25"):
                if plan.reason:
                    bm25 = fresh.finish(engine)
                else:
                    bm25 = load_or_rebuild(store, old).updated(set(staging.retired), fresh, engine)
                staging.save_side(BM25_SIDE, bm25.save)
                staging.save_side(EXACT_SIDE, lambda path: write_exact(
                    store, None if plan.reason else old, staging.retired, self.definitions, files, self.analyzer, path))
            with self.timer("rows"):
                self.rows.finish(staging.retired)
            staging.write_manifest({"format": MANIFEST_FORMAT, "settings": self.build_settings,
                                    "files": with_identities(files, plan.stats), "skipped": skipped})
            entry = self._entry(old, staging, chunker, files, t0)
            with self.timer("measure"):  # the embedder on this collection (indexing.probing)
                entry.extra["fusion"]["measured"] = measured(store, staging.stamp(entry), self.embedder,
                                                             None if plan.reason else old)
            report.retired = len(staging.retired)
            report.notes.extend(filter(None, [chunker.build_summary()]))
        except BaseException:
            self.rows.abandon()
            staging.abandon()
            raise
        # the switch, outside the try: nothing may undo a published version (a failure
        # before the switch leaves unpublished records, which the next build removes)
        with self.timer("publish"):
            staging.publish(entry)
        report.collection = staging.name
        if plan.reason:
            store.builds.collect_after_full_build()

    def _process(self, plan: Plan, staging, chunker, live, files, skipped, fresh: BM25Builder) -> None:
        report = self.report
        batch: list[Chunk] = []
        weights: list[float] = []
        hashes = plan.hashes

        parents: list[Chunk] = []  # written with the next batch: one write, not a wait per file

        def flush(advance) -> None:
            if parents:
                staging.add_parents(list(parents))
                parents.clear()
            if not batch:
                return
            t0 = time.perf_counter()
            with self.timer("embed"):
                vectors = self.embedder.embed_documents([c.indexed_text for c in batch])
            if not report.written:  # the first batch: say how long the rest will take, if long
                line = estimate_line(len(batch), sum(weights), time.perf_counter() - t0, total)
                if line:
                    self.say(line)
            with self.timer("write wait"):
                metas = staging.add(list(batch), vectors)
            with self.timer("rows"):  # also where the build waits while Chroma's write holds the GIL
                self.rows.add_chunks(batch, metas, vectors)
            report.written += len(batch)
            advance(int(sum(weights)))
            batch.clear()
            weights.clear()

        total = sum(src.size for src in plan.process)
        with self.progress(self.spec.name, total) as advance:
            for src in plan.process:
                with self.timer("load"):
                    try:
                        doc = load_file(src, self.encoding)
                    except SkipFile as exc:
                        report.skipped.append(Skipped(src.doc_id, str(exc)))
                        if not plan.reason and src.doc_id in plan.manifest["files"]:  # indexed before: now out
                            report.changed, report.removed = report.changed - 1, report.removed + 1
                        else:
                            report.added -= 1
                        skipped[src.doc_id] = {"hash": hashes[src.doc_id], "reason": str(exc)}
                        files.pop(src.doc_id, None)
                        old_ids, old_parents = live.get(src.doc_id, (set(), set()))
                        staging.retire(old_ids, old_parents)
                        advance(src.size)
                        continue
                report.warnings.extend(Skipped(doc.doc_id, w) for w in doc.warnings)
                old_ids, old_parents = live.get(doc.doc_id, (set(), set()))
                parent_ids: set[str] = set()
                with self.timer("units"):
                    units = self.units.of(doc)
                for p in self.timer.each("chunk", chunker.iter_parent_chunks(doc)):
                    parent_ids.add(p.id)
                    p.units = unit_map(p, units, doc)
                    if p.id not in old_parents:
                        parents.append(p)
                        if len(parents) >= EMBED_BATCH:  # written now: a big file's sections are not held
                            staging.add_parents(list(parents))
                            parents.clear()
                # the file's chunks stream through in batches: memory holds none of them, only
                # which of the file's previous chunks came again (the others are retired)
                kept: set[str] = set()
                count = tokens = max_tokens = 0
                done = 0  # characters of the document the chunks so far reach
                scale = src.size / max(len(doc.text), 1)
                for c in self.timer.each("chunk", chunker.iter_chunks(doc)):
                    count += 1
                    tokens += c.n_tokens
                    max_tokens = max(max_tokens, c.n_tokens)
                    if c.id in old_ids:
                        kept.add(c.id)
                        continue
                    c.units = unit_map(c, units, doc)
                    with self.timer("analyse"):  # BM25's terms
                        fresh.add([c.id], [c.indexed_text])
                    self.definitions.extend(defined_in(c, self.analyzer))
                    batch.append(c)
                    # progress follows the chunks embedded, so one huge file does not sit at 0%
                    weights.append(max(c.end - done, 0) * scale)
                    done = max(done, c.end)
                    if len(batch) >= EMBED_BATCH:
                        flush(advance)
                staging.retire(old_ids - kept, old_parents - parent_ids)
                files[doc.doc_id] = {"hash": hashes[src.doc_id], "size": src.size, "mtime": file_mtime(src.path), "chunks": count,
                                     "tokens": tokens, "max_tokens": max_tokens, "newline": doc.newline, "warnings": doc.warnings}
                advance(int(max(len(doc.text) - done, 0) * scale))  # what no new chunk covered
            flush(advance)

    def _entry(self, old: Entry | None, staging, chunker, files: dict, t0: float) -> Entry:
        report = self.report
        report.files_from(files)
        extra = {"analyzer": self.analyzer.to_dict(), "bm25_engine": self.job.options.bm25_engine,
                 "fusion": calibrated(self.embedder.name, files, self.analyzer.lang)}
        if chunker.build_report():
            extra["chunker"] = chunker.build_report()
        if old is not None and old.extra.get("search"):
            extra["search"] = old.extra["search"]  # settings saved by `indexer tune --save` outlive rebuilds
        return Entry(
            strategy=self.spec.name, embedder=self.embedder.name, collection=staging.name,
            dimension=self.embedder.dimension, kind=self.spec.kind, params=self.spec.params, tokenizer=DEFAULT_ENCODING,
            version=VERSION, built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"), source=self.job.source,
            files=report.files, chunks=report.chunks, avg_tokens=round(report.avg_tokens, 2),
            max_tokens=report.max_tokens, build_seconds=round(time.perf_counter() - t0, 3), extra=extra,
        )


__all__ = ["BuildOptions", "BuildReport", "build", "build_settings"]
