"""What a build costs against what it cannot go below, and against the peers' pipelines
(issue 53, "Pay once"). Sections of bench/run.py:

- `peers`: at 0.05 MB and 0.5 MB (unique Turkish Markdown) and on a real English folder
  (1.5 MB of Linux man pages, bench/processes.py), each pipeline in a fresh process
  (start-up, imports and the model's loading included), round robin `repeat` times so
  a busy machine slows each alike: `indexer build -s fixed128`; the bare model pass
  over that collection's distinct indexed texts (bench/model_pass.py), the limit; and
  LangChain's and LlamaIndex's pipelines (bench/peers.py) with the same embedder and
  Chroma. Wall and CPU seconds, peak RSS, the folder each writes, by part for indexer.
- `build`: `indexer build` on the bundled-style corpus and on the real folders (English
  pages with fixed128, a mixed folder with auto): the share of a build that is not the
  model (the model's own time, `timings["model"]`, which holds the chunks' embedding,
  the probe queries' and the model's loading), against a bare model pass, and how far
  the build's own estimate ("about 3 min at 427 texts/s") was from what it took.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import sys
from pathlib import Path

from bench.common import Size, folder_size, missing, repeated_markdown, table, write_corpus
from bench.processes import Measured, english_folder, megabytes, mixed_folder, run_measured

PY = sys.executable
PEER_MODULES = ("langchain_chroma", "langchain_text_splitters", "llama_index.core", "llama_index.vector_stores.chroma")
PEERS = (("langchain", "LangChain RecursiveCharacterTextSplitter(128) -> Chroma"),
         ("llamaindex", "LlamaIndex SentenceSplitter(128) -> Chroma"))
REAL_MB = 1.5


def _indexer(folder: Path, db: Path, strategy: str) -> list[str]:
    return [PY, "-m", "indexer", "build", str(folder), "-s", strategy, "--db", str(db), "--json"]


def _fresh(db: Path, cmd: list[str]) -> Measured:
    shutil.rmtree(db, ignore_errors=True)
    return run_measured(cmd)


def _median(runs: list[Measured]) -> Measured:
    """The run of median wall time, with the median CPU of all runs."""
    chosen = sorted(runs, key=lambda m: m.wall)[len(runs) // 2]
    return Measured(wall=chosen.wall, cpu=statistics.median(m.cpu for m in runs), rss=chosen.rss,
                    stdout=chosen.stdout, stderr=chosen.stderr)


def model_pass(db: Path, strategy: str, work: Path) -> list[str]:
    """The command of a bare model pass over the collection's distinct indexed texts."""
    from bench.model_pass import write_texts

    texts = work / f"texts-{db.name}.json"
    write_texts(db, strategy, texts)
    return [PY, "-m", "bench.model_pass", str(texts)]


def compare(folder: Path, work: Path, repeat: int, strategy: str = "fixed128") -> dict[str, dict]:
    """Every pipeline on `folder`, round robin: {label: {"run": Measured, "chunks", "disk"}}."""
    db = work / "peer-indexer"
    cmds = {"indexer": _indexer(folder, db, strategy)}
    runs: dict[str, list[Measured]] = {}
    for i in range(repeat):
        runs.setdefault("indexer", []).append(_fresh(db, cmds["indexer"]))
        if i == 0:
            cmds["model"] = model_pass(db, strategy, work)
        runs.setdefault("model", []).append(run_measured(cmds["model"]))
        for peer, _ in PEERS:
            peer_db = work / f"peer-{peer}"
            cmd = [PY, "-m", "bench.peers", peer, str(folder), str(peer_db), "--size", "128"]
            runs.setdefault(peer, []).append(_fresh(peer_db, cmd))
    out = {}
    for label, measured in runs.items():
        run = _median(measured)
        line = json.loads(run.stdout.strip().splitlines()[-1])
        disk = 0 if label == "model" else folder_size(db if label == "indexer" else work / f"peer-{label}")
        out[label] = {"run": run, "chunks": line.get("chunks") or line.get("texts"), "disk": disk}
    out["parts"] = index_parts(db)
    return out


def index_parts(db: Path) -> dict[str, int]:
    """Where an index folder's bytes go: Chroma's database and vector folders, the
    embedding cache, and the side files by kind."""
    from indexer.settings import Settings
    from indexer.store import Store

    disk = Store(Settings.load(db=db)).disk()
    chroma = folder_size(db / "chroma")
    parts = {"Chroma database": disk.database, "Chroma vectors": chroma - disk.database,
             "embedding cache": disk.cache}
    for kind in ("bm25", "rows", "exact"):
        parts[f"side: {kind}"] = sum(folder_size(p) for p in (db / "indexes").glob(f"*/g*/{kind}*"))
    parts["side: manifest"] = sum(p.stat().st_size for p in (db / "indexes").glob("*/g*/manifest.json"))
    parts["total"] = folder_size(db)
    return parts


def _folders(size: Size, work: Path) -> list[tuple[str, Path]]:
    small = [(f"{mb:g} MB Turkish Markdown", write_corpus(work / f"peer-corpus-{mb:g}",
                                                          repeated_markdown(mb, unique=True, first=size.documents)))
             for mb in size.pick((0.005,), (0.05,), (0.05, 0.5))]
    real = english_folder(work, REAL_MB) if size.name == "full" else None
    return small + ([(f"{megabytes(real):.1f} MB English man pages", real)] if real else [])


