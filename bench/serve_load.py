"""Load on `indexer serve`: POST /api/search latency warm (one client, one request at a
time), then N concurrent clients for S seconds on loopback; prints p50 / p99, requests/s
and errors.

    python -m bench.serve_load                      # builds the bundled corpus (headers) in a temp folder
    python -m bench.serve_load --db .indexer --strategy headers --clients 50 --seconds 30
    python -m bench.serve_load --url http://127.0.0.1:8765/ --strategy headers   # a server already running
    python -m bench.serve_load --smoke              # two documents, 2 clients for 1 s (numbers mean nothing)

Queries are the bundled question set's questions, each with one of 20 suffix words so
that most requests miss the Index's small per-query cache (a real application rarely
asks the same thing twice); `--repeat` sends the plain questions instead. The load
generator runs on the same machine as the server and competes with it for the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.common import CORPUS, free_port, machine, percentile, smoke_corpus, smoke_option, table
from indexer.settings import Settings

SUFFIXES = ["lütfen", "acaba", "hemen", "bugün", "şimdi", "yarın", "mi", "nasıl", "neden", "nerede", "kim", "ne",
            "hangi", "kaç", "sipariş", "ürün", "hesap", "kart", "iade", "kargo"]


def queries(repeat: bool) -> list[str]:
    lines = (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    if repeat:
        return questions
    return [f"{q} {s}" for q in questions for s in SUFFIXES]


def start_server(db: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "indexer", "serve", "--db", str(db), "--port", str(port), "-q"],
                            stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "api/health", timeout=1).read()
            return proc, url
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("indexer serve did not come up")


async def one(client, url: str, body: dict) -> tuple[float, bool]:
    t0 = time.perf_counter()
    try:
        r = await client.post(url + "api/search", json=body)
        ok = r.status_code == 200 and "hits" in r.json()
    except Exception:  # a refused or dropped connection counts as an error, not a crash
        ok = False
    return time.perf_counter() - t0, ok


async def sequential(url: str, pool: list[str], strategy: str, n: int) -> tuple[list[float], int]:
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        for q in pool[: min(20, n)]:  # warm-up: embedder, BM25, connection
            await one(client, url, {"query": q, "strategy": strategy})
        times, errors = [], 0
        for i in range(n):
            took, ok = await one(client, url, {"query": pool[(i * 7919) % len(pool)], "strategy": strategy})
            times.append(took)
            errors += not ok
    return times, errors


async def concurrent(url: str, pool: list[str], strategy: str, clients: int, seconds: float):
    import httpx

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    times: list[float] = []
    errors = 0
    stop = time.perf_counter() + seconds

    async def worker(seed: int, client):
        nonlocal errors
        rng = random.Random(seed)
        while time.perf_counter() < stop:
            took, ok = await one(client, url, {"query": rng.choice(pool), "strategy": strategy})
            times.append(took)
            errors += not ok

    t0 = time.perf_counter()
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(*(worker(i, client) for i in range(clients)))
    return times, errors, time.perf_counter() - t0


def row(label: str, times: list[float], errors: int, wall: float) -> list[object]:
    return [label, len(times), f"{percentile(times, 50) * 1000:.1f}", f"{percentile(times, 99) * 1000:.1f}",
            f"{len(times) / wall:.0f}", errors]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a running indexer serve (default: start one)")
    ap.add_argument("--db", type=Path, help="index folder to serve (default: build the bundled corpus in a temp folder)")
    ap.add_argument("--strategy", default="headers")
    ap.add_argument("--requests", type=int, default=500, help="sequential requests for the warm latency")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--repeat", action="store_true", help="send the plain questions (cache hits after the first round)")
    smoke_option(ap)
    args = ap.parse_args()
    if args.smoke:
        args.requests, args.clients, args.seconds = 5, 2, 1.0

    proc = None
    url = args.url
    with tempfile.TemporaryDirectory() as tmp:
        if not url:
            db = args.db
            if db is None:
                from indexer.indexing.building import build

                db = Path(tmp) / "index"
                corpus = smoke_corpus(Path(tmp) / "corpus") if args.smoke else CORPUS
                print(f"building {corpus} ({args.strategy}) in {db} ...", file=sys.stderr)
                build([corpus], [args.strategy], settings=Settings.load(db=db))
            proc, url = start_server(db)
        try:
            pool = queries(args.repeat)
            t0 = time.perf_counter()
            seq, seq_errors = asyncio.run(sequential(url, pool, args.strategy, args.requests))
            seq_wall = time.perf_counter() - t0
            load, load_errors, wall = asyncio.run(concurrent(url, pool, args.strategy, args.clients, args.seconds))
        finally:
            if proc:
                proc.terminate()
                proc.wait(timeout=10)
    print(f"POST /api/search ({args.strategy}, default search, k=5, {'repeated' if args.repeat else 'distinct'} "
          f"queries) on {machine()}")
    print(table(["load", "requests", "p50 ms", "p99 ms", "requests/s", "errors"], [
        row("1 client, sequential (warm)", seq, seq_errors, seq_wall),
        row(f"{args.clients} clients, {args.seconds:.0f} s", load, load_errors, wall),
    ]))


if __name__ == "__main__":
    main()
