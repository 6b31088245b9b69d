"""Every benchmark bench/README.md names runs: each one's `--smoke` (every code path once, at
a size that takes seconds) in a process of its own, as a user types it, must exit 0 and print
its table's header. The tuning labs and the helper programs must at least start (`--help`).

Caches (bench/.cache) and the default index folder go to a temporary folder; the peers need
the `bench` extra, and are skipped, saying so, where it is not installed. The smoke runs
selected start together, as many at a time as there are cores (at most 4: most of their time
is starting processes), and each test waits for its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.common import missing
from bench.pay_once import PEER_MODULES
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

# module, arguments after --smoke, the columns of a table it prints (the last for bench.run);
# the longest first
SMOKES = [
    ("bench.run", [], ["target", "goal", "measured", "met"]),
    ("bench.scale", [], ["", "200"]),
    ("bench.watch_latency", [], ["reader", "saves", "median", "p90", "max"]),
    ("bench.serve_load", [], ["load", "requests", "p50 ms", "p99 ms", "requests/s", "errors"]),
    ("bench.lifecycle", [], ["build", "files", "chunks written", "seconds"]),
    ("bench.bm25_files", [], ["chunks", "files MB", "save s"]),
    ("bench.chroma_write", [], ["setting", "batch", "sync_threshold"]),
    ("bench.public_sets", [], ["set", "mode", "chunks", "recall@1"]),
    ("bench.public", [], ["set", "strategy", "embedder", "emb MRR@10"]),
    ("bench.beir", [], ["set", "strategy", "search", "chunks", "nDCG@10"]),
    ("bench.bundled", [], ["strategy", "search", "chunks", "avgTok", "recall@1"]),
    ("bench.questions_agreement", [], ["set", "questions", "Kendall tau-b"]),
    ("bench.agreement_ceiling", [], ["set", "questions", "tau-b real half ~ real half"]),
    ("bench.pdf_compare", [], ["extractor", "kind", "licence", "CER"]),
    ("bench.pdf_long", [], ["strategy", "peak RSS MB", "constant MB"]),
    ("bench.formats", [], ["format", "input", "files", "file MB"]),
    ("bench.deasciify", [], ["candidate", "word acc"]),
    ("bench.context", [], ["set", "method", "budget", "strict"]),
    ("bench.context_cost", [], ["collection", "chunks", "search p50 ms"]),
]
PEERS = [("bench.peers", ["langchain"]), ("bench.peers", ["llamaindex"])]
# programs whose smoke runs are other programs' (or that need what a test cannot have): they must start
STARTS = ["bench.build_probe", "bench.model_pass", "bench.memory_probe", "bench.scale_cli", "bench.deasciify_table",
          "bench.labs.agreement_tune", "bench.labs.calibrate_lab", "bench.labs.deasciify_retrieval",
          "bench.labs.default_lab", "bench.labs.defaults", "bench.labs.fusion_lab", "bench.labs.worth_lab",
          "bench.labs.context_fit", "bench.labs.within_grid", "bench.labs.english_lab"]


def run(module: str, args: list[str], tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ, INDEXER_BENCH_CACHE=str(tmp_path / "cache"), INDEXER_DB=str(tmp_path / "db"),
               HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def smoke_runs(request, tmp_path_factory):
    """{module: the future of its --smoke run}, for the smoke tests this session selected."""
    selected = {item.callspec.params["module"] for item in request.session.items
                if item.originalname == "test_every_benchmark_runs_at_its_smoke_size"}
    pool = ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, 4))  # each holds a model: not 16 at once
    runs = {module: pool.submit(run, module, ["--smoke", *args], tmp_path_factory.mktemp(module))
            for module, args, _ in SMOKES if module in selected}
    yield runs
    pool.shutdown(cancel_futures=True)


def header(columns: list[str]) -> re.Pattern:
    """A Markdown table's header row with these columns (padded as common.table pads them)."""
    return re.compile(r"^\|" + r"\|".join(rf" {re.escape(c)}\s*" for c in columns) + r"\|", re.M)


@pytest.mark.parametrize("module, args, columns", SMOKES, ids=[m for m, _, _ in SMOKES])
def test_every_benchmark_runs_at_its_smoke_size(module, args, columns, smoke_runs):
    done = smoke_runs[module].result()
    assert done.returncode == 0, f"{module} --smoke failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert header(columns).search(done.stdout), f"{module} printed no table {columns}:\n{done.stdout[-3000:]}"


@pytest.mark.parametrize("module, args", PEERS, ids=[a[0] for _, a in PEERS])
def test_the_peers_run_at_their_smoke_size(module, args, tmp_path):
    absent = missing(*PEER_MODULES)
    if absent:
        pytest.skip(f"the `bench` extra is not installed ({', '.join(absent)}): pip install -e \".[bench]\"")
    done = run(module, [*args, "--smoke"], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert re.search(r'^\{"chunks": [1-9]', done.stdout, re.M), done.stdout


def test_the_labs_and_the_helper_programs_start(tmp_path):
    for module in STARTS:
        done = run(module, ["--help"], tmp_path)
        assert done.returncode == 0 and "usage:" in done.stdout.lower(), f"{module}:\n{done.stderr[-3000:]}"


def test_the_smoke_list_holds_every_program():
    from tests.test_bench_layout import programs

    listed = {m for m, _, _ in SMOKES} | {m for m, _ in PEERS} | set(STARTS)
    assert listed == set(programs())
