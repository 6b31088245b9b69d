"""Fusion lab: capture both sides' candidate lists once per (set, strategy, embedder),
then score fusion rules offline in milliseconds.

    python -m bench.labs.fusion_lab capture --sets tr,en,code --embedders use-m3
    python -m bench.labs.fusion_lab explore

Capture goes through the real pipeline (`indexer.build`, `Index` searches); the offline
part only re-ranks the captured lists, so it is exact for any rule that uses nothing but
the two candidate lists (their ids, ranks and scores). The rule finally chosen is then
checked end to end by bench/public.py.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.common import CACHE
from bench.public_sets import materialize
from indexer.settings import Settings

LAB = CACHE / "lab"
DEPTH = 100


def set_paths(name: str) -> tuple[Path, Path]:
    """(corpus folder, questions file) of a set of bench/public_sets.py."""
    return materialize(name)


def capture(set_name: str, strategy: str, embedder: str) -> Path:
    from indexer.evaluation.run import load_questions, resolve
    from indexer.indexing.building import build
    from indexer.loaders import load_documents
    from indexer.retrieval.index import Index

    out = LAB / f"cands--{set_name}--{strategy}--{embedder}.json"
    if out.exists():
        return out
    folder, qpath = set_paths(set_name)
    db = LAB / f"db-{set_name}"
    t0 = time.perf_counter()
    build([folder], [strategy], settings=Settings.load(db=db, embedder=embedder))
    built = time.perf_counter() - t0
    questions = load_questions(qpath)
    _, docs = load_documents([folder])
    resolve(questions, {d.doc_id: d for d in docs})
    index = Index.open(strategy, built_with=embedder, settings=Settings.load(db=db))
    spans = {c.id: (c.doc_id, c.start, c.end, c.n_tokens) for c in index.chunks()}
    rows = []
    t0 = time.perf_counter()
    for q in questions:
        dense = index.snapshot().sides.nearest(q.question, DEPTH)
        sparse = index.snapshot().sides.matching(q.question, DEPTH)
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


def r_adaptive(how="max", a_lo=0.2, a_hi=0.7, c_lo=0.3, c_hi=0.6, n=50):
    """Dense weight from BM25's coverage of the query (IDF share of the query terms the
    best BM25 candidate contains): a_hi below c_lo, a_lo above c_hi, linear between."""
    def rule(d, s, q):
        cov = q["cov"].get(s[0][0], 0.0) if s else 0.0
        t = min(max((cov - c_lo) / max(c_hi - c_lo, 1e-9), 0.0), 1.0)
        alpha = a_hi + (a_lo - a_hi) * t
        return r_score(how, alpha, n)(d, s)
    rule.wants_q = True
    return rule


def r_shipped(n=50):
    """The default search's own rule: min-max fusion with the embedder's adaptive ranges
    (indexer.retrieval.fusion.ADAPTIVE_DEFAULTS)."""
    from indexer.retrieval.fusion import adaptive_defaults

    def rule(d, s, q):
        (a_lo, a_hi), (c_lo, c_hi) = adaptive_defaults(q["embedder"])
        return r_adaptive("minmax", a_lo, a_hi, c_lo, c_hi, n)(d, s, q)
    rule.wants_q = True
    return rule


def r_covscale(how="max", alpha=0.5, n=50):
    """BM25's normalised scores scaled by its top coverage, dense normalised, summed."""
    def rule(d, s, q):
        cov = q["cov"].get(s[0][0], 0.0) if s else 0.0
        nd, fd = _norm(d[:n], how)
        ns, fs = _norm(s[:n], how)
        keys = list(dict.fromkeys([c for c, _ in s[:n]] + [c for c, _ in d[:n]]))
        scores = {c: alpha * nd.get(c, fd) + (1 - alpha) * cov * ns.get(c, fs) for c in keys}
        return _order(scores, keys)
    rule.wants_q = True
    return rule


RULES = {
    "dense": r_dense,
    "bm25": r_sparse,
    **{f"rrf k={k} {we}:{wb}": r_rrf(k, we, wb) for k in (10, 60) for we, wb in ((1, 1), (1, 2), (1, 3))},
    **{f"rrf k={k} 1:{wb}": r_rrf(k, 1, wb) for k in (2, 5) for wb in (1, 2, 3)},
    **{f"minmax a={a}": r_score("minmax", a) for a in (0.2, 0.3, 0.4, 0.5)},
    **{f"z a={a}": r_score("z", a) for a in (0.2, 0.3, 0.4, 0.5)},
    **{f"dbsf a={a}": r_score("dbsf", a) for a in (0.2, 0.3, 0.4, 0.5)},
    **{f"max a={a}": r_score("max", a) for a in (0.2, 0.3, 0.5)},
    "adaptive (shipped)": r_shipped(),
}


