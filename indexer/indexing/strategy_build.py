"""One strategy's build within a `BuildJob`: plan it, then leave the live version as it
is, or write a new version (every file, or the changed ones), finish its side files and
manifest, and publish it."""

from __future__ import annotations

import json
import time
from typing import Any

from ..chunkers import Chunker, ChunkerContext, StrategySpec
from ..errors import NothingToIndex
from ..retrieval.bm25.index import SIDE as BM25_SIDE
from ..retrieval.bm25.index import BM25Builder
from ..retrieval.bm25.repair import load_or_rebuild
from ..retrieval.exact.index import SIDE as EXACT_SIDE
from ..retrieval.exact.index import write_for_build as write_exact
from ..retrieval.fusion import calibrated
from ..retrieval.rows import writer as side_rows
from ..retrieval.rows.repair import open_or_rewrite
from ..store import Entry
from ..store.staging import Staging
from ..text.analyzer import Analyzer
from ..text.tokens import DEFAULT_ENCODING, get_tokenizer
from ..version import VERSION
from .chunk_stream import ChunkStream, Live, RowSink
from .estimates import Timer
from .job import BuildJob
from .manifest import MANIFEST_FORMAT, with_identities
from .planning import Plan, plan_build
from .probing import measure_unchanged, measured
from .report import BuildReport
from .units import DocumentUnits

CHUNK_FORMAT = 20  # bump when a chunker's output changes for the same parameters (12: unit maps;
# 13: an empty line ends a run of code lines in a unit map; 14: code units carry their definition's name;
# 15: and so does a unit from its definition's indented first line; 16: an HTML <pre> framed by a
# one-cell table is a fenced block, not a table row; 17: an HTML <dt> and its <dd> are one block;
# 18: a man page rendered to plain text has its sections; 19: an HTML heading's permalink "¶" is no
# text, and a Markdown file's YAML front matter is one block, none of its lines a heading; 20: a man
# page's NAME line heads its paths, its title line, NAME and SYNOPSIS one section; an HTML page with
# numbered <h1>s is titled by its <title>, an SVG's words are text, `2<sup>31</sup>` is `2^31`; a
# PDF's `*` and `#` terms stay, its title-page authors and contents entries are no headings)


def build_settings(
    spec: StrategySpec,
    embedder: str,
    analyzer: Analyzer,
    encoding: str | None,
    unit_vectors: bool = False,
) -> dict:
    """Everything that, if changed, invalidates every chunk or vector of a collection
    (and `unit_vectors` when asked for: a build that adds them embeds every file's units;
    one that stops adding them keeps what the cache holds)."""
    # not the BM25 engine: every engine reads the same files
    settings = {
        "kind": spec.kind,
        "params": spec.params,
        "embedder": embedder,
        "tokenizer": DEFAULT_ENCODING,
        "chunk_format": CHUNK_FORMAT,
        "encoding": encoding or "",
        "analyzer": analyzer.to_dict(),
    }
    if unit_vectors:
        settings["unit_vectors"] = True
    return settings


