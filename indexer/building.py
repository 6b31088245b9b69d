"""Build: chunk, embed, write to Chroma and BM25, per strategy — atomically and incrementally.

A build never modifies the live collection. It writes a new collection (copying the
chunks and vectors of unchanged files from the live one, chunking and embedding only new
and changed files), builds the BM25 index and the file manifest beside it, and only then
switches the catalogue to it and removes the old one. Killing a build at any point leaves
the previous version answering queries; the next build removes the leftovers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .analyzer import Analyzer, detect_language
from .bm25 import ENGINES, BM25Builder
from .chunkers import StrategySpec
from .chunking import resolve_strategies
from .config import DEFAULT_MAX_FILE_SIZE
from .embeddings import CachedEmbedder, EmbeddingCache, get_embedder
from .errors import NothingToIndex, UsageError
from .loaders import SkipFile, Skipped, SourceFile, discover, load_file
from .loaders.files import read_text
from .store import Entry, Store, chunk_metadata, write_json
from .tokens import DEFAULT_ENCODING
from .types import Chunk

CHUNK_FORMAT = 6  # bump when a chunker's output changes for the same parameters
MANIFEST_FORMAT = 1
WRITE_BATCH = 256
COPY_BATCH_DOCS = 64


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
    copied: int = 0  # chunks carried over from the previous version
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
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


class _NoProgress:
    def __init__(self, *_, **__) -> None:
        pass

    def __enter__(self):
        return lambda n=1: None

    def __exit__(self, *exc) -> None:
        return None


class _Timer:
    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.totals[name] = self.totals.get(name, 0.0) + time.perf_counter() - t0


def _checkpoint(name: str) -> None:
    """A fault-injection point for the crash tests: with INDEXER_PAUSE_AT=<name> in the
    environment, the build writes <name> to INDEXER_PAUSE_FILE and stops here until it
    is killed. Points: locked, embedding, publish, published."""
    if os.environ.get("INDEXER_PAUSE_AT") == name:
        Path(os.environ["INDEXER_PAUSE_FILE"]).write_text(name)
        while True:
            time.sleep(3600)


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _settings(spec: StrategySpec, embedder: str, analyzer: Analyzer, engine: str, encoding: str | None) -> dict:
    """Everything that, if changed, invalidates every chunk or vector of a collection."""
    return {
        "kind": spec.kind,
        "params": spec.params,
        "embedder": embedder,
        "tokenizer": DEFAULT_ENCODING,
        "chunk_format": CHUNK_FORMAT,
        "encoding": encoding or "",
        "analyzer": analyzer.to_dict(),
        "bm25_engine": engine,
    }


def _why_full(old: dict, new: dict) -> str:
    changed = []
    for key in new:
        if old.get(key) != new.get(key):
            if key == "params":
                diffs = [
                    f"{k} {old['params'].get(k)}->{v}" for k, v in new["params"].items() if old["params"].get(k) != v
                ]
                changed.append("parameters changed (" + ", ".join(diffs) + ")")
            else:
                changed.append(f"{key} changed ({old.get(key)} -> {new.get(key)})")
    return "; ".join(changed) or "settings changed"


def build(
    paths: list[str | os.PathLike],
    strategies: list[str | StrategySpec],
    *,
    db: str | os.PathLike | None = None,
    chroma_url: str | None = None,
    embedder: str | None = None,
    ollama_host: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    encoding: str | None = None,
    name: str | None = None,
    full: bool = False,
    wait: bool = True,
    lang: str = "auto",
    stem: int | None = None,
    fold: bool | None = None,
    stopwords: bool | None = None,
    bm25_engine: str = "rank-bm25",
    progress: Callable | None = None,
    on_message: Callable[[str], None] | None = None,
) -> list[BuildReport]:
    """Build (or update) one collection per strategy. See the module docstring."""
    if bm25_engine not in ENGINES:
        raise UsageError(f"unknown BM25 engine {bm25_engine!r}; use one of {', '.join(ENGINES)}")
    if lang not in ("auto", "tr", "en"):
        raise UsageError(f"--lang must be tr, en or auto, not {lang!r}")
    specs = resolve_strategies(list(strategies), name)
    store = Store(db, chroma_url, create=True)
    found = discover(paths, include, exclude, max_file_size, skip_dirs=(store.db,))
    if not found.files:
        from .chunking import _nothing_message

        raise NothingToIndex(_nothing_message(paths, found))
    model = get_embedder(embedder, ollama_host)
    cache = EmbeddingCache(store.db / "cache" / "embeddings.sqlite")
    if lang == "auto":
        lang = _detect(found.files, encoding)
    if stem is not None and stem < 0:
        raise UsageError(f"--stem must be 0 (off) or a prefix length, not {stem}")
    analyzer = Analyzer.for_language(lang, stem=stem, fold=fold, stopwords=stopwords)
    source = [str(Path(p).resolve()) for p in paths]
    reports = []
    try:
        for spec in specs:
            builder = _StrategyBuild(
                store, spec, model, cache, analyzer, bm25_engine, encoding, found, source,
                progress or _NoProgress, on_message, ollama_host,
            )
            reports.append(builder.run(full=full, wait=wait))
    finally:
        cache.close()
    return reports


def _detect(files: list[SourceFile], encoding: str | None) -> str:
    sample = []
    for src in files[:25]:
        with contextlib.suppress(SkipFile):
            sample.append(read_text(src.path, encoding)[0])
    return detect_language(sample)


class _StrategyBuild:
    def __init__(self, store, spec, model, cache, analyzer, engine, encoding, found, source, progress, on_message,
                 ollama_host):
        self.store: Store = store
        self.spec: StrategySpec = spec
        self.embedder = CachedEmbedder(model, cache)
        self.analyzer = analyzer
        self.engine = engine
        self.encoding = encoding
        self.found = found
        self.source = source
        self.progress = progress
        self.say = on_message or (lambda _msg: None)
        self.ollama_host = ollama_host
        self.timer = _Timer()
        self.report = BuildReport(spec.name, model.name, analyzer=analyzer.describe())
        self.settings = _settings(spec, model.name, analyzer, engine, encoding)

    # -- the plan --------------------------------------------------------------------------
    def _plan(self, old: Entry | None, full: bool):
        hashes: dict[str, str] = {}
        sizes: dict[str, int] = {}
        by_id: dict[str, SourceFile] = {}
        with self.timer("hash"):
            for src in self.found.files:
                try:
                    hashes[src.doc_id] = file_hash(src.path)
                except OSError:
                    hashes[src.doc_id] = ""  # unreadable: loading will report it
                sizes[src.doc_id] = src.size
                by_id[src.doc_id] = src
        manifest = self._read_manifest(old) if old else None
        reason = ""
        if full:
            reason = "--full"
        elif old is None:
            reason = "first build"
        elif manifest is None:
            reason = "no file manifest beside the previous version"
        elif manifest["settings"] != self.settings:
            reason = _why_full(manifest["settings"], self.settings)
        if reason:
            return reason, list(by_id.values()), [], [], hashes, None
        old_files: dict[str, dict] = manifest["files"]
        old_skipped: dict[str, dict] = manifest.get("skipped", {})
        process, unchanged = [], []
        for doc_id, src in by_id.items():
            h = hashes[doc_id]
            if doc_id in old_files and old_files[doc_id]["hash"] == h and h:
                unchanged.append(doc_id)
            elif doc_id in old_skipped and old_skipped[doc_id]["hash"] == h and h:
                self.report.skipped.append(Skipped(doc_id, old_skipped[doc_id]["reason"]))
            else:
                process.append(src)
                if doc_id in old_files:
                    self.report.changed += 1
                else:
                    self.report.added += 1
        removed = [d for d in old_files if d not in by_id]
        self.report.removed = len(removed)
        self.report.unchanged = len(unchanged)
        return "", process, unchanged, removed, hashes, manifest

    def _read_manifest(self, entry: Entry) -> dict | None:
        path = self.store.side_dir(entry.collection) / "manifest.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if data.get("format") == MANIFEST_FORMAT else None

    # -- running ---------------------------------------------------------------------------
    def run(self, full: bool, wait: bool) -> BuildReport:
        t0 = time.perf_counter()
        spec, store, report = self.spec, self.store, self.report
        # files discovery already turned away (size cap, symlink loops, links out of the root)
        report.skipped.extend(self.found.skipped)
        report.unsupported = dict(self.found.unsupported)
        with store.lock(spec.name, self.embedder.name, wait=wait, on_wait=self.say):
            report.leftovers_removed = store.cleanup(spec.name, self.embedder.name)
            _checkpoint("locked")
            old = store.find_or_none(spec.name, self.embedder.name)
            reason, process, unchanged, removed, hashes, manifest = self._plan(old, full)
            if reason == "first build":
                others = [e.embedder for e in store.entries() if e.strategy == spec.name]
                if others:
                    reason = f"first build with {self.embedder.name} (kept: {', '.join(others)})"
            if not reason and not process and not removed and not report.changed:
                report.mode = "unchanged"
                report.collection = old.collection
                report.files, report.chunks = old.files, old.chunks
                report.avg_tokens, report.max_tokens = old.avg_tokens, old.max_tokens
                report.seconds = time.perf_counter() - t0
                report.timings = self.timer.totals
                return report
            report.mode = "full" if reason else "incremental"
            report.reason = reason
            if reason:
                report.added = len(process)
            self._write(old, process, unchanged, hashes, manifest, t0)
        report.seconds = time.perf_counter() - t0
        report.timings = self.timer.totals
        report.embedded = self.embedder.computed
        report.cache_hits = self.embedder.cached
        return report

    def _write(self, old: Entry | None, process, unchanged, hashes, old_manifest, t0) -> None:
        spec, store, report = self.spec, self.store, self.report
        model = self.embedder
        chunker = spec.create(embedder=model)
        chunker.cache_dir = store.db / "cache"
        chunker.ollama_host = self.ollama_host
        meta = {
            "strategy": spec.name, "kind": spec.kind, "params": json.dumps(spec.params, sort_keys=True),
            "tokenizer": DEFAULT_ENCODING, "embedder": model.name, "dimension": model.dimension,
            "source": json.dumps(self.source), "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        staging = store.new_collection(spec.name, model.name, meta)
        parents = None
        writer = _Writer(staging, model, self.timer)
        parent_writer: _Writer | None = None
        bm25 = BM25Builder(self.analyzer)
        files: dict[str, dict] = {}
        skipped: dict[str, dict] = {}
        stats = {"chunks": 0, "tokens": 0, "max": 0}

        def account(chunks: list[Chunk]) -> None:
            stats["chunks"] += len(chunks)
            stats["tokens"] += sum(c.n_tokens for c in chunks)
            stats["max"] = max([stats["max"]] + [c.n_tokens for c in chunks])
            bm25.add([c.id for c in chunks], [c.indexed_text for c in chunks])

        try:
            if unchanged and old is not None:
                with self.timer("copy"):
                    old_col = store.collection(old.collection)
                    for i in range(0, len(unchanged), COPY_BATCH_DOCS):
                        batch = unchanged[i : i + COPY_BATCH_DOCS]
                        copied = _copy(old_col, staging, batch)
                        account(copied)
                        report.copied += len(copied)
                        for doc_id in batch:
                            files[doc_id] = old_manifest["files"][doc_id]
                    if old.parents:
                        parents = store.new_collection(spec.name, model.name, {**meta, "role": "parents"}, "-p")
                        _copy(store.collection(old.parents), parents, unchanged)
            total = sum(src.size for src in process)
            with self.progress(f"{spec.name}", total) as advance:
                for src in process:
                    with self.timer("load"):
                        try:
                            doc = load_file(src, self.encoding)
                        except SkipFile as exc:
                            report.skipped.append(Skipped(src.doc_id, str(exc)))
                            skipped[src.doc_id] = {"hash": hashes[src.doc_id], "reason": str(exc)}
                            advance(src.size)
                            continue
                    report.warnings.extend(Skipped(doc.doc_id, w) for w in doc.warnings)
                    with self.timer("chunk"):
                        chunks = chunker.chunk(doc)
                        parent_chunks = chunker.parent_chunks(doc) if hasattr(chunker, "parent_chunks") else []
                    writer.add(chunks)
                    if parent_chunks:
                        if parents is None:
                            parents = store.new_collection(spec.name, model.name, {**meta, "role": "parents"}, "-p")
                        parent_writer = parent_writer or _Writer(parents, None, self.timer)
                        parent_writer.add(parent_chunks)
                    account(chunks)
                    files[doc.doc_id] = {"hash": hashes[src.doc_id], "chunks": len(chunks)}
                    advance(src.size)
            writer.close()
            if parent_writer:
                parent_writer.close()
            if not stats["chunks"]:
                raise NothingToIndex(
                    f"no chunks for strategy {spec.name}: every file was skipped "
                    f"({len(report.skipped)} skipped); see the reasons above"
                )
            side = store.side_dir(staging.name)
            with self.timer("bm25"):
                bm25.finish(self.engine).save(side / "bm25")
            write_json(side / "manifest.json", {
                "format": MANIFEST_FORMAT, "settings": self.settings, "files": files, "skipped": skipped,
            })
            report.files = len(files)
            report.chunks = stats["chunks"]
            report.avg_tokens = stats["tokens"] / stats["chunks"]
            report.max_tokens = stats["max"]
            entry = Entry(
                strategy=spec.name, embedder=model.name, collection=staging.name, dimension=model.dimension,
                kind=spec.kind, params=spec.params, tokenizer=DEFAULT_ENCODING, version=__version__,
                built_at=meta["built_at"], source=self.source, files=report.files, chunks=report.chunks,
                avg_tokens=round(report.avg_tokens, 2), max_tokens=report.max_tokens,
                parents=parents.name if parents is not None else "",
                build_seconds=round(time.perf_counter() - t0, 3),
                extra={"analyzer": self.analyzer.to_dict(), "bm25_engine": self.engine, **_chunker_extra(chunker),
                       **_kept_search(old)},
            )
            summary = getattr(chunker, "build_summary", None)
            if callable(summary):
                report.notes.append(summary())
            _checkpoint("publish")
            with self.timer("publish"):
                store.publish(entry)  # the switch: readers see the new version from here on
            _checkpoint("published")
        except BaseException:
            writer.abandon()
            if parent_writer:
                parent_writer.abandon()
            with contextlib.suppress(Exception):
                store.delete_collection(staging.name)
                if parents is not None:
                    store.delete_collection(parents.name)
            raise
        report.collection = staging.name
        if old is not None:
            store.delete_collection(old.collection)
            if old.parents:
                store.delete_collection(old.parents)


def _kept_search(old: Entry | None) -> dict:
    """Search settings saved on the collection (`indexer tune --save`) outlive rebuilds."""
    return {"search": old.extra["search"]} if old is not None and old.extra.get("search") else {}


def _chunker_extra(chunker) -> dict:
    report = getattr(chunker, "build_report", None)
    return {"chunker": report()} if callable(report) else {}


class _Writer:
    """Embeds chunks in batches (through the cache) and adds them to a collection.

    Writing a batch to Chroma (SQLite, full-text index, HNSW) runs in a background
    thread while the next batch is embedded; one write is in flight at a time, so
    order and memory stay bounded. `close()` waits for the last write and raises its
    error, if any.
    """

    def __init__(self, collection, embedder: CachedEmbedder | None, timer: _Timer) -> None:
        self.collection = collection
        self.embedder = embedder
        self.timer = timer
        self.pending: list[Chunk] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="indexer-write")
        self._inflight = None

    def add(self, chunks: list[Chunk]) -> None:
        self.pending.extend(chunks)
        if len(self.pending) >= WRITE_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        chunks, self.pending = self.pending, []
        if self.embedder is not None:
            with self.timer("embed"):
                vectors = self.embedder.embed_documents([c.indexed_text for c in chunks])
        else:  # parent records are fetched by id, never searched: a placeholder vector
            vectors = [[1.0]] * len(chunks)
        self._wait()
        self._inflight = self._pool.submit(self._write, chunks, vectors)

    def _write(self, chunks: list[Chunk], vectors) -> None:
        t0 = time.perf_counter()
        self.collection.add(
            ids=[c.id for c in chunks],
            embeddings=vectors,
            documents=[c.text for c in chunks],
            metadatas=[chunk_metadata(c) for c in chunks],
        )
        self.timer.totals["write"] = self.timer.totals.get("write", 0.0) + time.perf_counter() - t0

    def _wait(self) -> None:
        if self._inflight is not None:
            with self.timer("write wait"):
                future, self._inflight = self._inflight, None
                future.result()
            if self.embedder is not None:
                _checkpoint("embedding")

    def close(self) -> None:
        """Write what is pending and wait for every write to finish."""
        try:
            self.flush()
            self._wait()
        finally:
            self._pool.shutdown(wait=True)

    def abandon(self) -> None:
        """Stop after the write in flight (if any), ignoring its outcome."""
        self.pending = []
        with contextlib.suppress(Exception):
            self._wait()
        self._pool.shutdown(wait=True)


def _copy(source, target, doc_ids: list[str]) -> list[Chunk]:
    """Copy the records of `doc_ids` (vectors included) from one collection to another."""
    from .store import chunk_from_record

    got = source.get(where={"doc_id": {"$in": list(doc_ids)}}, include=["embeddings", "documents", "metadatas"])
    if not got["ids"]:
        return []
    order = sorted(range(len(got["ids"])), key=lambda i: (got["metadatas"][i]["doc_id"], got["metadatas"][i]["start"]))
    for start in range(0, len(order), 1000):
        part = order[start : start + 1000]
        target.add(
            ids=[got["ids"][i] for i in part],
            embeddings=[got["embeddings"][i] for i in part],
            documents=[got["documents"][i] for i in part],
            metadatas=[got["metadatas"][i] for i in part],
        )
    return [chunk_from_record(got["ids"][i], got["documents"][i], got["metadatas"][i]) for i in order]
