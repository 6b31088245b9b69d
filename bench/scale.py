"""The cost curve from 10k to 1M chunks, on one machine and on a Chroma server.

    python bench/scale.py --data DIR            # 10k, 100k, 1M (the 1M builds take hours)
    python bench/scale.py --data DIR --quick    # 10k and 100k
    python bench/scale.py --data DIR --report   # the tables from the figures kept in DIR
    python bench/scale.py --data DIR --sizes 10000 --only embedded

Per size: a corpus of that many `fixed64` chunks (Turkish XQuAD sentences recombined,
`bench/scale_kit.py`), built with the bench-only `bench-hash` embedder (pseudo-random
512-d unit vectors from a hash of the text: the model is not what is measured) into the
embedded database and into a `chroma run` server. Built once: the corpora, databases and
the build's figures are kept in `--data` and reused by later runs (delete a size's folders
to build it again). Measured per size:

- the build, per record and stage, and its peak RSS; the index folder, its HNSW index and
  its BM25 index on disk;
- a cold `indexer query` (a new process: start, imports, opening, one query) per mode;
- warm p50/p99 per mode in-process (`indexer.Index`) and through `indexer serve` (HTTP),
  and the serving process's RSS against its HNSW + BM25 size;
- one edited file's incremental build (twice: the first of a large collection makes its
  delta collection, the next writes into it), and `indexer gc`;
- with the server: two readers with their own `--db` (BM25 not there yet: rebuilt from the
  stored texts on first use and saved; then a cold query that finds it).

Then each figure's growth exponent between sizes, log(t2/t1) / log(n2/n1): 1 is linear.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from common import percentile, run_peak_rss, xquad_dir  # noqa: E402
from scale_probe import per_mode  # noqa: E402

STRATEGY = "fixed64"
MODES = ("embedding", "bm25", "hybrid")
SIZES = (10_000, 100_000, 1_000_000)


def cli(*args) -> list[str]:
    return [sys.executable, str(BENCH / "scale_cli.py"), *map(str, args)]


def folder_mb(path: Path) -> float:
    if not path.exists():
        return 0.0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"


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
        import scale_kit

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
    from indexer.retrieval import bm25, rows
    from indexer.store import Store

    store = Store(run.db, run.url)
    entry = store.find(STRATEGY)
    out = {"db_mb": folder_mb(run.db), "bm25_mb": folder_mb(store.side_path(entry, bm25.SIDE)),
           "rows_mb": folder_mb(store.side_path(entry, rows.SIDE)), "cache_mb": folder_mb(run.db / "cache"),
           "chunks": entry.chunks, "collection": entry.collection}
    return out


def hnsw_mb(chroma_folder: Path) -> float:
    """The vector index files (one folder per segment; the biggest is the collection's)."""
    sizes = [folder_mb(p) for p in chroma_folder.iterdir() if p.is_dir()] if chroma_folder.is_dir() else []
    return max(sizes, default=0.0)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold(run: Run, queries: list[str], repeat: int = 3) -> dict:
    """Median wall time per mode of a new `indexer query` process, and (`<mode> cpu`) its
    CPU time (user + system), which the machine's load does not change."""
    out = {}
    for mode in MODES:
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
    cmd = [sys.executable, __file__, "--worker", "warm", "--db", str(run.db), "--query-json", json.dumps(queries)]
    if run.url:
        cmd += ["--chroma-url", run.url]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])


def warm_worker(db: str, url: str | None, queries: list[str]) -> None:
    import scale_kit  # noqa: F401

    from indexer import Index

    index = Index.open(STRATEGY, db=db, chroma_url=url)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=BENCH / ".cache" / "scale",
                        help="where corpora, databases and figures are kept (reused across runs)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--quick", action="store_true", help="stop at 100k chunks")
    parser.add_argument("--only", choices=("embedded", "server"), default=None, help="one kind of store")
    parser.add_argument("--build-only", action="store_true", help="build what is not built yet, measure nothing")
    parser.add_argument("--report", action="store_true", help="print the tables from the figures kept in --data")
    parser.add_argument("--bm25", action="store_true", help="the BM25 side alone (no Chroma): minutes, not hours")
    parser.add_argument("--queries", type=int, default=200, help="timed warm queries per mode")
    parser.add_argument("--xquad", type=Path, default=None, help="the XQuAD folder (xquad.tr.json)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--query-json", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--chroma-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "warm":
        return warm_worker(args.db, args.chroma_url, json.loads(args.query_json))
    sizes = [int(s) for s in args.sizes.split(",") if not args.quick or int(s) <= 100_000]
    xquad = (args.xquad or xquad_dir()) / "xquad.tr.json"
    args.data.mkdir(parents=True, exist_ok=True)
    from scale_report import measure_all

    measure_all(args, sizes, xquad)


if __name__ == "__main__":
    main()
