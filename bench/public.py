"""The default search on every benchmark set, for every strategy and both embedders.

    python -m bench.public                                   # every set, strategy and embedder (hours cold)
    python -m bench.public --embedders use-m3 --sets tr,exact
    python -m bench.public --strategies auto --json out.json --markdown table.md
    python -m bench.public --smoke            # the smoke set, two strategies, a tune (numbers mean nothing)

For every set × strategy × embedder, through the real pipeline (`indexer.build`, then
`indexer.evaluate` on the stored collections): the embedding alone, BM25 alone and the
default search (hybrid, adaptive fusion, exact-match tiers) with recall@1, recall@5,
MRR@10 and ctxTok@5, and the default's distance to the better single side on MRR@10 and on
recall@1 (with its paired 95% interval). A cell *holds* when the default is at or above the
better side within 0.01 MRR@10 and one question of recall@1. Sets tagged by kind (the
exact-lookup set) get recall@1 per kind too. `--tune-strategies` adds `indexer tune`'s best
configuration per set (cross-validated), as before.

Builds live in bench/.cache/lab/db-<set> (kept between runs: the embedding cache makes a
rerun cheap; delete the folder for a cold build); each set × strategy × embedder is built
once. The sets come from bench/public_sets.py (XQuAD: --xquad DIR or INDEXER_XQUAD_DIR).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bench.common import CACHE, machine, save_json, smoke_option, table
from bench.public_sets import DEFAULT_SETS, materialize
from indexer.evaluation.metrics import paired_difference
from indexer.evaluation.run import MRR_METRIC, evaluate
from indexer.evaluation.tune import tune
from indexer.indexing.building import build
from indexer.settings import Settings

DB_ROOT = CACHE / "lab"
MODES = ("embedding", "bm25", "hybrid")
STRATEGIES = ("fixed64", "fixed256", "headers", "blocks", "semantic", "parent", "code", "auto")
KIND_TAGS = {"exact": ("code", "symbol", "number", "version", "file", "phrase")}
BOUND_MRR, BOUND_R1 = 0.01, 1  # what "at or above the better single side" allows


def strategies_for(name: str, wanted: list[str]) -> list[str]:
    """`code` applies to sets with source code."""
    return [s for s in wanted if s != "code" or name.startswith("code") or name == "exact"]


def measure(name: str, embedder: str, strategies: list[str], tune_strategies: list[str], folds: int) -> list[dict]:
    folder, questions = materialize(name)
    db = DB_ROOT / f"db-{name}"
    built = {}
    for strategy in strategies:
        t0 = time.perf_counter()
        build([folder], [strategy], settings=Settings.load(db=db, embedder=embedder))
        built[strategy] = round(time.perf_counter() - t0, 1)
    ev = evaluate(questions, strategies, MODES, (1, 5), built_with=(embedder,), corpus=folder, settings=Settings.load(db=db))
    n = len(ev.questions)
    tags = {q.id: set(q.tags) for q in ev.questions}
    out = []
    for strategy in dict.fromkeys(r.strategy for r in ev.rows):
        rows = {r.mode: r for r in ev.rows if r.strategy == strategy}
        cell = {"set": name, "strategy": strategy, "embedder": embedder, "questions": n,
                "chunks": rows["hybrid"].chunks, "build_s": built.get(strategy), "modes": {}}
        for mode, row in rows.items():
            cell["modes"][mode] = {"recall@1": row.recall(1), "recall@5": row.recall(5),
                                   MRR_METRIC: round(row.mrr, 4), "ctx_tokens@5": round(row.ctx_tokens)}
            if name in KIND_TAGS:
                cell["modes"][mode]["recall@1 by kind"] = {
                    kind: [sum(1 for r in row.results if kind in tags[r.id] and r.first_hit == 1),
                           sum(1 for r in row.results if kind in tags[r.id])] for kind in KIND_TAGS[name]}
        default = rows["hybrid"]
        raw = {}
        for metric in (MRR_METRIC, "recall@1"):
            better = max(("embedding", "bm25"), key=lambda m: sum(rows[m].per_question(metric)))
            mean, (lo, hi) = paired_difference(default.per_question(metric), rows[better].per_question(metric))
            raw[metric] = mean
            cell[f"{metric} default-better"] = {"side": better, "difference": round(mean, 4),
                                                "ci95": [round(lo, 4), round(hi, 4)]}
        # from the unrounded differences (one question of 65 is -0.01538..., -1.001 once rounded)
        cell["holds"] = raw[MRR_METRIC] >= -BOUND_MRR - 1e-9 and raw["recall@1"] * n >= -BOUND_R1 - 1e-9
        out.append(cell)
    if tune_strategies:
        result = tune(questions, [s for s in tune_strategies if s in strategies], settings=Settings.load(db=db),
                      built_with=embedder, corpus=folder, folds=folds)
        mean, (lo, hi) = result.versus("bm25")
        out[0]["best"] = {"configuration": result.best.label, MRR_METRIC: round(result.best.mean(MRR_METRIC), 4),
                          "cv_mrr@10": round(sum(result.held_out[MRR_METRIC]) / n, 4),
                          "cv_gain_vs_bm25": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)]}
    return out


def report(results: list[dict]) -> str:
    rows = []
    for r in results:
        n = r["questions"]
        m = r["modes"]
        d_mrr, d_r1 = r[f"{MRR_METRIC} default-better"], r["recall@1 default-better"]
        rows.append([
            r["set"], r["strategy"], r["embedder"],
            f"{m['embedding'][MRR_METRIC]:.3f}", f"{m['embedding']['recall@1']}/{n}",
            f"{m['bm25'][MRR_METRIC]:.3f}", f"{m['bm25']['recall@1']}/{n}",
            f"{m['hybrid'][MRR_METRIC]:.3f}", f"{m['hybrid']['recall@1']}/{n}", f"{m['hybrid']['recall@5']}/{n}",
            f"{d_mrr['difference']:+.3f} vs {d_mrr['side'][:3]}",
            f"{d_r1['difference'] * n:+.0f} [{d_r1['ci95'][0] * n:+.0f}, {d_r1['ci95'][1] * n:+.0f}]",
            "yes" if r["holds"] else "NO"])
    text = table(["set", "strategy", "embedder", "emb MRR@10", "emb r@1", "bm25 MRR@10", "bm25 r@1",
                  "default MRR@10", "default r@1", "default r@5", "MRR@10 default - better",
                  "r@1 default - better [95%]", "holds"], rows)
    held = sum(r["holds"] for r in results)
    text += f"\n\n{held} of {len(results)} cells hold (default within {BOUND_MRR} MRR@10 and {BOUND_R1} question " \
            "of recall@1 of the better single side).\n"
    kinds = [r for r in results if "recall@1 by kind" in r["modes"]["hybrid"]]
    if kinds:
        heads = list(kinds[0]["modes"]["hybrid"]["recall@1 by kind"])
        text += "\nrecall@1 by kind (default search):\n\n" + table(
            ["set", "strategy", "embedder", *heads],
            [[r["set"], r["strategy"], r["embedder"],
              *(f"{a}/{b}" for a, b in r["modes"]["hybrid"]["recall@1 by kind"].values())] for r in kinds]) + "\n"
    best = [[r["set"], r["embedder"], r["best"]["configuration"], f"{r['best']['cv_mrr@10']:.3f}",
             f"{r['best']['cv_gain_vs_bm25']:+.3f} [{r['best']['ci95'][0]:+.3f}, {r['best']['ci95'][1]:+.3f}]"]
            for r in results if "best" in r]
    if best:
        text += "\nBest configuration per set (`indexer tune`, cross-validated):\n\n" + table(
            ["set", "embedder", "best on all questions", "CV MRR@10", "CV gain over bm25 [95%]"], best) + "\n"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS))
    parser.add_argument("--embedders", default="use-m3,e5-small")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--tune-strategies", default="", help="strategies `indexer tune` compares (default: no tuning)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables to this file")
    parser.add_argument("--xquad", type=Path, default=None, metavar="DIR",
                        help="folder with the XQuAD files [env INDEXER_XQUAD_DIR; default bench/.cache/xquad]")
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sets, args.embedders, args.strategies = "smoke", "use-m3", "fixed64,auto"
        args.tune_strategies, args.folds = "fixed64,auto", 2
    if args.xquad:
        os.environ["INDEXER_XQUAD_DIR"] = str(args.xquad.resolve())
    tune_strategies = [s for s in args.tune_strategies.split(",") if s]
    head = f"the default search on {args.sets}; {time.strftime('%Y-%m-%d')}, {machine()}\n"
    print(head, flush=True)
    results = []
    for embedder in args.embedders.split(","):
        for name in args.sets.split(","):
            t0 = time.perf_counter()
            results.extend(measure(name, embedder, strategies_for(name, args.strategies.split(",")),
                                   tune_strategies, args.folds))
            print(f"  {name} / {embedder}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
            save_json(args.json, results)  # as it goes: a long run keeps what it measured
    text = report(results)
    print(text)
    if args.markdown:
        args.markdown.write_text(head + "\n" + text, encoding="utf-8")


if __name__ == "__main__":
    main()