def explore(rules: dict, captures: list[dict], metric_names=("mrr", "r1")) -> None:
    sides = {}
    results = {}
    for cap in captures:
        key = f"{cap['set']}/{cap['strategy']}/{cap['embedder'][:3]}"
        for q in cap["questions"]:
            q.setdefault("embedder", cap["embedder"])
        per_rule = {}
        for name, rule in rules.items():
            ranks = [first_rank(rule(q["dense"], q["sparse"], q) if getattr(rule, "wants_q", False)
                                else rule(q["dense"], q["sparse"]), q["hits"]) for q in cap["questions"]]
            per_rule[name] = metrics(ranks)
        results[key] = per_rule
        sides[key] = per_rule
    keys = list(results)
    summary = []
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
            summary.append((m, name, min(diffs), min(los), sum(diffs) / len(diffs), sum(x < 0 for x in diffs)))
    print(f"\nSummary over {len(keys)} captures (difference to the better single side, per capture)\n")
    print("| metric | rule | worst difference | worst lower 95% bound | mean difference | captures below |")
    print("|---|---|---|---|---|---|")
    for m, name, worst, lo, mean, below in summary:
        print(f"| {m} | {name} | {worst:+.3f} | {lo:+.3f} | {mean:+.3f} | {below}/{len(keys)} |")


