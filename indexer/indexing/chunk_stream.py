"""Chunk the files a build plan names and stream their chunks into the new version.

Chunks are embedded and written in batches of EMBED_BATCH with their rows and BM25
terms; parents go with the next batch. Memory holds one batch, never a file's chunks;
a chunk that came again keeps its record, and the file's other chunks are retired.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..chunkers import Chunker
from ..chunkers.unit_map import DocUnit, unit_map
from ..embeddings import CachedEmbedder
from ..loaders import SkipFile, Skipped, SourceFile, load_file
from ..retrieval.bm25.index import BM25Builder
from ..retrieval.exact.index import Definition, defined_in
from ..retrieval.rows.writer import NoRows, RowsWriter
from ..retrieval.worth import PROBES
from ..store import FileEntry, SkippedEntry
from ..store.staging import Staging
from ..text.analyzer import Analyzer
from ..types import Chunk, Document
from .estimates import FirstBatch, TextSample, Timer, estimate_line
from .manifest import file_mtime
from .planning import Plan
from .units import DocumentUnits

EMBED_BATCH = 256
# the first batch is small, so the estimate comes early: at 256, a folder of a few hundred
# chunks heard it only after most of its files' units were embedded (minutes with e5)
FIRST_BATCH = 32
OVER = 30.0  # seconds of embedding the first batches foresee worth a line
ESTIMATE_AFTER = 5.0  # seconds of embedding measured before the estimate is made

Live = dict[str, tuple[set[str], set[str]]]  # doc_id -> (its chunk ids, its parent ids) now
Advance = Callable[[int], Any]  # the progress bar's step


@dataclass(frozen=True, kw_only=True)
class Streaming:
    """What a stream reads and writes through: the plan and the files' live records, the
    new version (`staging`) and its rows, the chunker, embedder, analyzer and units, and
    how it times and tells (`name`: the strategy, the progress bar's label)."""

    name: str
    plan: Plan
    live: Live
    staging: Staging
    rows: RowsWriter | NoRows
    chunker: Chunker
    embedder: CachedEmbedder
    analyzer: Analyzer
    units: DocumentUnits
    encoding: str | None
    timer: Timer
    progress: Callable[..., Any]
    say: Callable[[str], None]


@dataclass(kw_only=True)
class Streamed:
    """What a stream did: the manifest entries of the files it chunked, those it could not
    load, the records it wrote, what the new chunks define, and their BM25 terms."""

    files: dict[str, FileEntry] = field(default_factory=dict)
    skipped: dict[str, SkippedEntry] = field(default_factory=dict)
    written: int = 0  # chunk records
    parents: int = 0  # parent records
    definitions: list[Definition] = field(default_factory=list)  # `exact.defined_in`
    fresh: BM25Builder

    def warnings(self) -> list[Skipped]:
        """The warnings loading the files gave, file by file."""
        return [Skipped(d, w) for d, f in self.files.items() for w in f.warnings]


class ChunkStream:
    """The chunks of a plan's files, written into the new version as they are made; `run`
    returns what it wrote (`Streamed`)."""

    def __init__(self, parts: Streaming) -> None:
        self.parts, self.plan, self.staging = parts, parts.plan, parts.staging
        self.chunker, self.live = parts.chunker, parts.live
        self.done = Streamed(fresh=BM25Builder(parts.analyzer))
        self.batch: list[Chunk] = []
        self.weights: list[float] = []
        # written with the next batch: one write, not a wait per file
        self.parents: list[Chunk] = []
        self.total = sum(src.size for src in self.plan.process)
        # the estimate counts text, not file bytes (an HTML page's markup made a folder's
        # first batch foresee a third of its chunks): per format, [text, bytes] loaded
        self.text_per_byte: dict[str, list[int]] = {}
        self.unit_chars = 0  # text of the files whose units are cut and embedded
        self.chars: list[int] = []  # text each chunk of the batch newly covers
        self.shares = 2 if parts.units.embed else 1  # a file's shares of the progress bar
        self.sample = TextSample(parts.units.tokenizer.count)  # for the estimate
        # until the estimate is made: chunks embedded, their seconds, the text they cover
        self.seen_chunks, self.seen_seconds, self.seen_chars = 0, 0.0, 0

    def run(self) -> Streamed:
        parts = self.parts
        # with units embedded at build time the bar counts each file twice: once when its
        # units are embedded, once as its chunks are (a cold build spent most of its time
        # on units before its first chunk batch, and a bar at 0% showed an ETA of days)
        with parts.progress(parts.name, self.shares * self.total) as advance:
            for src in self.plan.process:
                with parts.timer("load"):
                    try:
                        doc = load_file(src, parts.encoding)
                    except SkipFile as exc:
                        self._skip(src, exc, advance)
                        continue
                self._file(src, doc, advance)
            self._flush(advance)
        return self.done

    def _skip(self, src: SourceFile, exc: SkipFile, advance: Advance) -> None:
        """A file that cannot be loaded: skipped, its chunks retired."""
        entry = SkippedEntry(hash=self.plan.hashes[src.doc_id], reason=str(exc))
        self.done.skipped[src.doc_id] = entry
        old_ids, old_parents = self.live.get(src.doc_id, (set(), set()))
        self.staging.retire(old_ids, old_parents)
        advance(self.shares * src.size)

    def _file(self, src: SourceFile, doc: Document, advance: Advance) -> None:
        parts = self.parts
        old_ids, old_parents = self.live.get(doc.doc_id, (set(), set()))
        with parts.timer("units"):
            units = parts.units.of(doc)
        seen = self.text_per_byte.setdefault(src.format, [0, 0])
        seen[0], seen[1] = seen[0] + len(doc.text), seen[1] + src.size
        self.unit_chars += len(doc.text)
        self.sample.read(doc.text)
        if parts.units.embed:
            advance(src.size)
        parent_ids = self._parents(doc, units, old_parents)
        # the file's chunks stream through in batches: memory holds none of them, only
        # which of the file's previous chunks came again (the others are retired)
        kept: set[str] = set()
        count = tokens = max_tokens = 0
        done = 0  # characters of the document the chunks so far reach
        scale = src.size / max(len(doc.text), 1)
        for c in parts.timer.each("chunk", self.chunker.iter_chunks(doc)):
            count += 1
            tokens += c.n_tokens
            max_tokens = max(max_tokens, c.n_tokens)
            if c.id in old_ids:
                kept.add(c.id)
                continue
            self._add(c, units, doc)
            # progress follows the chunks embedded, so one huge file does not sit at 0%
            self.weights.append(max(c.end - done, 0) * scale)
            self.chars.append(max(c.end - done, 0))
            self.sample.covers(doc.text[done : c.end])
            done = max(done, c.end)
            if len(self.batch) >= (EMBED_BATCH if self.done.written else FIRST_BATCH):
                self._flush(advance)
        self.staging.retire(old_ids - kept, old_parents - parent_ids)
        self.done.files[doc.doc_id] = FileEntry(
            hash=self.plan.hashes[src.doc_id],
            size=src.size,
            mtime=file_mtime(src.path),
            chunks=count,
            tokens=tokens,
            max_tokens=max_tokens,
            newline=doc.newline,
            warnings=doc.warnings,
        )
        advance(int(max(len(doc.text) - done, 0) * scale))  # what no new chunk covered

    def _measured(self, chunks: int, seconds: float) -> None:
        """Count a batch toward the estimate, made once ESTIMATE_AFTER seconds of
        embedding are measured (a second's batch on a shared machine foresaw from a rate
        of 19 to 47 texts/s for the same folder)."""
        self.seen_chunks += chunks
        self.seen_seconds += seconds
        self.seen_chars += sum(self.chars)
        if self.seen_seconds >= ESTIMATE_AFTER:
            self._estimate(self.seen_chunks, self.seen_seconds)

    def _estimate(self, chunks: int, seconds: float) -> None:
        """The build's one line on how long embedding the rest takes (`estimate_line`)."""
        units = self.parts.units
        first = FirstBatch(
            chunks=chunks,
            seconds=seconds,
            chars=self.seen_chars,
            total=self._text(),
            tokens=self.sample.covered,
            density=self.sample.density,
            probes=PROBES if self.plan.reason else 0,  # a full build measures (`probing`)
            unit_texts=units.texts,
            unit_seconds=units.seconds,
            unit_chars=self.unit_chars if units.embed else 0,
        )
        self.sample.open = False
        line = estimate_line(first, OVER)
        if line:  # named by its strategy: a build of several says one for each
            self.parts.say(f"{self.parts.name}: {line}")

    def _text(self) -> int:
        """The text of every file the build reads, foreseen from the bytes: each format at
        the text per byte its files loaded so far had (a format not met yet: one)."""
        ratio = {f: text / size for f, (text, size) in self.text_per_byte.items() if size}
        return round(sum(src.size * ratio.get(src.format, 1.0) for src in self.plan.process))

    def _parents(self, doc: Document, units: list[DocUnit], old_parents: set[str]) -> set[str]:
        """The document's parent chunks: the new ones queued (written now when a batch is
        full: a big file's sections are not held); returns every parent's id."""
        parent_ids: set[str] = set()
        for p in self.parts.timer.each("chunk", self.chunker.iter_parent_chunks(doc)):
            parent_ids.add(p.id)
            p.units = unit_map(p, units, doc)
            if p.id not in old_parents:
                self.parents.append(p)
                if len(self.parents) >= EMBED_BATCH:
                    self._write_parents()
        return parent_ids

    def _write_parents(self) -> None:
        self.staging.add_parents(list(self.parents))
        self.done.parents += len(self.parents)
        self.parents.clear()

    def _add(self, c: Chunk, units: list[DocUnit], doc: Document) -> None:
        """A new chunk: its unit map, BM25 terms and definitions, then into the batch."""
        parts = self.parts
        c.units = unit_map(c, units, doc)
        with parts.timer("analyse"):  # BM25's terms
            self.done.fresh.add([c.id], [c.indexed_text])
        self.done.definitions.extend(defined_in(c, parts.analyzer))
        self.batch.append(c)

    def _flush(self, advance: Advance) -> None:
        """Write the queued parents, then embed and write the batch."""
        parts, batch, weights = self.parts, self.batch, self.weights
        if self.parents:
            self._write_parents()
        if not batch:
            return
        if not self.done.written:  # the rate foresees the rest: not the model's loading
            with parts.timer("embed"):
                parts.embedder.warm()
        t0 = time.perf_counter()
        with parts.timer("embed"):
            vectors = parts.embedder.embed_documents([c.indexed_text for c in batch])
        if self.sample.open:  # say how long the rest will take, if long
            self._measured(len(batch), time.perf_counter() - t0)
        with parts.timer("write wait"):
            metas = self.staging.add(list(batch), vectors)
        with parts.timer("rows"):  # also where the build waits while Chroma's write holds the GIL
            parts.rows.add_chunks(batch, metas, vectors)
        self.done.written += len(batch)
        advance(int(sum(weights)))
        batch.clear()
        weights.clear()
        self.chars.clear()
