"""indexer benchmarks: throughput, build cost and peak memory of every strategy (a long PDF too), the
pipelines users glue together today (LangChain, LlamaIndex) side by side, embedder speed
by chunk size, chunking against peers, query latency and scaling. Prints Markdown tables
with the date and machine.

    python -m bench.run --quick      # about 3 minutes
    python -m bench.run --smoke      # every section once at a tiny size (seconds; numbers mean nothing)
    python -m bench.run              # the full run (50 MB files, 20 MB corpora, 100k-chunk collections)
    python -m bench.run --only strategies,peers
    python -m bench.run --only rss   # peak memory of every strategy on 50 MB files of five shapes

Our machines are shared and noisy: every time is a median over repeated runs, and each
comparison is a ratio measured in the same run on the same text. Peers (chonkie,
LangChain, LlamaIndex) come from the `bench` extra: pip install -e ".[bench]".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench import pay_once, throughput
from bench.common import (
    CORPUS,
    Size,
    code_files,
    folder_size,
    machine,
    median_time,
    offline_tiktoken,
    python_docs_text,
    repeated_markdown,
    run_peak_rss,
    smoke_corpus,
    smoke_option,
    table,
    write_corpus,
)
from bench.pay_once import bench_peers
from bench.query_latency import bench_query
from bench.throughput import bench_cache, bench_embedders, bench_every_strategy, memory_by_shape

PY = sys.executable

class Report:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.targets: list[tuple[str, str, str, bool]] = []

    def section(self, title: str, text: str) -> None:
        block = f"### {title}\n\n{text}\n"
        print(block, flush=True)
        self.parts.append(block)

    def target(self, name: str, goal: str, measured: str, met: bool) -> None:
        self.targets.append((name, goal, measured, met))

# -- chunking ----------------------------------------------------------------------------

def bench_chunking(report: Report, size: Size) -> None:
    from indexer.chunkers import parse_strategy
    from indexer.loaders import make_document
    from indexer.text.tokens import get_tokenizer, load_encoding
    from indexer.types import Derived

    tk = get_tokenizer()
    enc = load_encoding(tk.name)  # tiktoken's Encoding, which the peers take
    repeat = size.pick(1, 2, 5)
    size_mb = size.pick(0.01, 1.5, 20)
    texts = {
        f"Turkish corpus, {size_mb} MB": [(d, t, "markdown", "")
                                          for d, t in repeated_markdown(size_mb, first=size.documents)],
        f"Python docs (pydoc_data), {size_mb} MB": _repeat_text(python_docs_text()[: size.pick(10_000, None, None)],
                                                                size_mb),
    }
    peers = _peers(enc)
    rows = []
    for label, files in texts.items():
        mb = sum(len(t.encode("utf-8")) for _, t, _, _ in files) / 1024 / 1024
        docs = [make_document(d, t, fmt, lang) for d, t, fmt, lang in files]
        raw = median_time(lambda: [enc.encode_ordinary(d.text) for d in docs], repeat)
        results = {"tiktoken encode_ordinary (ceiling)": raw}
        for name in ("fixed128", "headers", "blocks"):
            chunker = parse_strategy(name).create()

            def run(chunker=chunker):
                for d in docs:
                    d.derived.bounds.pop(tk.name, None)  # tokenize again every run
                    chunker.chunk(d)

            results[f"indexer {name}"] = median_time(run, repeat)
        parse = median_time(lambda: [make_document(d, t, fmt, lang) for d, t, fmt, lang in files], repeat)
        results["indexer markdown parse (loader, shared by all)"] = parse
        for peer, fn in peers.items():
            results[peer] = median_time(lambda fn=fn: [fn(d.text) for d in docs], repeat)
        for name, seconds in results.items():
            rows.append([label, name, f"{mb / seconds:.2f}", f"{raw / seconds:.2f}"])
        fixed = results["indexer fixed128"]
        if label.startswith("Turkish"):
            report.target("fixed-window chunking vs raw tokenizer", ">= 0.80", f"{raw / fixed:.2f}", raw / fixed >= 0.8)
            if "chonkie TokenChunker(128)" in results:
                ratio = results["chonkie TokenChunker(128)"] / fixed
                report.target("fixed-window chunking vs chonkie TokenChunker", ">= 1.5x", f"{ratio:.2f}x", ratio >= 1.5)
    code = code_files()
    copies = max(1, int(size_mb * 1024 * 1024 / sum(len(t.encode()) for _, t, _ in code)))
    files = [(f"c{i}/{d}", t, "code", lang) for i in range(copies) for d, t, lang in code]
    mb = sum(len(t.encode("utf-8")) for _, t, _, _ in files) / 1024 / 1024
    docs = [make_document(d, t, fmt, lang) for d, t, fmt, lang in files]
    raw = median_time(lambda: [enc.encode_ordinary(d.text) for d in docs], repeat)
    chunker = parse_strategy("code").create()

    def run_code():
        for d in docs:
            d.derived = Derived()
            chunker.chunk(d)

    code_s = median_time(run_code, repeat)
    rows.append([f"code repo, {mb:.1f} MB", "tiktoken encode_ordinary (ceiling)", f"{mb / raw:.2f}", "1.00"])
    rows.append([f"code repo, {mb:.1f} MB", "indexer code (tree-sitter)", f"{mb / code_s:.2f}", f"{raw / code_s:.2f}"])
    report.section(
        "Chunking throughput (median of %d runs; ratio = time of the raw tokenizer / time of the row)" % repeat,
        table(["text", "chunker", "MB/s", "vs tokenizer"], rows),
    )

def _repeat_text(text: str, megabytes: float) -> list[tuple[str, str, str, str]]:
    copies = max(1, int(megabytes * 1024 * 1024 / len(text.encode("utf-8"))))
    return [(f"pydoc{i:03d}.txt", text, "text", "") for i in range(copies)]

def _peers(enc) -> dict:
    peers = {}
    try:
        from chonkie import RecursiveChunker, TokenChunker

        token = TokenChunker(tokenizer=enc, chunk_size=128, chunk_overlap=0)
        recursive = RecursiveChunker(tokenizer=enc, chunk_size=512)
        peers["chonkie TokenChunker(128)"] = token.chunk
        peers["chonkie RecursiveChunker(512)"] = recursive.chunk
    except ImportError:
        print("chonkie not installed (pip install -e '.[bench]'): skipped", file=sys.stderr)
    try:
        from langchain_text_splitters import MarkdownHeaderTextSplitter, TokenTextSplitter

        offline_tiktoken("o200k_base")  # the splitter asks tiktoken for the table by name
        splitter = TokenTextSplitter(encoding_name="o200k_base", chunk_size=128, chunk_overlap=0)
        headers = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2"), ("###", "h3")])
        peers["LangChain TokenTextSplitter(128)"] = splitter.split_text
        peers["LangChain MarkdownHeaderTextSplitter"] = headers.split_text
    except ImportError:
        print("langchain-text-splitters not installed (pip install -e '.[bench]'): skipped", file=sys.stderr)
    return peers

# -- build ---------------------------------------------------------------------------------

def bench_build(report: Report, size: Size, work: Path) -> None:
    files = repeated_markdown(size.pick(0.005, 0.06, 4.0), unique=True, first=size.documents)
    corpus = write_corpus(work / "build-corpus", files)
    rows = []
    for strategy in size.pick(("headers",), ("headers", "fixed128"), ("headers", "fixed128")):
        db = work / f"build-db-{strategy}"
        shutil.rmtree(db, ignore_errors=True)
        cmd = [PY, "-m", "indexer", "build", str(corpus), "-s", strategy, "--db", str(db), "-q", "--json"]
        cold_s, cold_rss, out = run_peak_rss(cmd)
        cold = json.loads(out.splitlines()[0])  # --json prints JSON lines, one per strategy
        again_s, _, out = run_peak_rss(cmd)
        again = json.loads(out.splitlines()[0])
        t = cold["timings"]
        inside = cold["seconds"]
        model = t.get("model", 0.0)  # the model's own time: chunks, probe queries, its loading
        other = inside - model
        rows.append([
            strategy, cold["files"], cold["chunks"], f"{cold_s:.1f}", f"{inside:.1f}", f"{model:.1f}",
            f"{t.get('chunk', 0):.2f}", f"{t.get('units', 0):.2f}", f"{t.get('load', 0) + t.get('hash', 0):.2f}",
            f"{t.get('write wait', 0):.2f}", f"{t.get('rows', 0):.2f}", f"{t.get('measure', 0):.2f}",
            f"{100 * other / inside:.1f}%", f"{cold['chunks'] / inside:.0f}", f"{again_s:.2f}",
            f"{100 * again_s / cold_s:.1f}%", again["mode"],
        ])
        if strategy == "headers":
            report.target("build: everything but the model, bundled-style corpus", "<= 10% of build",
                          f"{100 * other / inside:.1f}%", other / inside <= 0.10)
            report.target("unchanged rebuild vs cold build", "<= 2%", f"{100 * again_s / cold_s:.1f}%",
                          again_s / cold_s <= 0.02)
    report.section(
        "Build with the default embedder (use-m3), unique texts so nothing comes from the embedding cache",
        table(["strategy", "files", "chunks", "cold s (process)", "build s", "model s", "chunk s", "units s",
               "load s", "write wait s", "rows s", "measure s", "not the model", "chunks/s", "rebuild s",
               "rebuild/cold", "rebuild mode"], rows)
        + "\n\n`cold s (process)` includes Python start-up, imports and loading the model; the"
          " shares are of `build s` (the build itself). `model s` is the time inside the model (the chunks,"
          " the 150 probe queries that measure it, its loading); `units s` cuts answer-sized context's units"
          " (none is embedded at build time); Chroma writes run in a background thread while the next batch"
          " is embedded, `write wait` is what the build waited for them.",
    )
    _real_builds(report, size, work)

def _real_builds(report: Report, size: Size, work: Path) -> None:
    """The build's cost beside its model on real folders (issue 53: not only the bundled corpus)."""
    rows = []
    for label, strategy, folder in pay_once.real_builds(size, work):
        got = pay_once.build_cost(folder, work / f"real-db-{strategy}", strategy, work)
        rows.append(pay_once.cost_row(label, strategy, got))
        r, build, model = got["report"], got["build"], got["model"]
        share = 1 - r["timings"].get("model", 0.0) / r["seconds"]
        report.target(f"build: everything but the model, {label}", "<= 10% of build", f"{100 * share:.1f}%",
                      share <= 0.10)
        limit = 1.10 if strategy == "fixed128" else 1.20
        report.target(f"indexer build -s {strategy} vs its model pass, {label} (wall; CPU)", f"<= {limit:.2f}x",
                      f"{build.wall / model.wall:.2f}x; {build.cpu / model.cpu:.2f}x", build.wall <= limit * model.wall)
    if rows:
        report.section(
            "A build beside its model on real folders",
            table(pay_once.COST_HEADERS, rows)
            + "\n\nEach a fresh process, cold (empty embedding cache), then the bare model pass over the"
              " collection's distinct indexed texts in a fresh process (bench/model_pass.py). `not the model`:"
              " the build's own seconds outside the model. `estimate / took`: what the build's line after its"
              " first batch foresaw against the model's time in the build (- when it foresaw under 30 s, and"
              " printed nothing).",
        )

