"""The BM25 side alone, at every size (`bench/scale.py --bm25`): the same `fixed64` chunks
a build makes of the scale corpus, analysed, written, opened and searched by the engine
(`postings`) and by the reference (`rank-bm25`), with no Chroma in the way. It runs to 1M
chunks in minutes where the full builds take hours (Chroma's writes), and times what a
reader that lacks the index does (analyse every stored text, write the index) apart from
reading the texts from Chroma.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT
from bench.scale_probe import rss_mb
from bench.scale_table import render

COLD = """
import time, json
t0 = time.perf_counter()
from indexer.retrieval.bm25.index import BM25Index
t1 = time.perf_counter()
index = BM25Index.load(__import__("pathlib").Path({folder!r}), {engine!r})
t2 = time.perf_counter()
index.search({query!r}, 50)
print(json.dumps({{"load_s": t2 - t1, "total_s": time.perf_counter() - t0}}))
"""

WARM = """
import time, json
from bench.common import percentile
from indexer.retrieval.bm25.index import BM25Index
index = BM25Index.load(__import__("pathlib").Path({folder!r}), {engine!r})
queries = json.loads({queries!r})
index.search(queries[0], 50)
times = []
cpu = []
for q in queries[1:]:
    t, c = time.perf_counter(), time.process_time(); index.search(q, 50)
    times.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
status = open("/proc/self/status").read()
field = lambda name: int(status.split(name + ":")[1].split()[0]) / 1024
print(json.dumps({{"p50_ms": 1000 * percentile(times, 50), "p99_ms": 1000 * percentile(times, 99),
                  "cpu_p50_ms": 1000 * percentile(cpu, 50), "cpu_p99_ms": 1000 * percentile(cpu, 99),
                  "rss_mb": field("VmRSS"), "anon_mb": field("RssAnon"), "file_mb": field("RssFile")}}))
"""


def chunk_stream(corpus: Path):
    """(file, its fixed64 chunks' ids and indexed texts), file by file, as a build cuts them."""
    from indexer.chunkers import parse_strategy
    from indexer.loaders import discover, load_file

    chunker = parse_strategy("fixed64").create()
    for src in discover([corpus]).files:
        chunks = list(chunker.iter_chunks(load_file(src)))
        yield src, [c.id for c in chunks], [c.indexed_text for c in chunks]


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])


def measure(data: Path, n: int, corpus: Path, queries: list[str], cold: int = 3) -> dict:
    """Every figure of ROWS for one size; the cold figures are the median of `cold` processes."""
    from indexer.retrieval.bm25.index import BM25Builder, BM25Index
    from indexer.text.analyzer import Analyzer

    work = data / f"bm25-{n}"
    shutil.rmtree(work, ignore_errors=True)
    builder = BM25Builder(Analyzer.for_language("tr"))
    t_chunk = t_analyse = 0.0
    last = None
    stream = chunk_stream(corpus)
    while True:
        t0 = time.perf_counter()
        item = next(stream, None)
        t_chunk += time.perf_counter() - t0
        if item is None:
            break
        last = item
        t0 = time.perf_counter()
        builder.add(item[1], item[2])
        t_analyse += time.perf_counter() - t0
    chunks = len(builder.ids)
    t0 = time.perf_counter()
    index = builder.finish()
    t_finish = time.perf_counter() - t0
    t0 = time.perf_counter()
    index.save(work / "g1")
    t_save = time.perf_counter() - t0
    del index, builder
    out = {"chunks": chunks, "vocabulary": 0, "analyse_s": t_analyse, "finish_s": t_finish, "save_s": t_save,
           "chunk_s": t_chunk, "mb": sum(p.stat().st_size for p in (work / "g1").iterdir()) / 2**20}
    out["vocabulary"] = json.loads((work / "g1" / "params.json").read_text())["vocabulary"]
    # one edited file: its chunks retired, its new chunks analysed, the update written
    src, ids, texts = last
    t0 = time.perf_counter()
    fresh = BM25Builder(Analyzer.for_language("tr"))
    fresh.add([f"{i}-edited" for i in ids], [t + " güncellendi" for t in texts])
    previous = BM25Index.load(work / "g1")
    previous.updated(set(ids), fresh).save(work / "g2")
    out["update_s"] = time.perf_counter() - t0
    folder = str(work / "g1")
    colds = [_run(COLD.format(folder=folder, engine="postings", query=q)) for q in queries[:cold]]
    out["cold_s"] = sorted(c["total_s"] for c in colds)[len(colds) // 2]
    out["cold_load_s"] = sorted(c["load_s"] for c in colds)[len(colds) // 2]
    out["postings"] = _run(WARM.format(folder=folder, engine="postings",
                                       queries=json.dumps(queries[:201])))
    reference = queries[:21] if n <= 100_000 else queries[:4]
    out["rank-bm25"] = _run(WARM.format(folder=folder, engine="rank-bm25",
                                        queries=json.dumps(reference)))
    return out


ROWS = [
    ("load average (1 min): start / end", lambda m: tuple(m["load"]), "{:.1f} / {:.1f}"),
    ("chunks", lambda m: m["chunks"], "{:,}"),
    ("vocabulary (terms)", lambda m: m["vocabulary"], "{:,}"),
    ("analyse ms / chunk", lambda m: 1000 * m["analyse_s"] / m["chunks"], "{:.3f}"),
    ("postings + sorted vocabulary s", lambda m: m["finish_s"], "{:.2f}"),
    ("write (hashed) s", lambda m: m["save_s"], "{:.2f}"),
    ("BM25 index MB", lambda m: m["mb"], "{:.1f}"),
    ("cold: new process, open + 1 query s", lambda m: m["cold_s"], "{:.2f}"),
    ("  of which open (mapped, identities checked) s", lambda m: m["cold_load_s"], "{:.3f}"),
    ("postings p50 / p99 ms (top 50)", lambda m: (m["postings"]["p50_ms"], m["postings"]["p99_ms"]), "{:.1f} / {:.1f}"),
    ("  its CPU time p50 / p99 ms", lambda m: (m["postings"]["cpu_p50_ms"], m["postings"]["cpu_p99_ms"]),
     "{:.1f} / {:.1f}"),
    ("rank-bm25 p50 / p99 ms (top 50)", lambda m: (m["rank-bm25"]["p50_ms"], m["rank-bm25"]["p99_ms"]),
     "{:.0f} / {:.0f}"),
    ("process RSS after 200 queries MB (anon + file)", lambda m: (m["postings"]["rss_mb"], m["postings"]["anon_mb"],
                                                                 m["postings"]["file_mb"]), "{:.0f} ({:.0f} + {:.0f})"),
    ("one edited file: update + write s", lambda m: m["update_s"], "{:.2f}"),
    ("reader's rebuild, texts in hand (analyse + postings + write) s",
     lambda m: m["analyse_s"] + m["finish_s"] + m["save_s"], "{:.0f}"),
]


def report(measured: dict[int, dict]) -> str:
    return render(measured, ROWS)


__all__ = ["measure", "report", "rss_mb"]
