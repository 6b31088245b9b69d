"""One strategy's build within a `BuildJob`: plan it, then leave the live version as it
is, or write a new version (every file, or the changed ones), finish its side files and
manifest, and publish it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from ..chunkers import Chunker, ChunkerContext, StrategySpec
from ..errors import NothingToIndex
from ..retrieval.bm25.repair import load_or_rebuild
from ..retrieval.exact.index import for_build as exact_for_build
from ..retrieval.fusion import calibrated
from ..retrieval.rows.repair import open_or_rewrite
from ..retrieval.rows.writer import BuiltRows, NoRows, RowsWriter
from ..store import Entry, FileEntry, SideFile
from ..store.staging import Staging
from ..text.analyzer import Analyzer
from ..text.tokens import DEFAULT_ENCODING, get_tokenizer
from ..version import VERSION
from .chunk_stream import ChunkStream, Live, Streaming
from .estimates import Timer
from .job import BuildJob
from .planning import Plan, plan_build
from .probing import measure_unchanged, measured
from .report import BuildReport
from .state import BuildState, Outcome, Sizes, Spent, report_of
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
    """One strategy's build within a `BuildJob`: its steps (prepare, plan, then leave the
    version unchanged or stream, finish and publish a new one) each return what they did,
    kept in a `BuildState` the report is computed from (`report_of`)."""

    rows: RowsWriter | NoRows  # the new version's rows (set when a version is written)

    def __init__(self, job: BuildJob, spec: StrategySpec) -> None:
        self.job, self.spec = job, spec
        # what the loops below use most, by short names
        self.store, self.embedder, self.analyzer = job.store, job.embedder(), job.analyzer
        self.timer = Timer()
        self.unit_vectors = job.options.unit_vectors
        self.build_settings = build_settings(
            spec, self.embedder.name, self.analyzer, job.options.encoding, self.unit_vectors
        )
        self.units = DocumentUnits(
            self.embedder,
            get_tokenizer(cache_dir=job.store.settings.tiktoken_dir),
            job.say,
            embed=self.unit_vectors,
        )
        self.state = BuildState(
            strategy=spec.name,
            embedder=self.embedder.name,
            analyzer=self.analyzer.describe(),
            found=job.found,
        )

    # -- running ---------------------------------------------------------------------------
    def run(self, changed: set[str] | None = None) -> BuildReport:
        t0 = time.perf_counter()
        spec, store, state, options = self.spec, self.store, self.state, self.job.options
        with store.builds.lease(
            spec.name, self.embedder.name, wait=options.wait, on_wait=self.job.say
        ):
            old, state.leftovers = store.builds.prepare(spec.name, self.embedder.name)
            options.stage("locked")
            plan = plan_build(self.job, spec.name, old, self.build_settings, self.timer, changed)
            state.plan = plan
            if old is not None and not plan.reason:
                old = store.builds.deltas.merge(old, state.notes.append)
            if plan.nothing_to_do():
                assert old is not None, "a plan without a reason has a live version"
                state.outcome = self._unchanged(old)
            else:
                state.outcome = self._write(old, plan, t0)
        timings = self.timer.totals
        if self.embedder.seconds:  # inside the stages above: what the model itself took
            timings["model"] = self.embedder.seconds
        # the units' own vectors apart
        embedded, cache_hits = self.units.chunk_counts()
        state.spent = Spent(
            seconds=time.perf_counter() - t0,
            timings=timings,
            embedded=embedded,
            cache_hits=cache_hits,
        )
        return report_of(state)

    def _unchanged(self, old: Entry) -> Outcome:
        """Nothing changed: check the side files too, and rebuild a damaged BM25 index or
        rows from the stored records (so `build` is how a user repairs them)."""
        repaired: list[str] = []
        load_or_rebuild(self.store, old, on_repair=repaired.append, check_all=True)
        open_or_rewrite(self.store, old, on_repair=repaired.append, full=True)
        self.state.notes.extend(repaired)
        measure_unchanged(self.store, old, self.embedder)
        return Outcome(
            collection=old.collection, generation=old.generation, sizes=Sizes.of_entry(old)
        )

    def _write(self, old: Entry | None, plan: Plan, t0: float) -> Outcome:
        """Write a new version (every file, or the changed ones over `old`) and publish it."""
        spec, store = self.spec, self.store
        chunker = self._chunker()
        staging = store.builds.begin(
            spec.name,
            self.embedder.name,
            self._meta(),
            old,
            full=bool(plan.reason),
            on_stage=self.job.options.stage,
        )
        full = bool(plan.reason)
        self.rows = RowsWriter.for_build(
            None if full or old is None else open_or_rewrite(store, old, self.state.notes.append),
            staging.side_path(BuiltRows.SIDE),  # streamed there as the build goes
            self.embedder.dimension,
            full,
        )
        try:
            live = self._retire_removed(plan, staging)
            stream = ChunkStream(self._streaming(plan, staging, chunker, live))
            self.state.streamed = stream.run()
            entry = self._finish(old, plan, staging, chunker, t0)
        except BaseException:
            self.rows.abandon()
            staging.abandon()
            raise
        # the switch, outside the try: nothing may undo a published version (a failure
        # before the switch leaves unpublished records, which the next build removes)
        with self.timer("publish"):
            staging.publish(entry)
        if plan.reason:
            store.builds.collect_after_full_build()
        return Outcome(
            collection=staging.name,
            generation=staging.generation,
            sizes=Sizes.of_files(self.state.files()),  # unrounded, as the entry's are not
            retired=len(staging.retired),
        )

    def _streaming(self, plan: Plan, staging: Staging, chunker: Chunker, live: Live) -> Streaming:
        """What the chunk stream reads and writes through."""
        job = self.job
        return Streaming(
            name=self.spec.name,
            plan=plan,
            live=live,
            staging=staging,
            rows=self.rows,
            chunker=chunker,
            embedder=self.embedder,
            analyzer=self.analyzer,
            units=self.units,
            encoding=job.options.encoding,
            timer=self.timer,
            progress=job.progress,
            say=job.say,
        )

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

    def _retire_removed(self, plan: Plan, staging: Staging) -> Live:
        """Retire the chunks of vanished files; returns what the files to process and the
        vanished ones hold now."""
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
        t0: float,
    ) -> Entry:
        """Close the records, write the side files and the manifest; the entry to publish."""
        state = self.state
        with self.timer("write"):
            staging.close()
        files = state.files()
        if not files:
            skipped = state.skipped()
            raise NothingToIndex(
                f"no chunks for strategy {self.spec.name}: every file was skipped "
                f"({len(skipped)} skipped); see the reasons above",
                skipped,
            )
        with self.timer("bm25"):
            staging.save_sides(self._indexes(old, plan, staging, files))
        with self.timer("rows"):
            staging.save_sides([BuiltRows(self.rows, tuple(staging.retired))])
        staging.write_manifest(state.manifest(self.build_settings, self.job.labels))
        entry = self._entry(old, staging, chunker, files, t0)
        with self.timer("measure"):  # the embedder on this collection (indexing.probing)
            entry.extra["fusion"]["measured"] = measured(
                self.store, staging.stamp(entry), self.embedder, None if plan.reason else old
            )
        state.notes.extend(filter(None, [chunker.build_summary()]))
        return entry

    def _indexes(
        self,
        old: Entry | None,
        plan: Plan,
        staging: Staging,
        files: dict[str, FileEntry],
    ) -> Iterator[SideFile]:
        """The BM25 index (new, or the live one updated), then the exact-match index, each
        made as the store comes to save it."""
        store, engine = self.store, self.job.options.bm25_engine
        streamed = self.state.streamed
        assert streamed is not None, "a version is written after its stream"
        if plan.reason:
            yield streamed.fresh.finish(engine)
        else:
            # a plan without a reason to build in full updates a live version
            assert old is not None
            live = load_or_rebuild(store, old)
            yield live.updated(set(staging.retired), streamed.fresh, engine)
        yield exact_for_build(
            store,
            None if plan.reason else old,
            staging.retired,
            streamed.definitions,
            files,
            self.analyzer,
        )

    def _entry(
        self,
        old: Entry | None,
        staging: Staging,
        chunker: Chunker,
        files: dict[str, FileEntry],
        t0: float,
    ) -> Entry:
        sizes = Sizes.of_files(files)
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
            files=sizes.files,
            chunks=sizes.chunks,
            avg_tokens=round(sizes.avg_tokens, 2),
            max_tokens=sizes.max_tokens,
            build_seconds=round(time.perf_counter() - t0, 3),
            extra=extra,
        )