def add_features(path: Path) -> None:
    """Per question: the IDF of each query term, and per candidate the share of the
    query's IDF mass the candidate contains (`cov`): how well BM25's match covers it."""
    import math

    import numpy as np

    from indexer.retrieval.index import Index

    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("features") == 1:
        return
    set_name, strategy, embedder = data["set"], data["strategy"], data["embedder"]
    index = Index.open(strategy, built_with=embedder, settings=Settings.load(db=LAB / f"db-{set_name}"))
    bm = index.snapshot().parts.bm25
    n_docs = len(bm.ids)
    pos_of = {cid: i for i, cid in enumerate(bm.ids)}
    doc_terms = [set(bm.postings.doc_terms(i).tolist()) for i in range(n_docs)]
    df = np.zeros(len(bm.vocab), dtype=np.int64)
    for terms in doc_terms:
        for t in terms:
            df[t] += 1
    texts = {}
    for q in data["questions"]:
        texts[q["id"]] = q
    from indexer.evaluation.run import load_questions

    _, qpath = set_paths(set_name)
    by_id = {q.id: q.question for q in load_questions(qpath)}
    for q in data["questions"]:
        terms = sorted(set(bm.query_terms(by_id[q["id"]])))
        idf = {t: math.log(1 + (n_docs - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
        total = sum(idf.values()) or 1.0
        q["qterms"] = len(bm.analyzer(by_id[q["id"]]))
        q["qmatched"] = len(terms)
        q["qidf"] = total
        cov = {}
        for cid, _ in q["dense"] + q["sparse"]:
            p = pos_of.get(cid)
            if p is not None:
                cov[cid] = round(sum(v for t, v in idf.items() if t in doc_terms[p]) / total, 4)
        q["cov"] = cov
    data["features"] = 1
    path.write_text(json.dumps(data), encoding="utf-8")

def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("--sets", default="tr,en,code,xquad-tr,xquad-en,code-pypi")
    cap.add_argument("--strategies", default="auto")
    cap.add_argument("--embedders", default="use-m3")
    sub.add_parser("features")
    exp = sub.add_parser("explore")
    exp.add_argument("--pattern", default="cands--*.json")
    args = parser.parse_args()
    if args.cmd == "features":
        for path in sorted(LAB.glob("cands--*.json")):
            add_features(path)
    if args.cmd == "explore":
        explore(RULES, load_captures(args.pattern))
    if args.cmd == "capture":
        for emb in args.embedders.split(","):
            for set_name in args.sets.split(","):
                for strategy in args.strategies.split(","):
                    capture(set_name, strategy, emb)


if __name__ == "__main__":
    main()


def compact(rules: dict, captures: list[dict], metric_names=("mrr", "r1"), sort: bool = True) -> None:
    """One line per rule: per collection `diff/lower` against its better single side;
    then the worst lower bound and the mean difference."""
    table = {}
    keys = []
    for cap in captures:
        key = f"{cap['set']}/{cap['strategy'][:4]}/{cap['embedder'][:2]}"
        keys.append(key)
        per_rule = {}
        for name, rule in rules.items():
            ranks = [first_rank(rule(q["dense"], q["sparse"], q) if getattr(rule, "wants_q", False)
                                else rule(q["dense"], q["sparse"]), q["hits"]) for q in cap["questions"]]
            per_rule[name] = metrics(ranks)
        if "dense" not in per_rule:
            per_rule["dense"] = metrics([first_rank(r_dense(q["dense"], q["sparse"]), q["hits"]) for q in cap["questions"]])
            per_rule["bm25"] = metrics([first_rank(r_sparse(q["dense"], q["sparse"]), q["hits"]) for q in cap["questions"]])
        table[key] = per_rule
    for m in metric_names:
        print(f"\n{m}: diff vs the better side / lower 95% bound" + "".ljust(4))
        print("rule".ljust(30) + "".join(k[:15].rjust(16) for k in keys) + "   worst   mean")
        lines = []
        for name in rules:
            cells, los, diffs = [], [], []
            for key in keys:
                pr = table[key]
                best = max(("dense", "bm25"), key=lambda s: sum(pr[s][m]))
                mean, lo, _ = paired_ci(pr[name][m], pr[best][m])
                cells.append(f"{mean:+.3f}/{lo:+.3f}")
                los.append(lo)
                diffs.append(mean)
            lines.append((min(los), name.ljust(30) + "".join(c.rjust(16) for c in cells)
                          + f" {min(los):+.3f} {sum(diffs) / len(diffs):+.3f}"))
        for _, line in (sorted(lines, key=lambda x: -x[0]) if sort else lines):
            print(line)


def summary(pattern: str) -> None:
    """Per capture: chunks, mean tokens, and MRR@10 / recall@1 / ctxTok@5 of each side."""
    rules = (("emb", r_dense), ("bm25", r_sparse), ("max.3", r_score("max", 0.3)))
    for cap in load_captures(pattern):
        qs, chunks = cap["questions"], cap["chunks"]
        avg = sum(c[3] for c in chunks.values()) / max(len(chunks), 1)
        cells = []
        for name, rule in rules:
            ranked = [rule(q["dense"], q["sparse"]) for q in qs]
            m = metrics([first_rank(r, q["hits"]) for r, q in zip(ranked, qs)])
            ctx = sum(sum(chunks[c][3] for c in r[:5] if c in chunks) for r in ranked) / len(qs)
            cells.append(f"{name} {sum(m['mrr']) / len(qs):.3f} {sum(m['r1']) / len(qs):.2f} {ctx:5.0f}")
        print(f"{cap['set']:9} {cap['strategy'][:26]:26} {cap['embedder'][:3]} {len(chunks):5d} {avg:5.0f}  " + " | ".join(cells))


def grid(rules: dict, captures: list[dict], large: int = 300, top: int = 20) -> list[tuple]:
    """Score each rule on every capture against that capture's better single side (per
    metric): the worst mean difference anywhere, the worst lower bound on large sets
    (>= `large` questions), the worst lower bound anywhere, and the mean difference."""
    base = {}
    ranks = {}
    for cap in captures:
        key = f"{cap['set']}/{cap['strategy']}/{cap['embedder']}"
        qs = cap["questions"]
        d = metrics([first_rank(r_dense(q["dense"], q["sparse"]), q["hits"]) for q in qs])
        b = metrics([first_rank(r_sparse(q["dense"], q["sparse"]), q["hits"]) for q in qs])
        base[key] = {m: (d[m] if sum(d[m]) > sum(b[m]) else b[m]) for m in ("mrr", "r1")}
        ranks[key] = cap
    out = []
    for name, rule in rules.items():
        worst_mean, worst_lo_large, worst_lo, diffs = 9.0, 9.0, 9.0, []
        for key, cap in ranks.items():
            qs = cap["questions"]
            m = metrics([first_rank(rule(q["dense"], q["sparse"], q) if getattr(rule, "wants_q", False)
                                    else rule(q["dense"], q["sparse"]), q["hits"]) for q in qs])
            for metric in ("mrr", "r1"):
                mean, lo, _ = paired_ci(m[metric], base[key][metric], samples=400)
                worst_mean = min(worst_mean, mean)
                worst_lo = min(worst_lo, lo)
                if len(qs) >= large:
                    worst_lo_large = min(worst_lo_large, lo)
                diffs.append(mean)
        out.append((worst_mean, worst_lo_large, worst_lo, sum(diffs) / len(diffs), name))
    out.sort(key=lambda r: (-min(r[0], 0) * 0 - r[0] - r[1], -r[3]))
    out.sort(key=lambda r: (-(r[0] >= -0.002), -r[1], -r[3]))
    print(f"{'rule':34} worst-mean worst-lo(large) worst-lo  mean  ({len(ranks)} collections, mrr and r1)")
    for row in out[:top]:
        print(f"{row[4]:34} {row[0]:+.3f}      {row[1]:+.3f}          {row[2]:+.3f}  {row[3]:+.4f}")
    return out
