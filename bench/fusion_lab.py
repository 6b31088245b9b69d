"""Fusion lab: capture both sides' candidate lists once per (set, strategy, embedder),
then score fusion rules offline in milliseconds.

    python bench/fusion_lab.py capture --sets tr,en,code --embedders use-m3
    python bench/fusion_lab.py explore

Capture goes through the real pipeline (`indexer.build`, `Index` searches); the offline
part only re-ranks the captured lists, so it is exact for any rule that uses nothing but
the two candidate lists (their ids, ranks and scores). The rule finally chosen is then
checked end to end by bench/public.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LAB = Path(__file__).resolve().parent / ".cache" / "lab"
DEPTH = 100


BUNDLED = {"tr": "", "en": "en", "code": "code"}


def set_paths(name: str) -> tuple[Path, Path]:
    if name in BUNDLED:
        folder = Path(__file__).resolve().parent.parent / "corpus" / BUNDLED[name]
        return folder, folder / "questions.jsonl"
    from public_sets import materialize

    return materialize(name)


def capture(set_name: str, strategy: str, embedder: str) -> Path:
    from indexer.building import build
    from indexer.evaluation import load_questions, resolve
    from indexer.loaders import load_documents
    from indexer.searching import Index

    out = LAB / f"cands--{set_name}--{strategy}--{embedder}.json"
    if out.exists():
        return out
    folder, qpath = set_paths(set_name)
    db = LAB / f"db-{set_name}"
    t0 = time.perf_counter()
    build([folder], [strategy], db=db, embedder=embedder)
    built = time.perf_counter() - t0
    questions = load_questions(qpath)
    _, docs = load_documents([folder])
    resolve(questions, {d.doc_id: d for d in docs})
    index = Index.open(strategy, db=db, embedder=embedder)
    spans = {c.id: (c.doc_id, c.start, c.end, c.n_tokens) for c in index.chunks()}
    rows = []
    t0 = time.perf_counter()
    for q in questions:
        dense = index._dense(q.question, DEPTH)
        sparse = index._sparse(q.question, DEPTH)
        rows.append({"id": q.id, "tags": q.tags, "doc": q.doc_id, "target": list(q.target),
                     "answer": list(q.answer_span) if q.answer_span else None,
                     "dense": [[cid, round(s, 6)] for cid, s in dense],
                     "sparse": [[cid, round(s, 6)] for cid, s in sparse]})
    searched = time.perf_counter() - t0
    LAB.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"set": set_name, "strategy": strategy, "embedder": embedder, "chunks": spans,
                               "questions": rows, "build_s": built, "search_s": searched}), encoding="utf-8")
    print(f"captured {set_name} {strategy} {embedder}: {len(rows)} questions, {len(spans)} chunks, "
          f"build {built:.0f}s, search {searched:.0f}s", flush=True)
    return out



# -- offline scoring ---------------------------------------------------------------------
def load_captures(pattern: str = "cands--*.json") -> list[dict]:
    out = []
    for path in sorted(LAB.glob(pattern)):
        data = json.loads(path.read_text(encoding="utf-8"))
        chunks = data["chunks"]
        for q in data["questions"]:
            doc, (lo, hi) = q["doc"], q["target"]

            def hit(cid, doc=doc, lo=lo, hi=hi):
                c = chunks.get(cid)
                return c is not None and c[0] == doc and c[1] < hi and lo < c[2]

            q["hits"] = {cid for cid, _ in q["dense"] + q["sparse"] if hit(cid)}
        out.append(data)
    return out


def first_rank(ranked: list[str], hits: set[str], depth: int = 10) -> int | None:
    for i, cid in enumerate(ranked[:depth], start=1):
        if cid in hits:
            return i
    return None


def metrics(ranks: list[int | None]) -> dict[str, list[float]]:
    return {
        "mrr": [1.0 / r if r else 0.0 for r in ranks],
        "r1": [1.0 if r == 1 else 0.0 for r in ranks],
        "r5": [1.0 if r and r <= 5 else 0.0 for r in ranks],
    }


def paired_ci(a: list[float], b: list[float], samples: int = 1000, seed: int = 13) -> tuple[float, float, float]:
    import numpy as np

    d = np.asarray(a) - np.asarray(b)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(samples, len(d)))
    means = d[idx].mean(axis=1)
    return float(d.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


# -- rules: (dense [(id, score)], sparse [(id, score)]) -> ranked ids ----------------------
def _order(scores: dict[str, float], first_seen: list[str]) -> list[str]:
    pos = {cid: i for i, cid in enumerate(first_seen)}
    return sorted(scores, key=lambda c: (-scores[c], pos[c]))


def r_dense(d, s):
    return [c for c, _ in d]


def r_sparse(d, s):
    return [c for c, _ in s]


def r_rrf(k=10, we=1.0, wb=1.0, n=50):
    def rule(d, s):
        scores: dict[str, float] = {}
        for w, lst in ((wb, s[:n]), (we, d[:n])):
            for r, (c, _) in enumerate(lst, 1):
                scores[c] = scores.get(c, 0.0) + w / (k + r)
        return _order(scores, [c for c, _ in s[:n]] + [c for c, _ in d[:n]])
    return rule


def _norm(lst, how):
    import numpy as np

    if not lst:
        return {}, 0.0
    v = np.array([x for _, x in lst], dtype=float)
    if how == "minmax":
        lo, hi = v.min(), v.max()
        out = (v - lo) / (hi - lo) if hi > lo else np.ones_like(v)
        floor = 0.0
    elif how == "z":
        mu, sd = v.mean(), v.std() or 1.0
        out = (v - mu) / sd
        floor = out.min()
    elif how == "dbsf":
        mu, sd = v.mean(), v.std() or 1.0
        lo, hi = mu - 3 * sd, mu + 3 * sd
        out = np.clip((v - lo) / (hi - lo), 0, 1)
        floor = out.min()
    elif how == "max":
        out = v / (v.max() or 1.0)
        floor = 0.0
    else:
        raise ValueError(how)
    return {c: float(x) for (c, _), x in zip(lst, out)}, float(floor)


def r_score(how="minmax", alpha=0.5, n=50):
    def rule(d, s):
        nd, fd = _norm(d[:n], how)
        ns, fs = _norm(s[:n], how)
        keys = list(dict.fromkeys([c for c, _ in s[:n]] + [c for c, _ in d[:n]]))
        scores = {c: alpha * nd.get(c, fd) + (1 - alpha) * ns.get(c, fs) for c in keys}
        return _order(scores, keys)
    return rule


def r_tiebreak(eps=0.05, n=50):
    """BM25 order; the dense side only reorders BM25 near-ties (minmax scores)."""
    return r_score("minmax", eps, n)


RULES = {
    "dense": r_dense,
    "bm25": r_sparse,
    **{f"rrf k={k} {we}:{wb}": r_rrf(k, we, wb) for k in (10, 60) for we, wb in ((1, 1), (1, 2), (1, 3))},
    **{f"rrf k={k} 1:{wb}": r_rrf(k, 1, wb) for k in (2, 5) for wb in (1, 2, 3)},
    **{f"minmax a={a}": r_score("minmax", a) for a in (0.2, 0.3, 0.4, 0.5)},
    **{f"z a={a}": r_score("z", a) for a in (0.2, 0.3, 0.4, 0.5)},
    **{f"dbsf a={a}": r_score("dbsf", a) for a in (0.2, 0.3, 0.4, 0.5)},
    **{f"max a={a}": r_score("max", a) for a in (0.2, 0.3, 0.5)},
}


def explore(rules: dict, captures: list[dict], metric_names=("mrr", "r1")) -> None:
    sides = {}
    results = {}
    for cap in captures:
        key = f"{cap['set']}/{cap['strategy']}/{cap['embedder'][:3]}"
        per_rule = {}
        for name, rule in rules.items():
            ranks = [first_rank(rule(q["dense"], q["sparse"]), q["hits"]) for q in cap["questions"]]
            per_rule[name] = metrics(ranks)
        results[key] = per_rule
        sides[key] = per_rule
    keys = list(results)
    print("rule".ljust(22) + "".join(k[:18].rjust(19) for k in keys) + "   worst-lo  mean")
    for m in metric_names:
        print(f"-- {m}: value (diff vs better side, lower CI)")
        for name in rules:
            cells, los, diffs = [], [], []
            for key in keys:
                pr = results[key]
                mine = pr[name][m]
                best = max(("dense", "bm25"), key=lambda s: sum(pr[s][m]))
                mean, lo, hi = paired_ci(mine, pr[best][m])
                val = sum(mine) / len(mine)
                cells.append(f"{val:.3f}({mean:+.3f},{lo:+.2f})")
                los.append(lo)
                diffs.append(mean)
            print(name.ljust(22) + "".join(c.rjust(19) for c in cells)
                  + f"   {min(los):+.3f}  {sum(diffs) / len(diffs):+.3f}")

def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("--sets", default="tr,en,code,xquad-tr,xquad-en,code-pypi")
    cap.add_argument("--strategies", default="auto")
    cap.add_argument("--embedders", default="use-m3")
    exp = sub.add_parser("explore")
    exp.add_argument("--pattern", default="cands--*.json")
    args = parser.parse_args()
    if args.cmd == "explore":
        explore(RULES, load_captures(args.pattern))
    if args.cmd == "capture":
        for emb in args.embedders.split(","):
            for set_name in args.sets.split(","):
                for strategy in args.strategies.split(","):
                    capture(set_name, strategy, emb)


if __name__ == "__main__":
    main()
