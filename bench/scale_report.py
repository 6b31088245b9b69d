"""`bench/scale.py`'s run over the sizes and its tables: what is measured where, each
figure per size, and its growth exponent between sizes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from bench import scale_bm25, scale_kit
from bench.common import machine
from bench.scale_probe import chroma_server, http_probe, rss_mb, serving
from bench.scale_steps import (
    MODES,
    STRATEGY,
    Run,
    cli,
    cold,
    folder_mb,
    gc_time,
    hnsw_mb,
    side_sizes,
    update,
    warm,
)
from bench.scale_table import label, render

SMOKE_COLD = (1, ("hybrid",))  # a --smoke run's cold queries: one, of one mode


def embedded(args, n: int, xquad: Path, queries: list[str]) -> dict:

    run = Run(args.data, n)
    build = run.build(xquad)
    if args.build_only:
        return {"build": build}
    out = {"build": build, **side_sizes(run), "hnsw_mb": hnsw_mb(run.db / "chroma"), "load": [os.getloadavg()[0]]}
    out["chroma_mb"] = folder_mb(run.db / "chroma")
    out["cold"] = cold(run, queries, *SMOKE_COLD if args.smoke else ())
    out["warm"] = warm(run, queries)
    with serving(cli("serve", "--db", run.db), args.data / "serve.log") as (base, pid):
        out["http"] = http_probe(base, STRATEGY, queries, MODES)
        out["serve_rss"] = rss_mb(pid)
    out["update"] = update(run)
    out["update2"] = update(run)
    out["gc_s"] = gc_time(run)
    out["load"].append(os.getloadavg()[0])
    run.results["measured"] = out
    run.save()
    return out


def server(args, n: int, xquad: Path, queries: list[str]) -> dict:
    """A Chroma server holding the vectors; a builder's side folder; two readers with
    folders of their own (emptied first: their first query rebuilds BM25 from the stored
    texts and saves it; a second process finds it)."""
    folder = args.data / f"server-{label(n)}"
    with chroma_server(folder / "chroma") as (url, chroma_pid):
        run = Run(args.data, n, url)
        build = run.build(xquad)
        if args.build_only:
            return {"build": build}
        out = {"build": build, **side_sizes(run), "hnsw_mb": hnsw_mb(folder / "chroma" / "data"),
               "chroma_mb": folder_mb(folder / "chroma" / "data"), "load": [os.getloadavg()[0]]}
        out["cold"] = cold(run, queries, *SMOKE_COLD if args.smoke else ())
        out["warm"] = warm(run, queries)
        readers = []
        for i in (1, 2):
            db = folder / f"reader{i}"
            shutil.rmtree(db, ignore_errors=True)
            reader = {}
            for what in ("first", "again"):
                t0 = time.perf_counter()
                done = subprocess.run(cli("query", queries[i], "-s", STRATEGY, "--db", db, "--chroma-url", url,
                                          "--json"), capture_output=True, text=True)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr[-2000:])
                reader[f"{what}_s"] = time.perf_counter() - t0
            readers.append(reader)
        out["readers"] = readers
        with serving(cli("serve", "--db", folder / "reader1", "--chroma-url", url), args.data / "serve.log") as (
                base, pid):
            out["http"] = http_probe(base, STRATEGY, queries, MODES)
            out["serve_rss"] = rss_mb(pid)
        out["chroma_rss"] = rss_mb(chroma_pid)
        out["update"] = update(run)
        out["gc_s"] = gc_time(run)
        out["load"].append(os.getloadavg()[0])
        run.results["measured"] = out
        run.save()
    return out


ROWS = [  # (row label, function of a measured size -> number, format)
    ("load average (1 min): build start / end", lambda m: tuple(m["build"]["load"]), "{:.1f} / {:.1f}"),
    ("load average (1 min): measuring start / end", lambda m: tuple(m["load"]), "{:.1f} / {:.1f}"),
    ("build s", lambda m: m["build"]["seconds"], "{:.0f}"),
    ("build ms / record", lambda m: 1000 * m["build"]["seconds"] / m["build"]["chunks"], "{:.2f}"),
    *[(f"  {stage} ms / record", (lambda s: lambda m: 1000 * m["build"]["timings"].get(s, 0) / m["build"]["chunks"])(stage),
       "{:.3f}") for stage in ("load", "chunk", "analyse", "embed", "write wait", "write", "rows", "bm25",
                                   "publish")],
    ("build peak RSS MB", lambda m: m["build"]["rss_mb"], "{:.0f}"),
    ("index folder (--db) MB", lambda m: m["db_mb"], "{:.0f}"),
    ("  HNSW index MB", lambda m: m["hnsw_mb"], "{:.0f}"),
    ("  BM25 index MB", lambda m: m["bm25_mb"], "{:.1f}"),
    ("  rows (texts, vectors) MB", lambda m: m["rows_mb"], "{:.0f}"),
    ("  embedding cache MB", lambda m: m["cache_mb"], "{:.0f}"),
    *[row for mode in MODES for row in (
        (f"cold query {mode} s", lambda m, md=mode: m["cold"][md], "{:.2f}"),
        ("  its CPU time s", lambda m, md=mode: m["cold"][f"{md} cpu"], "{:.2f}"))],
    *[row for mode in MODES for row in (
        (f"warm {mode} p50 / p99 ms", lambda m, md=mode: (m["warm"][md]["p50_ms"], m["warm"][md]["p99_ms"]),
         "{:.1f} / {:.1f}"),
        ("  its CPU time p50 / p99 ms", lambda m, md=mode: (m["warm"][md]["cpu_p50_ms"], m["warm"][md]["cpu_p99_ms"]),
         "{:.1f} / {:.1f}"))],
    *[(f"serve {mode} p50 / p99 ms", (lambda md: lambda m: (m["http"][md]["p50_ms"], m["http"][md]["p99_ms"]))(mode),
       "{:.1f} / {:.1f}") for mode in MODES],
    ("serve first request s", lambda m: m["http"]["first_s"], "{:.2f}"),
    ("serving RSS MB (anon + file)", lambda m: (m["serve_rss"]["rss_mb"], m["serve_rss"]["anon_mb"],
                                                m["serve_rss"]["file_mb"]), "{:.0f} ({:.0f} + {:.0f})"),
    ("serving RSS / (HNSW + BM25)", lambda m: m["serve_rss"]["rss_mb"] / max(m["hnsw_mb"] + m["bm25_mb"], 1e-9),
     "{:.2f}"),
    ("one edited file: build s", lambda m: m["update"]["seconds"], "{:.2f}"),
    ("  the next edit: build s", lambda m: m["update2"]["seconds"], "{:.2f}"),
    ("gc s", lambda m: m["gc_s"], "{:.2f}"),
]
SERVER_ROWS = [
    ("Chroma server data MB", lambda m: m["chroma_mb"], "{:.0f}"),
    ("Chroma server RSS MB", lambda m: m["chroma_rss"]["rss_mb"], "{:.0f}"),
    *[(f"reader {i}: first query (BM25 rebuilt) s", (lambda j: lambda m: m["readers"][j]["first_s"])(i - 1), "{:.2f}")
      for i in (1, 2)],
    *[(f"reader {i}: next cold query s", (lambda j: lambda m: m["readers"][j]["again_s"])(i - 1), "{:.2f}")
      for i in (1, 2)],
]


def measure_all(args, sizes: list[int], xquad: Path) -> None:
    if args.report:
        return saved(args, sizes)
    queries = scale_kit.questions(xquad, 10 + 3 * args.queries)
    if args.bm25:
        return bm25_side(args, sizes, xquad, queries)
    results = {"embedded": {}, "server": {}}
    for n in sizes:
        if args.only in (None, "embedded"):
            results["embedded"][n] = embedded(args, n, xquad, queries)
        if args.only in (None, "server"):
            results["server"][n] = server(args, n, xquad, queries)
    if args.build_only:
        print(json.dumps(results, indent=1))
        return
    print_tables(results)


def print_tables(results: dict[str, dict[int, dict]]) -> None:
    print(f"#### Scale: `{STRATEGY}` chunks of recombined XQuAD-tr, `bench-hash` vectors (512-d), "
          f"{time.strftime('%Y-%m-%d')}, {machine()}\n")
    for kind, rows in (("embedded", ROWS), ("server", ROWS + SERVER_ROWS)):
        if results.get(kind):
            print(f"{kind}:\n\n{render(results[kind], rows)}\n")


def saved(args, sizes: list[int]) -> None:
    """`--report`: the tables from the figures kept in --data, measuring nothing (sizes or
    kinds of store not measured yet are left out)."""

    def kept(kind: str, n: int) -> dict | None:
        path = args.data / f"results-{kind}-{label(n)}.json"
        found = json.loads(path.read_text()) if path.exists() else {}
        return found.get("measured", found) if kind != "bm25" else found or None

    results = {kind: {n: m for n in sizes if (m := kept(kind, n))} for kind in ("embedded", "server", "bm25")}
    results = {kind: {n: m for n, m in got.items() if kind == "bm25" or "cold" in m} for kind, got in results.items()}
    print_tables({kind: results[kind] for kind in ("embedded", "server") if args.only in (None, kind)})
    if results["bm25"] and args.only is None:
        print(f"the BM25 side alone (`--bm25`):\n\n{scale_bm25.report(results['bm25'])}\n")


def bm25_side(args, sizes: list[int], xquad: Path, queries: list[str]) -> None:
    measured = {}
    for n in sizes:
        corpus = scale_kit.write_corpus(args.data / f"corpus-{label(n)}", n, xquad)
        load = os.getloadavg()[0]
        measured[n] = scale_bm25.measure(args.data, n, corpus, queries, cold=1 if args.smoke else 3)
        measured[n]["load"] = [load, os.getloadavg()[0]]
        (args.data / f"results-bm25-{label(n)}.json").write_text(json.dumps(measured[n], indent=1))
        shutil.rmtree(args.data / f"bm25-{n}", ignore_errors=True)
    print(f"#### Scale, the BM25 side alone: `{STRATEGY}` chunks of recombined XQuAD-tr, "
          f"{time.strftime('%Y-%m-%d')}, {machine()}\n")
    print(scale_bm25.report(measured))
