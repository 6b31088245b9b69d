"""One size of bench/scale.py on one kind of store: the corpus built once with the
bench-only embedder, then each measurement (its index on disk, cold and warm queries, an
edited file's build, `indexer gc`). Every `indexer` command runs as a new process through
bench/scale_cli.py (`indexer`'s CLI with `bench-hash` registered)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.common import folder_size, percentile, run_peak_rss
from bench.scale_probe import per_mode
from bench.scale_table import label
from indexer.settings import Settings

STRATEGY = "fixed64"
MODES = ("embedding", "bm25", "hybrid")


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "bench.scale_cli", *map(str, args)]


def folder_mb(path: Path) -> float:
    return folder_size(path) / 2**20 if path.exists() else 0.0


class Run:
    """One size on one kind of store (embedded, or a Chroma server with its side folder)."""

    def __init__(self, data: Path, n: int, server_url: str | None = None) -> None:
        self.n, self.url = n, server_url
        self.kind = "server" if server_url else "embedded"
        self.corpus = data / f"corpus-{label(n)}"
        self.db = data / f"{self.kind}-{label(n)}" / ("side" if server_url else "db")
        self.store_args = ["--db", self.db, *(["--chroma-url", server_url] if server_url else [])]
        self.results_path = data / f"results-{self.kind}-{label(n)}.json"
        self.results = json.loads(self.results_path.read_text()) if self.results_path.exists() else {}

    def save(self) -> None:
        self.results_path.write_text(json.dumps(self.results, indent=1))

    def build(self, xquad: Path) -> dict:
        """Build once (the figures are kept with the data)."""
        from bench import scale_kit  # registers bench-hash

        if "build" in self.results and (self.db / "indexer.json").exists():
            return self.results["build"]
        scale_kit.write_corpus(self.corpus, self.n, xquad)
        load_before = os.getloadavg()
        seconds, rss_kib, out = run_peak_rss(cli("build", self.corpus, "-s", STRATEGY, "--embedder", "bench-hash",
                                                 "--lang", "tr", *self.store_args, "--json", "-q"))
        report = json.loads(out.splitlines()[0])
        self.results["build"] = {"seconds": seconds, "rss_mb": rss_kib / 1024, "chunks": report["chunks"],
                                 "files": report["files"], "timings": report["timings"], "at": time.strftime("%F %T"),
                                 "load": [load_before[0], os.getloadavg()[0]]}
        self.save()
        return self.results["build"]


def side_sizes(run: Run) -> dict:
    """MB on disk: the index folder, its BM25 index, its rows (texts and vectors beside the
    index), the embedding cache."""
    from indexer.retrieval.bm25 import index as bm25
    from indexer.retrieval.rows import table as rows
    from indexer.store import Store

    store = Store(Settings.load(db=run.db, chroma_url=run.url))
    entry = store.catalogue.find(STRATEGY)
    out = {"db_mb": folder_mb(run.db), "bm25_mb": folder_mb(store.side.path(entry, bm25.SIDE)),
           "rows_mb": folder_mb(store.side.path(entry, rows.SIDE)), "cache_mb": folder_mb(run.db / "cache"),
           "chunks": entry.chunks, "collection": entry.collection}
    return out


def hnsw_mb(chroma_folder: Path) -> float:
    """The vector index files (one folder per segment; the biggest is the collection's)."""
    sizes = [folder_mb(p) for p in chroma_folder.iterdir() if p.is_dir()] if chroma_folder.is_dir() else []
    return max(sizes, default=0.0)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold(run: Run, queries: list[str], repeat: int = 3, modes: tuple[str, ...] = MODES) -> dict:
    """Median wall time per mode of a new `indexer query` process, and (`<mode> cpu`) its
    CPU time (user + system), which the machine's load does not change."""
    out = {}
    for mode in modes:
        times, cpu = [], []
        for q in queries[:repeat]:
            t0, c0 = time.perf_counter(), _children_cpu()
            done = subprocess.run(cli("query", q, "-s", STRATEGY, "-m", mode, *run.store_args, "--json"),
                                  capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            cpu.append(_children_cpu() - c0)
            if done.returncode != 0:
                raise RuntimeError(f"query failed: {done.stderr[-1000:]}")
        out[mode] = sorted(times)[len(times) // 2]
        out[f"{mode} cpu"] = sorted(cpu)[len(cpu) // 2]
    return out


def warm(run: Run, queries: list[str]) -> dict:
    """p50/p99 per mode in a process of its own (`--worker warm`)."""
    cmd = [sys.executable, "-m", "bench.scale", "--worker", "warm", "--db", str(run.db), "--query-json", json.dumps(queries)]
    if run.url:
        cmd += ["--chroma-url", run.url]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])


def warm_worker(db: str, url: str | None, queries: list[str]) -> None:
    from bench import scale_kit  # noqa: F401
    from indexer import Index

    index = Index.open(STRATEGY, settings=Settings.load(db=db, chroma_url=url))
    t0 = time.perf_counter()
    index.search(queries[0], mode="hybrid")
    out: dict = {"first_s": time.perf_counter() - t0}
    for i, mode in enumerate(MODES):
        for q in queries[:10]:
            index.search(q, mode=mode)
        times, cpu = [], []
        for q in per_mode(queries, i, len(MODES)):
            t, c = time.perf_counter(), time.process_time()
            index.search(q, mode=mode)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)  # every thread of the process: what the load does not change
        out[mode] = {"p50_ms": 1000 * percentile(times, 50), "p99_ms": 1000 * percentile(times, 99),
                     "cpu_p50_ms": 1000 * percentile(cpu, 50), "cpu_p99_ms": 1000 * percentile(cpu, 99)}
    status = Path("/proc/self/status").read_text()
    out["rss_mb"] = int(status.split("VmRSS:")[1].split()[0]) / 1024
    print(json.dumps(out))


def update(run: Run) -> dict:
    """One file edited (a paragraph appended), then `indexer build`."""
    target = sorted(run.corpus.rglob("*.md"))[len(list(run.corpus.glob("part*"))) // 2]
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(f"\n\n## Güncelleme {time.time_ns()}\n\nBu paragraf sonradan eklendi: REF-{time.time_ns() % 997}.\n")
    t0 = time.perf_counter()
    done = subprocess.run(cli("build", run.corpus, "-s", STRATEGY, "--embedder", "bench-hash", "--lang", "tr",
                              *run.store_args, "--json", "-q"), capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    report = json.loads(done.stdout.splitlines()[0])
    if report["mode"] != "incremental":
        raise RuntimeError(f"expected an incremental build, got {report['mode']}: {report.get('reason')}")
    return {"seconds": seconds, "in_build_s": report["seconds"], "timings": report["timings"]}


def gc_time(run: Run) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cli("gc", *run.store_args, "-q"), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return time.perf_counter() - t0