class StrategyBuild:
    """One strategy's build within a `BuildJob`."""

    rows: RowSink  # the new version's rows (set when a version is written)

    def __init__(self, job: BuildJob, spec: StrategySpec) -> None:
        self.job, self.spec = job, spec
        # what the loops below use most, by short names
        self.store, self.embedder, self.analyzer = job.store, job.embedder(), job.analyzer
        self.encoding, self.progress, self.say = job.options.encoding, job.progress, job.say
        self.timer = Timer()
        self.report = BuildReport(spec.name, self.embedder.name, analyzer=self.analyzer.describe())
        self.unit_vectors = job.options.unit_vectors
        self.build_settings = build_settings(
            spec, self.embedder.name, self.analyzer, self.encoding, self.unit_vectors
        )
        # what new chunks define (`exact.defined_in`)
        self.definitions: list[tuple[str, str, str, list[str], list[str]]] = []
        self.units = DocumentUnits(
            self.embedder,
            get_tokenizer(cache_dir=job.store.settings.tiktoken_dir),
            self.say,
            embed=self.unit_vectors,
        )

    # -- running ---------------------------------------------------------------------------
    def run(self, changed: set[str] | None = None) -> BuildReport:
        t0 = time.perf_counter()
        spec, store, report, options = self.spec, self.store, self.report, self.job.options
        # what discovery turned away (size cap, links...)
        report.skipped.extend(self.job.found.skipped)
        report.unsupported = dict(self.job.found.unsupported)
        with store.builds.lease(spec.name, self.embedder.name, wait=options.wait, on_wait=self.say):
            old, report.leftovers_removed = store.builds.prepare(spec.name, self.embedder.name)
            options.stage("locked")
            todo = plan_build(self.job, old, self.build_settings, report, self.timer, changed)
            if old is not None and not todo.reason:
                old = store.builds.deltas.merge(old, report.notes.append)
            if not todo.reason and not todo.process and not todo.removed:
                assert old is not None, "a plan without a reason has a live version"
                self._unchanged(old)
            else:
                report.mode = "full" if todo.reason else "incremental"
                report.reason = todo.reason
                if todo.reason:
                    report.added = len(todo.process)
                self._write(old, todo, t0)
        report.seconds = time.perf_counter() - t0
        report.timings = self.timer.totals
        if self.embedder.seconds:  # inside the stages above: what the model itself took
            report.timings["model"] = self.embedder.seconds
        # the units' own vectors apart
        report.embedded, report.cache_hits = self.units.chunk_counts()
        return report

    def _unchanged(self, old: Entry) -> None:
        """Nothing changed: check the side files too, and rebuild a damaged BM25 index or
        rows from the stored records (so `build` is how a user repairs them)."""
        report = self.report
        report.mode, report.collection, report.generation = (
            "unchanged",
            old.collection,
            old.generation,
        )
        report.files, report.chunks = old.files, old.chunks
        report.avg_tokens, report.max_tokens = old.avg_tokens, old.max_tokens
        repaired: list[str] = []
        load_or_rebuild(self.store, old, on_repair=repaired.append, check_all=True)
        open_or_rewrite(self.store, old, on_repair=repaired.append, full=True)
        report.notes.extend(repaired)
        measure_unchanged(self.store, old, self.embedder)

    def _write(self, old: Entry | None, plan: Plan, t0: float) -> None:
        """Write a new version (every file, or the changed ones over `old`) and publish it."""
        spec, store, report = self.spec, self.store, self.report
        chunker = self._chunker()
        staging = store.builds.begin(
            spec.name,
            self.embedder.name,
            self._meta(),
            old,
            full=bool(plan.reason),
            on_stage=self.job.options.stage,
        )
        report.generation = staging.generation
        files, skipped = _carried(plan)
        fresh = BM25Builder(self.analyzer)  # a full build's BM25; an incremental one's new chunks
        full = bool(plan.reason)
        self.rows = side_rows.RowsWriter.for_build(
            None if full or old is None else open_or_rewrite(store, old, report.notes.append),
            staging.side_path(side_rows.SIDE),  # beside the index
            self.embedder.dimension,
            full,
        )
        try:
            live = self._retire_removed(plan, staging, files)
            ChunkStream(self, plan, staging, chunker, live, files, skipped, fresh).run()
            entry = self._finish(old, plan, staging, chunker, files, skipped, fresh, t0)
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

    def _chunker(self) -> Chunker:
        settings = self.job.settings
        context = ChunkerContext(
            embedder=self.embedder,
            cache_dir=self.store.cache_dir,
            ollama_host=settings.ollama_host,
            tokenizer=get_tokenizer(cache_dir=settings.tiktoken_dir),
        )
        return self.spec.create(context=context)

    def _meta(self) -> dict[str, Any]:
        """The new version's collection metadata."""
        spec = self.spec
        return {
            "strategy": spec.name,
            "kind": spec.kind,
            "params": json.dumps(spec.params, sort_keys=True),
            "tokenizer": DEFAULT_ENCODING,
            "embedder": self.embedder.name,
            "dimension": self.embedder.dimension,
            "source": json.dumps(self.job.source),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    def _retire_removed(
        self, plan: Plan, staging: Staging, files: dict[str, dict[str, Any]]
    ) -> Live:
        """Retire the chunks of vanished files; returns what the files to process and the
        vanished ones hold now."""
        for doc_id in plan.removed:
            files.pop(doc_id, None)
        live = staging.live([s.doc_id for s in plan.process] + plan.removed, self.rows.previous)
        for doc_id in plan.removed:
            ids, parent_ids = live.get(doc_id, (set(), set()))
            staging.retire(ids, parent_ids)
        return live

    def _finish(
        self,
        old: Entry | None,
        plan: Plan,
        staging: Staging,
        chunker: Chunker,
        files: dict[str, dict[str, Any]],
        skipped: dict[str, dict[str, Any]],
        fresh: BM25Builder,
        t0: float,
    ) -> Entry:
        """Close the records, write the side files and the manifest; the entry to publish."""
        store, report = self.store, self.report
        with self.timer("write"):
            staging.close()
        if not files:
            raise NothingToIndex(
                f"no chunks for strategy {self.spec.name}: every file was skipped "
                f"({len(report.skipped)} skipped); see the reasons above",
                report.skipped,
            )
        with self.timer("bm25"):
            self._save_sides(old, plan, staging, files, fresh)
        with self.timer("rows"):
            self.rows.finish(staging.retired)
        staging.write_manifest(
            {
                "format": MANIFEST_FORMAT,
                "settings": self.build_settings,
                "labels": list(self.job.labels),
                "files": with_identities(files, plan.stats),
                "skipped": skipped,
            }
        )
        entry = self._entry(old, staging, chunker, files, t0)
        with self.timer("measure"):  # the embedder on this collection (indexing.probing)
            entry.extra["fusion"]["measured"] = measured(
                store, staging.stamp(entry), self.embedder, None if plan.reason else old
            )
        report.retired = len(staging.retired)
        report.notes.extend(filter(None, [chunker.build_summary()]))
        return entry

    def _save_sides(
        self,
        old: Entry | None,
        plan: Plan,
        staging: Staging,
        files: dict[str, dict[str, Any]],
        fresh: BM25Builder,
    ) -> None:
        """The BM25 index (new, or the live one updated) and the exact-match index."""
        store, engine = self.store, self.job.options.bm25_engine
        if plan.reason:
            bm25 = fresh.finish(engine)
        else:
            # a plan without a reason to build in full updates a live version
            assert old is not None
            bm25 = load_or_rebuild(store, old).updated(set(staging.retired), fresh, engine)
        staging.save_side(BM25_SIDE, bm25.save)
        definitions = self.definitions
        staging.save_side(
            EXACT_SIDE,
            lambda path: write_exact(
                store,
                None if plan.reason else old,
                staging.retired,
                definitions,
                files,
                self.analyzer,
                path,
            ),
        )

    def _entry(
        self,
        old: Entry | None,
        staging: Staging,
        chunker: Chunker,
        files: dict[str, dict[str, Any]],
        t0: float,
    ) -> Entry:
        report = self.report
        report.files_from(files)
        extra: dict[str, Any] = {
            "analyzer": self.analyzer.to_dict(),
            "bm25_engine": self.job.options.bm25_engine,
            "fusion": calibrated(self.embedder.name, files, self.analyzer.lang),
        }
        if self.job.choice is not None:  # which embedder, and why (named or by the documents)
            extra["embedder_choice"] = self.job.choice.to_dict()
        if chunker.build_report():
            extra["chunker"] = chunker.build_report()
        if self.unit_vectors:  # every unit's vector is in the cache: a context reads them all
            extra["unit_vectors"] = True
        # settings saved by `indexer tune --save` and the last evaluation's ranking
        # (`retrieval.evaluated`) outlive rebuilds
        for kept in ("search", "evaluated"):
            if old is not None and old.extra.get(kept):
                extra[kept] = old.extra[kept]
        return Entry(
            strategy=self.spec.name,
            embedder=self.embedder.name,
            collection=staging.name,
            dimension=self.embedder.dimension,
            kind=self.spec.kind,
            params=self.spec.params,
            tokenizer=DEFAULT_ENCODING,
            version=VERSION,
            built_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            source=self.job.source,
            files=report.files,
            chunks=report.chunks,
            avg_tokens=round(report.avg_tokens, 2),
            max_tokens=report.max_tokens,
            build_seconds=round(time.perf_counter() - t0, 3),
            extra=extra,
        )


def _carried(plan: Plan) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The manifest's files and skipped files an incremental build starts from (a full
    build: none). A file still failing as it did keeps its reason."""
    if plan.reason:
        return {}, {}
    manifest = plan.previous_manifest()
    skipped = {
        d: v
        for d, v in manifest.get("skipped", {}).items()
        if v.get("hash") and plan.hashes.get(d) == v["hash"]
    }
    return dict(manifest["files"]), skipped
