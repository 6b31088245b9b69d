"""The embedder measured on each collection (`indexer.retrieval.worth`): what the build's
probes say, and the default search before and after the narrowing they cause.

    python -m bench.labs.worth_lab --sets scipy-docs,man-pages --strategies auto,headers,fixed256
    python -m bench.labs.worth_lab --sets tr,xquad-tr --embedders use-m3 --json out.json

For each set × strategy × embedder (built by `bench.public` in bench/.cache/lab/db-<set>;
built here when missing; an unchanged build measures a collection built before the
measurement existed): the probes' MRR@10 on each side and their ratio, the factor it puts
on the embedding share; then on the set's own questions the embedding alone, BM25 alone,
the default search as it was (the kind's range, not narrowed) and as it is now, with MRR@10
and nDCG@10, each default's paired difference from the better single side (95% interval)
and now - before. How `worth.FULL_AT` was chosen: a little under the lowest probe ratio of
the sets each kind's range was fitted on (prose: tr, en, xquad-tr, xquad-en; code: code,
code-pypi), so those keep their share whole; scipy-docs checked the floor; man-pages,
code-lib2 and exact were held out. `e5-small` prose: 0.5, under the lowest of its fitting
sets (tr, en, xquad-tr, xquad-en, man-pages: 0.549, tr `fixed256`); scipy-docs held out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.common import machine, parse_args, save_json, table, xquad_option
from bench.public import DB_ROOT, strategies_for
from bench.public_sets import materialize
from indexer.evaluation.metrics import paired_difference
from indexer.evaluation.run import evaluate
from indexer.evaluation.sets import MRR_METRIC, NDCG_METRIC
from indexer.indexing.building import build
from indexer.retrieval import Index, SearchOptions, entry_fusion
from indexer.retrieval.fusion import by_kind, size_of
from indexer.settings import Settings

METRICS = (MRR_METRIC, NDCG_METRIC)


def kind_range(fusion: dict, embedder: str) -> tuple[float, float]:
    """The embedding-share range the collection's kind gives, before any narrowing."""
    size = size_of(fusion["avg_tokens"]) if "avg_tokens" in fusion else ""
    return by_kind(embedder, fusion["kind"], fusion.get("lang", ""), size)[0]


def versus(row, e, b, metric: str) -> dict:
    better = max((e, b), key=lambda r: sum(r.per_question(metric)))
    mean, (lo, hi) = paired_difference(row.per_question(metric), better.per_question(metric))
    return {"value": round(sum(row.per_question(metric)) / row.n, 4), "vs_better": round(mean, 4),
            "ci95": [round(lo, 4), round(hi, 4)], "better": better.mode}


def measure(name: str, embedder: str, strategies: list[str]) -> list[dict]:
    folder, questions = materialize(name)
    db = DB_ROOT / f"db-{name}"
    settings = Settings.load(db=db)
    build([folder], strategies, settings=Settings.load(db=db, embedder=embedder))
    out, before = [], {}
    for s in strategies:
        index = Index.open(s, built_with=embedder, settings=settings)
        fusion = entry_fusion(index.store, index.entry)
        cell = {"set": name, "strategy": s, "embedder": embedder, "measured": fusion.get("measured", {}),
                "factor": fusion.get("embedding_factor", 1.0), "range": fusion.get("alpha_range")}
        if cell["factor"] < 1:
            before[s] = kind_range(fusion, embedder)
        out.append(cell)
    ev = evaluate(questions, strategies, ("embedding", "bm25", "hybrid"), (1, 5), settings=settings,
                  built_with=(embedder,), corpus=folder)
    rows = {(r.strategy, r.mode): r for r in ev.rows}
    for cell in out:
        s = cell["strategy"]
        e, b, now = rows[(s, "embedding")], rows[(s, "bm25")], rows[(s, "hybrid")]
        then = now
        if s in before:
            then = evaluate(questions, [s], ("hybrid",), (1, 5), settings=settings, built_with=(embedder,),
                            corpus=folder, options=SearchOptions(alpha_range=before[s])).rows[0]
        cell["questions"] = now.n
        for m in METRICS:
            mean, (lo, hi) = paired_difference(now.per_question(m), then.per_question(m))
            cell[m] = {"embedding": round(sum(e.per_question(m)) / e.n, 4),
                       "bm25": round(sum(b.per_question(m)) / b.n, 4),
                       "before": versus(then, e, b, m), "after": versus(now, e, b, m),
                       "after-before": [round(mean, 4), round(lo, 4), round(hi, 4)]}
    return out


def report(cells: list[dict]) -> str:
    rows = []
    for c in cells:
        m = c["measured"]
        probe = f"{m['embedding_mrr']:.2f}/{m['bm25_mrr']:.2f} = {m['ratio']:.2f}" if m else "-"
        row = [c["set"], c["strategy"], c["embedder"], probe, f"x{c['factor']:g}"]
        for metric in METRICS:
            x = c[metric]
            b, a = x["before"], x["after"]
            row += [f"{x['embedding']:.3f} / {x['bm25']:.3f}",
                    f"{b['value']:.3f} {b['vs_better']:+.3f} [{b['ci95'][0]:+.3f}, {b['ci95'][1]:+.3f}]",
                    f"{a['value']:.3f} {a['vs_better']:+.3f} [{a['ci95'][0]:+.3f}, {a['ci95'][1]:+.3f}]",
                    "{:+.3f} [{:+.3f}, {:+.3f}]".format(*x["after-before"])]
        rows.append(row)
    heads = ["set", "strategy", "embedder", "probes emb/bm25 MRR", "factor"]
    for metric in ("MRR@10", "nDCG@10"):
        heads += [f"{metric} emb / bm25", f"{metric} before, - better [95%]", f"{metric} after, - better [95%]",
                  f"{metric} after - before [95%]"]
    return table(heads, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="tr,en,code,xquad-tr,xquad-en,code-pypi,scipy-docs,man-pages")
    parser.add_argument("--embedders", default="use-m3")
    parser.add_argument("--strategies", default="auto,headers,fixed256")
    parser.add_argument("--json", type=Path, default=None)
    xquad_option(parser)
    args = parse_args(parser)
    print(f"the embedder measured per collection; {machine()}\n", flush=True)
    cells: list[dict] = []
    for embedder in args.embedders.split(","):
        for name in args.sets.split(","):
            cells += measure(name, embedder, strategies_for(name, args.strategies.split(",")))
            save_json(args.json, cells)
    print(report(cells))


if __name__ == "__main__":
    main()