def bench_peers(report, size: Size, work: Path) -> None:
    absent = missing(*PEER_MODULES)
    if absent:
        report.section("Peers: the same folder, embedder (use-m3) and Chroma",
                       f"skipped: {', '.join(absent)} not installed (the `bench` extra: pip install -e \".[bench]\")")
        return
    repeat = size.pick(1, 1, 3)
    rows, parts = [], {}
    for name, folder in _folders(size, work):
        got = compare(folder, work, repeat)
        rows += _rows(name, got)
        _targets(report, name, got, real="man pages" in name)
        parts[name] = got["parts"]
    report.section(
        "Pay once: indexer build against a bare model pass and the peers' pipelines",
        table(["folder", "pipeline", "texts", "wall s", "CPU s", "wall / model", "CPU / model", "peak RSS MB",
               "disk MB", "disk / LangChain"], rows)
        + f"\n\nEach pipeline in a fresh process (start-up, imports, the model's loading included), round robin"
          f" {repeat} time(s), the run of median wall time shown with the median CPU time (user + system: the"
          " process and its threads; 2 cores shared with other jobs, so wall time moves with their load)."
          " `model pass`: bench/model_pass.py embeds the indexer collection's distinct indexed texts and nothing"
          " else: what a build cannot go below. indexer also cuts units for answer-sized context, builds its"
          " BM25, rows and exact-match files and a manifest, and probes its embedder (150 queries); the peers"
          " only split, embed and add to Chroma (bench/peers.py).",
    )
    report.section("Where an index's bytes go (MB)", _parts_table(parts))


def _rows(name: str, got: dict) -> list[list]:
    model, lc = got["model"]["run"], got.get("langchain", {}).get("disk")
    labels = {"indexer": "indexer build -s fixed128", "model": "model pass (the limit)", **dict(PEERS)}
    out = []
    for key in ("indexer", "model", *(p for p, _ in PEERS)):
        if key not in got:
            continue
        run, disk = got[key]["run"], got[key]["disk"]
        out.append([name, labels[key], got[key]["chunks"], f"{run.wall:.1f}", f"{run.cpu:.1f}",
                    f"{run.wall / model.wall:.2f}", f"{run.cpu / model.cpu:.2f}", f"{run.rss / 1024:.0f}",
                    f"{disk / 1e6:.1f}" if disk else "-", f"{disk / lc:.2f}" if disk and lc else "-"])
    return out


def _targets(report, name: str, got: dict, real: bool) -> None:
    ours, model, lc = got["indexer"]["run"], got["model"]["run"], got.get("langchain")
    if real:
        report.target(f"indexer build -s fixed128 vs its model pass, {name} (wall; CPU)", "<= 1.10x",
                      f"{ours.wall / model.wall:.2f}x; {ours.cpu / model.cpu:.2f}x", ours.wall <= 1.10 * model.wall)
    if lc:
        report.target(f"indexer build -s fixed128 vs LangChain's pipeline, {name} (wall; CPU)", "<= 1.00x",
                      f"{ours.wall / lc['run'].wall:.2f}x; {ours.cpu / lc['run'].cpu:.2f}x",
                      ours.wall <= lc["run"].wall)
        report.target(f"index folder vs LangChain's Chroma folder, {name}", "<= 1.5x",
                      f"{got['indexer']['disk'] / lc['disk']:.2f}x", got["indexer"]["disk"] <= 1.5 * lc["disk"])


def _parts_table(parts: dict[str, dict[str, int]]) -> str:
    names = list(parts)
    keys = list(next(iter(parts.values()))) if parts else []
    return table(["part", *names], [[k, *(f"{parts[n][k] / 1e6:.2f}" for n in names)] for k in keys])


# -- a build's cost beside its model, on real folders -----------------------------------------

def build_cost(folder: Path, db: Path, strategy: str, work: Path) -> dict:
    """One cold `indexer build` (fresh process) and a bare model pass over its texts."""
    build = _fresh(db, _indexer(folder, db, strategy))
    model = run_measured(model_pass(db, strategy, work))
    report = json.loads(build.stdout.splitlines()[0])
    return {"build": build, "model": model, "report": report, "estimate": estimate_seconds(build.stderr)}


def estimate_seconds(stderr: str) -> float | None:
    """The seconds the build's own estimate line foresaw (None: it printed none, under 30 s)."""
    found = re.search(r"^embedding ~.*: about (\d+) (min|s) at", stderr, re.M)
    if not found:
        return None
    return float(found.group(1)) * (60 if found.group(2) == "min" else 1)


def real_builds(size: Size, work: Path) -> list[tuple[str, str, Path]]:
    """(label, strategy, folder) of the real folders a full run builds."""
    if size.name != "full":
        return []
    english, mixed = english_folder(work, REAL_MB), mixed_folder(work)
    out = []
    if english:
        out.append((f"{megabytes(english):.1f} MB English man pages", "fixed128", english))
    if mixed:
        out.append((f"{megabytes(mixed):.1f} MB mixed (pages, Python, Markdown)", "auto", mixed))
    return out


def cost_row(label: str, strategy: str, got: dict) -> list:
    r, build, model = got["report"], got["build"], got["model"]
    t = r["timings"]
    outside = r["seconds"] - t.get("model", 0.0)
    after = t.get("model", 0.0)  # what the estimate foresaw: the embedding from the first batch on
    estimate = got["estimate"]
    return [label, strategy, r["files"], r["chunks"], f"{build.wall:.1f}", f"{build.cpu:.1f}",
            f"{model.wall:.1f}", f"{model.cpu:.1f}", f"{build.wall / model.wall:.2f}", f"{build.cpu / model.cpu:.2f}",
            f"{t.get('model', 0):.1f}", f"{100 * outside / r['seconds']:.1f}%",
            f"{estimate:.0f} / {after:.0f}" if estimate else "-"]


COST_HEADERS = ["folder", "strategy", "files", "chunks", "build wall s", "build CPU s", "model pass wall s",
                "model pass CPU s", "wall / model", "CPU / model", "model s (in build)", "not the model",
                "estimate / took s"]
