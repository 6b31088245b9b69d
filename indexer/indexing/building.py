"""Build: plan what changed, chunk and embed it, and hand it to the store — per strategy.

The plan compares the files with the manifest of the live version. A first build, a
changed setting (strategy parameters, embedder, analyzer...) or `--full` writes a whole
new version; otherwise only new and changed files are chunked and embedded, and the store
applies the difference to the live collection as the next generation (unchanged chunks
of a changed file keep their records). Readers see a new version only when published; a
kill leaves the previous one answering and the next build removes it (see `indexer.store`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..chunkers import ChunkerContext, StrategySpec
from ..chunkers.unit_map import unit_map
from ..embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from ..errors import NothingToIndex
from ..loaders import SkipFile, Skipped, SourceFile, discover, load_file, sample_text
from ..retrieval.bm25 import SIDE as BM25_SIDE, BM25Builder, load_or_rebuild
from ..retrieval import rows as side_rows
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
from .manifest import (MANIFEST_FORMAT, content_hash, file_mtime, identity, read_manifest, trusted_hashes,
                       why_full, with_identities)
from .options import BUILD_FIELDS, BuildOptions
from .pipeline import nothing_message, resolve_strategies
from .units import DocumentUnits

CHUNK_FORMAT = 12  # bump when a chunker's output changes for the same parameters (12: unit maps)
EMBED_BATCH = 256


@dataclass
class BuildReport:
    strategy: str
    embedder: str
    collection: str = ""
    mode: str = "full"  # full | incremental | unchanged
    reason: str = ""
    files: int = 0
    chunks: int = 0
    avg_tokens: float = 0.0
    max_tokens: int = 0
    embedded: int = 0  # texts the model computed
    cache_hits: int = 0
    written: int = 0  # records written
    retired: int = 0  # records the new version no longer has (incremental builds)
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    generation: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[Skipped] = field(default_factory=list)
    leftovers_removed: list[str] = field(default_factory=list)
    analyzer: str = ""
    notes: list[str] = field(default_factory=list)  # what the strategy itself reports (LLM cost...)
    unsupported: dict[str, int] = field(default_factory=dict)  # file types not indexed, by extension

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["skipped"] = [{"doc_id": s.doc_id, "reason": s.reason} for s in self.skipped]
        data["warnings"] = [{"doc_id": s.doc_id, "reason": s.reason} for s in self.warnings]
        data["timings"] = {k: round(v, 3) for k, v in self.timings.items()}
        data["seconds"] = round(self.seconds, 3)
        data["avg_tokens"] = round(self.avg_tokens, 1)
        return data


def _no_progress(*_args, **_kw):
    return contextlib.nullcontext(lambda n=1: None)


def checkpoint(settings: Settings, name: str) -> None:
    """A fault-injection point for the crash tests: with INDEXER_PAUSE_AT=<name> in the
    environment, the build writes <name> to INDEXER_PAUSE_FILE and stops here until it
    is killed or the file is removed (`<name>:<seconds>`: for that long, then goes on).
    Points: locked, embedding, publish, published."""
    point, _, seconds = settings.pause_at.partition(":")
    if point == name and name not in _paused:  # once: the point may come again (every batch)
        _paused.add(name)
        Path(settings.pause_file).write_text(name)
        time.sleep(float(seconds)) if seconds else _while_exists(Path(settings.pause_file))


_paused: set[str] = set()


def _while_exists(path: Path) -> None:
    while path.exists():
        time.sleep(0.05)


def build_settings(spec: StrategySpec, embedder: str, analyzer: Analyzer, engine: str, encoding: str | None) -> dict:
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
    **overrides,
) -> list[BuildReport]:
    """Build (or update) one collection per strategy. See the module docstring.

    `options` says how (`BuildOptions`), `settings` where (the index folder or Chroma
    server, the embedder to build with, Ollama); keyword overrides of either's fields
    (`db=`, `embedder=`, `full=`, `bm25_engine=`...) are applied on top. `changed`
    (doc_ids, from file-system events) limits hashing to them (see `trusted_hashes`)."""
    if unknown := sorted(set(overrides) - BUILD_FIELDS - {f.name for f in fields(Settings)}):
        raise TypeError(f"build() got unexpected keyword arguments: {', '.join(unknown)}")
    given = {k: v for k, v in overrides.items() if k in BUILD_FIELDS}
    options = replace(options or BuildOptions(), **given)
    settings = settings_for(settings, **{k: v for k, v in overrides.items() if k not in BUILD_FIELDS})
    options.check()
    include, exclude, encoding, lang = options.include, options.exclude, options.encoding, options.lang
    specs = resolve_strategies(list(strategies), options.name)
    new_folder = not settings.db.exists()
    found = discover(paths, include, exclude, options.max_file_size, skip_dirs=(settings.db,),
                     max_pdf_pages=options.max_pdf_pages)
    if not found.files:
        raise NothingToIndex(nothing_message(paths, found), found.skipped)
    model = get_embedder(settings.embedder, settings)
    store = Store(settings, create=True)
    reports: list[BuildReport] = []
    try:
        cache = EmbeddingCache.in_folder(store.cache_dir)
        try:
            lang = _detect(found.files, encoding) if lang == "auto" else lang
            analyzer = Analyzer.for_language(lang, stem=options.stem, fold=options.fold, stopwords=options.stopwords)
            source = [str(Path(p).resolve()) for p in paths]
            for spec in specs:
                builder = _StrategyBuild(store, spec, CachedEmbedder(model, cache), analyzer, options.bm25_engine,
                                         encoding, found, source, progress or _no_progress, on_message, settings)
                reports.append(builder.run(full=options.full, wait=options.wait, changed=changed))
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


@dataclass
class _Plan:
    reason: str  # why the whole collection is rebuilt ("" for an incremental build)
    process: list[SourceFile]  # new and changed files
    unchanged: list[str]
    removed: list[str]
    hashes: dict[str, str]
    manifest: dict | None


class _StrategyBuild:
    def __init__(self, store: Store, spec: StrategySpec, embedder: CachedEmbedder, analyzer: Analyzer, engine: str,
                 encoding: str | None, found, source: list[str], progress, on_message, settings: Settings) -> None:
        self.store, self.spec, self.embedder = store, spec, embedder
        self.analyzer, self.engine, self.encoding = analyzer, engine, encoding
        self.found, self.source, self.progress = found, source, progress
        self.say = on_message or (lambda _msg: None)
        self.settings = settings
        self.timer = Timer()
        self.report = BuildReport(spec.name, embedder.name, analyzer=analyzer.describe())
        self.build_settings = build_settings(spec, embedder.name, analyzer, engine, encoding)
        self.definitions: list[tuple] = []  # what new chunks define (`exact.defined_in`)
        self.units = DocumentUnits(embedder, get_tokenizer(cache_dir=settings.tiktoken_dir))

    # -- the plan --------------------------------------------------------------------------
    def plan(self, old: Entry | None, full: bool, changed: set[str] | None = None) -> _Plan:
        manifest = read_manifest(self.store, old) if old else None
        reason = ""
        if full:
            reason = "--full"
        elif old is None:
            others = [e.embedder for e in self.store.catalogue.entries() if e.strategy == self.spec.name]
            reason = f"first build with {self.embedder.name} (kept: {', '.join(others)})" if others else "first build"
        elif manifest is None:
            reason = "no readable file manifest beside the previous version"
        elif {k: v for k, v in manifest["settings"].items() if k in self.build_settings} != self.build_settings:
            reason = why_full(manifest["settings"], self.build_settings)
        trusted = trusted_hashes(manifest, changed) if not reason else {}
        with self.timer("hash"):
            self.stats = {src.doc_id: identity(src.path) for src in self.found.files}  # before reading
            hashes = {src.doc_id: content_hash(src, trusted, self.stats[src.doc_id]) for src in self.found.files}
        by_id = {src.doc_id: src for src in self.found.files}
        if reason:
            return _Plan(reason, list(by_id.values()), [], [], hashes, None)
        old_files: dict[str, dict] = manifest["files"]
        old_skipped: dict[str, dict] = manifest.get("skipped", {})
        process, unchanged = [], []
        for doc_id, src in by_id.items():
            h = hashes[doc_id]
            if doc_id in old_files and old_files[doc_id]["hash"] == h and h:
                unchanged.append(doc_id)
                self.report.warnings.extend(Skipped(doc_id, w) for w in old_files[doc_id].get("warnings", ()))
            elif doc_id in old_skipped and old_skipped[doc_id].get("hash") == h and h:
                self.report.skipped.append(Skipped(doc_id, old_skipped[doc_id].get("reason", "skipped")))
            else:
                process.append(src)
                if doc_id in old_files:
                    self.report.changed += 1
                else:
                    self.report.added += 1
        removed = [d for d in old_files if d not in by_id]
        self.report.removed, self.report.unchanged = len(removed), len(unchanged)
        return _Plan("", process, unchanged, removed, hashes, manifest)

    # -- running ---------------------------------------------------------------------------
    def run(self, full: bool, wait: bool, changed: set[str] | None = None) -> BuildReport:
        t0 = time.perf_counter()
        spec, store, report = self.spec, self.store, self.report
        report.skipped.extend(self.found.skipped)  # what discovery turned away (size cap, links...)
        report.unsupported = dict(self.found.unsupported)
        with store.builds.lease(spec.name, self.embedder.name, wait=wait, on_wait=self.say):
            old, report.leftovers_removed = store.builds.prepare(spec.name, self.embedder.name)
            checkpoint(self.settings, "locked")
            plan = self.plan(old, full, changed)
            if old is not None and not plan.reason:
                old = store.builds.deltas.merge(old, report.notes.append)
            if not plan.reason and not plan.process and not plan.removed:
                self._unchanged(old)
            else:
                report.mode = "full" if plan.reason else "incremental"
                report.reason = plan.reason
                if plan.reason:
                    report.added = len(plan.process)
                self._write(old, plan, t0)
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

    def _write(self, old: Entry | None, plan: _Plan, t0: float) -> None:
        spec, store, report = self.spec, self.store, self.report
        context = ChunkerContext(embedder=self.embedder, cache_dir=store.cache_dir, ollama_host=self.settings.ollama_host,
                                 tokenizer=get_tokenizer(cache_dir=self.settings.tiktoken_dir))
        chunker = spec.create(context=context)
        meta = {"strategy": spec.name, "kind": spec.kind, "params": json.dumps(spec.params, sort_keys=True),
                "tokenizer": DEFAULT_ENCODING, "embedder": self.embedder.name, "dimension": self.embedder.dimension,
                "source": json.dumps(self.source), "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        staging = store.builds.begin(spec.name, self.embedder.name, meta, old, full=bool(plan.reason),
                              checkpoint=lambda name: checkpoint(self.settings, name))
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
                    bm25 = fresh.finish(self.engine)
                else:
                    bm25 = load_or_rebuild(store, old).updated(set(staging.retired), fresh, self.engine)
                staging.save_side(BM25_SIDE, bm25.save)
                staging.save_side(EXACT_SIDE, lambda path: write_exact(
                    store, None if plan.reason else old, staging.retired, self.definitions, files, self.analyzer, path))
            with self.timer("rows"):
                self.rows.finish(staging.retired)
            staging.write_manifest({"format": MANIFEST_FORMAT, "settings": self.build_settings,
                                    "files": with_identities(files, self.stats), "skipped": skipped})
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

    def _process(self, plan: _Plan, staging, chunker, live, files, skipped, fresh: BM25Builder) -> None:
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
        report.files = len(files)
        report.chunks = sum(f.get("chunks", 0) for f in files.values())
        tokens = sum(f.get("tokens", 0) for f in files.values())
        report.avg_tokens = tokens / report.chunks if report.chunks else 0.0
        report.max_tokens = max((f.get("max_tokens", 0) for f in files.values()), default=0)
        extra = {"analyzer": self.analyzer.to_dict(), "bm25_engine": self.engine,
                 "fusion": calibrated(self.embedder.name, files, self.analyzer.lang)}
        if chunker.build_report():
            extra["chunker"] = chunker.build_report()
        if old is not None and old.extra.get("search"):
            extra["search"] = old.extra["search"]  # settings saved by `indexer tune --save` outlive rebuilds
        return Entry(
            strategy=self.spec.name, embedder=self.embedder.name, collection=staging.name,
            dimension=self.embedder.dimension, kind=self.spec.kind, params=self.spec.params, tokenizer=DEFAULT_ENCODING,
            version=VERSION, built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"), source=self.source,
            files=report.files, chunks=report.chunks, avg_tokens=round(report.avg_tokens, 2),
            max_tokens=report.max_tokens, build_seconds=round(time.perf_counter() - t0, 3), extra=extra,
        )


__all__ = ["BuildOptions", "BuildReport", "build", "build_settings"]