# -- query ---------------------------------------------------------------------------------

def bench_cold_query(report: Report, size: Size, work: Path) -> None:
    db = work / "cold-db"
    shutil.rmtree(db, ignore_errors=True)
    corpus = smoke_corpus(work / "cold-corpus") if size.name == "smoke" else CORPUS
    run_peak_rss([PY, "-m", "indexer", "build", str(corpus), "-s", "headers", "--db", str(db), "-q"])
    rows = []
    repeat = size.pick(1, 3, 5)
    for mode in size.pick(("embedding",), ("embedding", "bm25", "hybrid"), ("embedding", "bm25", "hybrid")):
        cmd = [PY, "-m", "indexer", "query", "Siparişim Van'ın bir köyüne kaç günde gelir?", "-s", "headers",
               "--db", str(db), "--mode", mode]
        times = sorted(run_peak_rss(cmd)[0] for _ in range(repeat))
        med = times[len(times) // 2]
        rows.append([mode, f"{med:.2f}", f"{times[0]:.2f}", f"{times[-1]:.2f}"])
        if mode == "embedding":
            report.target("cold `indexer query` (import + open + one query)", "<= 1.5 s", f"{med:.2f} s", med <= 1.5)
    help_s = median_time(lambda: run_peak_rss([PY, "-m", "indexer", "--help"]), repeat, warmup=0)
    rows.append(["(indexer --help)", f"{help_s:.2f}", "", ""])
    report.section(f"Cold `indexer query` command, median of {repeat} (s)", table(["mode", "median", "min", "max"], rows))

def bench_memory(report: Report, size: Size, work: Path) -> None:
    rows = []
    for mb in size.pick((0.01,), (0.5, 2), (5, 20)):
        corpus = write_corpus(work / f"mem-corpus-{mb}", repeated_markdown(mb, first=size.documents))
        for strategy in size.pick(("headers",), ("headers", "fixed128"), ("headers", "fixed128")):
            db = work / f"mem-db-{mb}-{strategy}"
            shutil.rmtree(db, ignore_errors=True)
            # the copies repeat the same texts: after the first copy every vector comes from
            # the embedding cache, so this measures what a build holds, not the model
            seconds, rss, out = run_peak_rss(
                [PY, "-m", "indexer", "build", str(corpus), "-s", strategy, "--db", str(db), "-q", "--json"])
            r = json.loads(out.splitlines()[0])
            rows.append([f"{mb:g} MB", strategy, r["files"], r["chunks"], f"{rss / 1024:.0f}",
                         f"{folder_size(db) / 1e6:.0f}", f"{seconds:.0f}"])
    report.section(
        "Peak memory of `indexer build` (RSS of the process)",
        table(["corpus", "strategy", "files", "chunks", "peak RSS MB", "index on disk MB", "wall s"], rows)
        + "\n\nThe corpus is the bundled one repeated; documents are streamed and embedded in batches of"
          " 256, so memory grows with the index (BM25 term ids, Chroma's HNSW), not with the input text.",
    )

def bench_pdf(report: Report, size: Size, work: Path) -> None:
    from bench.pdf_long import RSS_TARGET_MB, STRATEGIES
    from bench.pdf_long import report as long_pdf

    pages = size.pick(3, 200, 2000)
    text, worst = long_pdf(pages, work, size.pick(["headers"], STRATEGIES, STRATEGIES))
    report.section(f"A {pages:,}-page PDF loaded and chunked, every strategy (bench/pdf_long.py)", text)
    report.target(f"peak RSS loading and chunking a {pages:,}-page PDF, every strategy", f"<= {RSS_TARGET_MB} MB",
                  f"{worst['rss_mb']:.0f} MB", worst["rss_mb"] <= RSS_TARGET_MB)
    report.target(f"headings found in the {pages:,}-page PDF (one a page)", f"{pages:,}", f"{worst['sections']:,}",
                  worst["sections"] == pages)

SECTIONS = {
    "strategies": bench_every_strategy,
    "peers": bench_peers,
    "embedders": lambda report, size, _work: bench_embedders(report, size),
    "cache": bench_cache,
    "chunk": lambda report, size, _work: bench_chunking(report, size),
    "build": bench_build,
    "query": bench_query,
    "cold": bench_cold_query,
    "memory": bench_memory,
    "rss": lambda report, size, work: memory_by_shape(report, size, work),
    "pdf": bench_pdf,
}

# sections a quick run leaves out unless asked: chunking peers on 1.5 MB, corpus-scale
# build memory (the strategies section measures chunking and memory of every strategy) and
# the long PDF (bench/pdf_long.py: --only pdf --quick runs it at 200 pages)
FULL_ONLY = ("chunk", "memory", "pdf")
# sections run only when named: `strategies` measures them too (rss: peak memory of every
# strategy on big files of every shape, alone: python -m bench.run --only rss); --smoke runs
# every other section
ON_REQUEST = ("rss",)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, finishes in about 3 minutes")
    smoke_option(parser)
    parser.add_argument("--only", default=None,
                        help=f"comma-separated sections: {','.join(SECTIONS)} (default: all but {','.join(ON_REQUEST)};"
                             f" --quick: all but {','.join(FULL_ONLY + ON_REQUEST)})")
    parser.add_argument("--out", type=Path, default=None, help="also write the report (Markdown) here")
    parser.add_argument("--big-mb", type=float, default=None,
                        help="size of the files the memory of every strategy is measured on (default 50, --quick 2)")
    args = parser.parse_args()
    size = Size("smoke" if args.smoke else "quick" if args.quick else "full")
    throughput.BIG_MB = args.big_mb
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    report = Report()
    header = f"indexer benchmarks, {time.strftime('%Y-%m-%d')}, {size.name} run\n\n{machine()}"
    print(header + "\n", flush=True)
    only = args.only.split(",") if args.only else [
        s for s in SECTIONS if s not in ON_REQUEST and not (size.name == "quick" and s in FULL_ONLY)]
    unknown = [name for name in only if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; use {','.join(SECTIONS)}")
    work = Path(tempfile.mkdtemp(prefix="indexer-bench-"))
    t0 = time.perf_counter()
    try:
        for name in SECTIONS:
            if name in only:
                t1 = time.perf_counter()
                SECTIONS[name](report, size, work)
                print(f"({name}: {time.perf_counter() - t1:.0f} s)\n", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [[name, goal, measured, "yes" if met else "NO"] for name, goal, measured, met in report.targets]
    report.section("Targets", table(["target", "goal", "measured", "met"], rows))
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(header + "\n\n" + "\n".join(report.parts) + "\n", encoding="utf-8")

if __name__ == "__main__":
    main()
