"""Processes that `bench/scale.py` starts and probes: `indexer serve` (HTTP search timings,
its RSS) and `chroma run`. Every process is stopped by its own handle; requests go to
127.0.0.1 only and are bounded in number."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.common import free_port, percentile


def _wait_http(url: str, proc: subprocess.Popen, log: Path, seconds: float = 600) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[:3]} exited: " + log.read_text()[-2000:])
        with contextlib.suppress(OSError):
            urllib.request.urlopen(url, timeout=5).read()
            return
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)


@contextlib.contextmanager
def chroma_server(folder: Path):
    """`chroma run` on a free local port, data in `folder`; yields its URL."""
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "server.log"
    with open(log, "a") as out:
        proc = subprocess.Popen([exe, "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc, log)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        _stop(proc)


@contextlib.contextmanager
def serving(cmd: list[str], log: Path):
    """`indexer serve` (cmd without --port); yields (base URL, pid) once it answers."""
    port = free_port()
    with open(log, "w") as out:
        proc = subprocess.Popen([*cmd, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/health", proc, log)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        _stop(proc)


def search(base: str, strategy: str, query: str, mode: str) -> dict:
    body = json.dumps({"strategy": strategy, "query": query, "mode": mode, "k": 5}).encode("utf-8")
    req = urllib.request.Request(f"{base}/api/search", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


def http_probe(base: str, strategy: str, queries: list[str], modes) -> dict:
    """First request's time, then p50/p99 per mode (10 warm-up requests per mode)."""
    t0 = time.perf_counter()
    search(base, strategy, queries[0], "hybrid")
    out: dict = {"first_s": time.perf_counter() - t0}
    for i, mode in enumerate(modes):
        for q in queries[:10]:
            search(base, strategy, q, mode)
        times = []
        for q in per_mode(queries, i, len(modes)):
            t = time.perf_counter()
            search(base, strategy, q, mode)
            times.append(time.perf_counter() - t)
        out[mode] = {"p50_ms": 1000 * percentile(times, 50), "p99_ms": 1000 * percentile(times, 99)}
    return out


def per_mode(queries: list[str], i: int, modes: int) -> list[str]:
    """The timed queries of the i-th mode: a slice of its own after the 10 warm-up ones,
    so no mode is answered from the memo of another's searches."""
    step = (len(queries) - 10) // modes
    return queries[10 + i * step : 10 + (i + 1) * step]


def rss_mb(pid: int) -> dict:
    """The process's resident memory: all of it, anonymous, and mapped files."""
    status = Path(f"/proc/{pid}/status").read_text()

    def field(name: str) -> float:
        return int(status.split(f"{name}:")[1].split()[0]) / 1024 if f"{name}:" in status else 0.0

    return {"rss_mb": field("VmRSS"), "anon_mb": field("RssAnon"), "file_mb": field("RssFile"),
            "peak_mb": field("VmHWM")}
