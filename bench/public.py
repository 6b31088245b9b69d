"""The default search on six question sets, three of which nobody on this project wrote.

    python bench/public.py                       # all six sets, use-m3 and e5-small (~40 min cold)
    python bench/public.py --embedders use-m3    # the default embedder only (~5 min)
    python bench/public.py --sets xquad-tr,code-pypi --json out.json

For every set and embedder, through the real pipeline (`indexer.build`, then
`indexer.evaluate` on the stored collections): the default strategy (`auto`) searched by
embedding alone, BM25 alone and the default search (hybrid, adaptive fusion), with
recall@1, recall@5, MRR@10, ctxTok@5 and the paired 95% interval of default minus BM25
and default minus the better single side. Then `indexer.tune` over a few strategies names
the best configuration for the set, with its cross-validated gain over BM25.

Builds live in bench/.cache/lab/db-<set> (kept between runs: the embedding cache makes a
rerun cheap; delete the folder for a cold build). The sets come from bench/public_sets.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, save_json, table  # noqa: E402
from public_sets import SETS, materialize  # noqa: E402

from indexer.indexing.building import build  # noqa: E402
from indexer.evaluation.run import MRR_METRIC, evaluate  # noqa: E402
from indexer.evaluation.metrics import paired_difference  # noqa: E402
from indexer.evaluation.tune import tune  # noqa: E402

DB_ROOT = Path(__file__).resolve().parent / ".cache" / "lab"
MODES = ("embedding", "bm25", "hybrid")


def measure(name: str, embedder: str, tune_strategies: list[str], folds: int) -> dict:
    folder, questions = materialize(name)
    db = DB_ROOT / f"db-{name}"
    strategies = list(dict.fromkeys(["auto", *tune_strategies]))
    t0 = time.perf_counter()
    build([folder], strategies, db=db, embedder=embedder)
    built = time.perf_counter() - t0
    ev = evaluate(questions, ["auto"], MODES, (1, 5), db=db, embedders=(embedder,), corpus=folder)
    n = len(ev.questions)
    rows = {r.mode: r for r in ev.rows}
    out = {"set": name, "embedder": embedder, "questions": n, "build_s": round(built, 1),
           "chunks": rows["hybrid"].chunks, "modes": {}}
    for mode, row in rows.items():
        out["modes"][mode] = {"recall@1": row.recall(1), "recall@5": row.recall(5), MRR_METRIC: round(row.mrr, 4),
                              "ctx_tokens@5": round(row.ctx_tokens)}
    default = rows["hybrid"]
    for metric in (MRR_METRIC, "recall@1"):
        better = max(("embedding", "bm25"), key=lambda m: sum(rows[m].per_question(metric)))
        for label, other in (("bm25", "bm25"), ("better", better)):
            mean, (lo, hi) = paired_difference(default.per_question(metric), rows[other].per_question(metric))
            out[f"{metric} default-{label}"] = {"side": other, "difference": round(mean, 4),
                                                "ci95": [round(lo, 4), round(hi, 4)]}
    if tune_strategies:
        result = tune(questions, strategies, db=db, embedder=embedder, corpus=folder, folds=folds)
        mean, (lo, hi) = result.versus("bm25")
        out["best"] = {"configuration": result.best.label, MRR_METRIC: round(result.best.mean(MRR_METRIC), 4),
                       "cv_mrr@10": round(sum(result.held_out[MRR_METRIC]) / n, 4),
                       "cv_gain_vs_bm25": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)]}
    return out


def report(results: list[dict]) -> str:
    rows = []
    for r in results:
        n = r["questions"]
        for mode in MODES:
            m = r["modes"][mode]
            label = "default" if mode == "hybrid" else mode
            extra = ["", ""]
            if mode == "hybrid":
                for i, metric in enumerate((MRR_METRIC, "recall@1")):
                    d = r[f"{metric} default-bm25"]
                    b = r[f"{metric} default-better"]
                    scale = 1 if metric == MRR_METRIC else n
                    fmt = "{:+.3f}" if metric == MRR_METRIC else "{:+.1f}"
                    extra[i] = (f"{fmt.format(d['difference'] * scale)} [{fmt.format(d['ci95'][0] * scale)}, "
                                f"{fmt.format(d['ci95'][1] * scale)}]")
                    if b["side"] != "bm25":
                        extra[i] += (f"; vs {b['side']} {fmt.format(b['difference'] * scale)} "
                                     f"[{fmt.format(b['ci95'][0] * scale)}, {fmt.format(b['ci95'][1] * scale)}]")
            rows.append([r["set"], r["embedder"], label, f"{m['recall@1']}/{n}", f"{m['recall@5']}/{n}",
                         f"{m[MRR_METRIC]:.3f}", m["ctx_tokens@5"], *extra])
    text = table(["set", "embedder", "search", "recall@1", "recall@5", "MRR@10", "ctxTok@5",
                  "MRR@10 default - bm25 [95%]", "recall@1 default - bm25 [95%]"], rows)
    best = [[r["set"], r["embedder"], r["best"]["configuration"], f"{r['best']['cv_mrr@10']:.3f}",
             f"{r['best']['cv_gain_vs_bm25']:+.3f} [{r['best']['ci95'][0]:+.3f}, {r['best']['ci95'][1]:+.3f}]"]
            for r in results if "best" in r]
    if best:
        text += "\n\nBest configuration per set (`indexer tune`, cross-validated):\n\n" + table(
            ["set", "embedder", "best on all questions", "CV MRR@10", "CV gain over bm25 [95%]"], best)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--embedders", default="use-m3,e5-small")
    parser.add_argument("--tune-strategies", default="headers,fixed128",
                        help="strategies besides auto that tune compares (empty: no tuning)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    tune_strategies = [s for s in args.tune_strategies.split(",") if s]
    print(f"the default search on {args.sets}; {time.strftime('%Y-%m-%d')}, {machine()}\n", flush=True)
    results = []
    for embedder in args.embedders.split(","):
        for name in args.sets.split(","):
            t0 = time.perf_counter()
            code = name.startswith("code")
            results.append(measure(name, embedder, [s for s in tune_strategies if not (code and s == "headers")],
                                   args.folds))
            print(f"  {name} / {embedder}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    print(report(results))
    save_json(args.json, results)


if __name__ == "__main__":
    main()
