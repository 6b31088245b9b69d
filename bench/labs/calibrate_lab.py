"""Calibrating the fusion per collection: which embedding share holds on each set × strategy
× embedder, and whether something the tool can know at build time predicts it.

    python -m bench.labs.calibrate_lab prepare             # every capture of bench/labs/default_lab.py
    python -m bench.labs.calibrate_lab grid                # per cell: the alpha ranges that hold
    python -m bench.labs.calibrate_lab rules               # candidate calibration rules, side by side
    python -m bench.labs.calibrate_lab fit --pattern "code--*use-m3;code-pypi--*use-m3" --his 0.2,0.3,0.4,0.5 --los 0.05,0.1

How `indexer.retrieval.fusion.FUSION_BY_KIND` was fitted (`fit`): over every cell of the
fitting sets of one (embedder, kind[, language]), each alpha range of the grid is scored by
its worst cell — the default's MRR@10 minus the better single side's — and the range whose
worst cell is best is kept (maximin: the goal is never to fall below the better side, not
the best mean). The grids searched: use-m3 code (code + code-pypi) --his 0.2,0.3,0.4,0.5
--los 0.05,0.1 -> 0.05-0.3; use-m3 Turkish prose (tr + xquad-tr) --his 0.5,0.6,0.7,0.8
--los 0.05,0.1 -> 0.05-0.5; e5-small code (code + code-pypi, after code line groups were
fixed and exact-match tiers limited to lookups) --his 0.6,0.7,0.8,0.9,1.0 --los
0.1,0.2,0.3,0.4,0.5,0.6 -> 0.4-0.7 (first fitted on code alone: 0.1-0.7, which failed
code-pypi); end to end (bench/public.py) code `fixed256` then fell 0.021 below BM25 (the
lab, which left out the definition lines a build records for windows of source files, had
not seen it; it now builds its exact index with `exact.defined_in` and agrees with the
end-to-end tables), and collections of long chunks (`fusion.LONG_CHUNKS`) got their own
range, 0.3-0.7; `rules --rules library` holds 24 of 24 e5 code cells; e5-small prose
(tr, en, xquad-tr, xquad-en, man-pages: 35 cells) --his 0.7,0.8,0.9 --los
0.2,0.3,0.4,0.5,0.6 -> 0.5-0.7 (worst cell -0.0015 MRR@10; the old 0.3-0.8 was -0.026 on
the man-pages, whose one-line questions BM25 covers with common words), scipy-docs held out. The highs
searched start where the embedding still has a say (a lower ceiling is BM25 with a
tie-breaker). code-lib2 is held out from the fits, though its end-to-end table was seen
while the size class was chosen.

`prepare` turns each capture (bench/labs/default_lab.py: the embedding side through the real
pipeline, BM25 rebuilt with the collection's analyzer, the exact-match tiers from the
library) into compact per-query rows — both sides' candidates, BM25 coverage, tiers and
which candidates hit — for the set's questions and for questions made from the collection
itself (bench/.cache/lab/synthetic, when captured). The rest is offline re-ranking with
`indexer.retrieval.fusion`, as `Index.search` ranks.
"""

from __future__ import annotations

import argparse
import gzip
import pickle
from pathlib import Path

from bench.labs.default_lab import CAPTURES, DEPTH, LAB

PREPARED = LAB / "prepared"


def prepare(path: Path, force: bool = False) -> Path:
    from bench.labs.default_lab import Collection, Query
    from bench.public_sets import materialize
    from indexer.evaluation.run import load_questions, resolve
    from indexer.loaders import load_documents

    out = PREPARED / path.name.replace(".json.gz", ".pkl.gz")
    if out.exists() and not force and out.stat().st_mtime > path.stat().st_mtime:
        return out
    col = Collection(path)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        import json

        syn_dense = json.load(fh).get("dense_syn") or {}
    syn_path = LAB / "synthetic" / f"{col.set}.jsonl"
    syn = []
    if syn_dense and syn_path.exists():
        folder, _ = materialize(col.set)
        questions = [q for q in load_questions(syn_path) if q.id in syn_dense]
        _, docs = load_documents([folder])
        resolve(questions, {d.doc_id: d for d in docs})
        syn = [Query(q.id, q.question, q, [tuple(x) for x in syn_dense[q.id]]) for q in questions]
        real, col.queries = col.queries, syn
        col.prepare()
        col.queries = real

    def rows(queries):
        out = []
        for q in queries:
            cands = {c for c, _ in q.dense} | {c for c, _ in q.sparse} | set(q.extra)
            hit = {c for c in cands if c in col.chunks and _hits(col, q, c)}
            out.append({"id": q.id, "dense": q.dense[:DEPTH], "sparse": q.sparse, "coverage": q.coverage,
                        "extra": q.extra, "tier": q.tier, "hit": hit, "tags": list(q.question.tags)})
        return out

    data = {"set": col.set, "strategy": col.strategy, "embedder": col.embedder, "avg_tokens": col.avg_tokens,
            "n_chunks": len(col.chunks), "code_share": _code_share(col),
            "chunks": {c: (v[0], v[1], v[4]) for c, v in col.chunks.items()}, "parents": bool(col.parents),
            "real": rows(col.queries), "syn": rows(syn)}
    PREPARED.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wb") as fh:
        pickle.dump(data, fh)
    print(f"prepared {col.key}: {len(data['real'])} + {len(data['syn'])} questions", flush=True)
    return out


def _hits(col, q, cid) -> bool:
    c = col.chunks[cid]
    if col.parents:
        p = col.parents.get(c[4]) if c[4] else None
        return bool(p) and q.question.hits(p[0], p[1], p[2])
    return q.question.hits(c[0], c[1], c[2])


CODE_EXT = (".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".h", ".cpp", ".cs", ".php", ".kt", ".swift",
            ".scala", ".sql", ".sh", ".mjs", ".cjs", ".tsx", ".jsx")


def _code_share(col) -> float:
    docs = [c[0] for c in col.chunks.values()]
    return sum(1 for d in docs if d.lower().endswith(CODE_EXT)) / max(len(docs), 1)


# -- offline ----------------------------------------------------------------------------
def load(pattern: str = "*") -> list[dict]:
    out = []
    for p in sorted(PREPARED.glob(f"{pattern}.pkl.gz")):
        with gzip.open(p, "rb") as fh:
            out.append(pickle.load(fh))
    return out


def rank(col: dict, q: dict, alpha: float | None, exact: bool = True) -> int | None:
    """Rank (1..10) of the first hit under a fusion with embedding share `alpha` (None:
    BM25 alone, 'emb': the embedding alone)."""
    from indexer.retrieval.fusion import weighted

    if alpha == "emb":
        scores, tier = dict(q["dense"]), {}
    elif alpha is None:
        scores, tier = dict(q["sparse"]), q["tier"] if exact else {}
    else:
        scores, tier = dict(weighted(dict(q["dense"]), dict(q["sparse"]), alpha)), q["tier"] if exact else {}
    if tier:
        for cid in q["extra"]:
            scores.setdefault(cid, 0.0)
    chunks = col["chunks"]

    def key(c):
        doc, start = chunks[c][:2] if c in chunks else ("", 0)
        return (-tier.get(c, 0), -round(scores[c], 9), doc, start, c)

    seen, n = set(), 0
    for c in sorted(scores, key=key):
        unit = chunks[c][2] if col["parents"] and c in chunks else c
        if unit in seen or (col["parents"] and not unit):
            continue
        seen.add(unit)
        n += 1
        if n > 10:
            return None
        if c in q["hit"]:
            return n
    return None


def score(col: dict, which: str, alpha_of) -> tuple[float, int, list]:
    rs = [rank(col, q, alpha_of(q)) for q in col[which]]
    return sum(1 / r for r in rs if r) / max(len(rs), 1), sum(1 for r in rs if r == 1), rs


def sides(col: dict, which: str = "real") -> dict:
    return {"emb": score(col, which, lambda q: "emb"), "bm25": score(col, which, lambda q: None)}


def adaptive(rng, cov):
    from indexer.retrieval.fusion import adaptive_alpha

    return lambda q: adaptive_alpha(q["coverage"], rng, cov)


def holds(d_mrr, d_r1) -> bool:
    return d_mrr >= -0.01 - 1e-9 and d_r1 >= -1


GRID = [(lo, hi) for hi in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) for lo in (0.0, 0.05, 0.1, 0.2, 0.3) if lo <= hi]


def cell_grid(col: dict, which: str = "real") -> dict:
    from indexer.retrieval.fusion import adaptive_defaults

    _, cov = adaptive_defaults(col["embedder"])
    s = sides(col, which)
    better = max(s.values(), key=lambda v: v[0])
    out = {}
    for lo, hi in GRID:
        m, r1, _ = score(col, which, adaptive((lo, hi), cov))
        out[(lo, hi)] = (m, r1, holds(m - better[0], r1 - max(v[1] for v in s.values())))
    return {"sides": s, "grid": out}


def syn_best(col: dict, his=None, los=None) -> tuple[float, float]:
    """The alpha range that ranks the collection's own made-up questions best (ties: the
    smaller embedding share)."""
    from indexer.retrieval.fusion import adaptive_defaults

    (lo0, hi0), cov = adaptive_defaults(col["embedder"])
    best, key = None, None
    for lo, hi in GRID:
        if (his and hi not in his) or (los and lo not in los):
            continue
        m, r1, _ = score(col, "syn", adaptive((lo, hi), cov))
        k = (round(m, 3), -hi, -lo)
        if key is None or k > key:
            best, key = (lo, hi), k
    return best


def by_kind(table: dict):
    """A rule from a table (embedder, kind) -> alpha range; kind as `fusion.calibrated` sees it."""
    from indexer.retrieval.fusion import CODE_SHARE, size_of

    def rule(col):
        kind = "code" if col["code_share"] >= CODE_SHARE else "prose"
        lang = "tr" if col["set"] in ("tr", "xquad-tr") else "en"
        got = (table.get((col["embedder"], kind, lang)) or table.get((col["embedder"], kind, size_of(col["avg_tokens"])))
               or table.get((col["embedder"], kind)))
        return got[0] if got and isinstance(got[0], tuple) else got  # FUSION_BY_KIND: (alpha, coverage)

    return rule


RULES = {
    "default": lambda col: None,
    "syn-grid": lambda col: syn_best(col),
    "code.1-.4": by_kind({("use-m3", "code"): (0.1, 0.4)}),
    "code.05-.4,prose.05-.8": by_kind({("use-m3", "code"): (0.05, 0.4), ("use-m3", "prose"): (0.05, 0.8)}),
    "code.1-.4,prose0-.8": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose"): (0.0, 0.8)}),
    "library": by_kind(__import__("indexer.retrieval.fusion", fromlist=["x"]).FUSION_BY_KIND),
    "tr.05-.7": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose", "tr"): (0.05, 0.7)}),
    "tr.1-.6": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose", "tr"): (0.1, 0.6)}),
    "tr.05-.6": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose", "tr"): (0.05, 0.6)}),
    "prose.1-.7": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose"): (0.1, 0.7)}),
    "prose.1-.6": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose"): (0.1, 0.6)}),
    "prose.05-.6": by_kind({("use-m3", "code"): (0.1, 0.4), ("use-m3", "prose"): (0.05, 0.6)}),
}


def rules(cols: list[dict], names: list[str]) -> None:
    from indexer.retrieval.fusion import adaptive_defaults

    held = {n: 0 for n in names}
    for col in cols:
        s = sides(col)
        bm, br1 = max(v[0] for v in s.values()), max(v[1] for v in s.values())
        _, cov = adaptive_defaults(col["embedder"])
        out = []
        for n in names:
            rng = RULES[n](col) or adaptive_defaults(col["embedder"])[0]
            m, r1, _ = score(col, "real", adaptive(rng, cov))
            ok = holds(m - bm, r1 - br1)
            held[n] += ok
            out.append(f"{n} {rng[0]:g}-{rng[1]:g} {m:.3f} {r1 - br1:+d} {'ok' if ok else 'NO'}")
        print(f"{col['set']}/{col['strategy']}/{col['embedder']:9} emb {s['emb'][0]:.3f} bm25 {s['bm25'][0]:.3f} | "
              + " | ".join(out), flush=True)
    print("held:", held, "of", len(cols))


def fit(cols: list[dict]) -> None:
    """Per alpha range: its worst cell (MRR@10 and recall@1 against the better side), its
    mean MRR@10, the cells it fails; the maximin range last."""
    worst = {g: [9.0, 9, 0.0, []] for g in GRID}
    for col in cols:
        g = cell_grid(col)
        s = g["sides"]
        bm, br = max(v[0] for v in s.values()), max(v[1] for v in s.values())
        for k, (m, r1, ok) in g["grid"].items():
            w = worst[k]
            w[0], w[1], w[2] = min(w[0], m - bm), min(w[1], r1 - br), w[2] + m / len(cols)
            if not ok:
                w[3].append(f"{col['set']}/{col['strategy']}")
    for (lo, hi), (dm, dr, mean, fails) in worst.items():
        print(f"{lo:g}-{hi:g}  worst MRR@10 {dm:+.4f}  worst recall@1 {dr:+d}  mean MRR@10 {mean:.4f}  fails {fails}")
    best = max(worst, key=lambda k: (round(worst[k][0], 4), worst[k][2]))
    print(f"maximin over {len(cols)} cells: {best[0]:g}-{best[1]:g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cmd", choices=("prepare", "grid", "rules", "fit"))
    parser.add_argument("--pattern", default="*")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--his", default="", help="fit: the ceilings searched (default: the whole grid)")
    parser.add_argument("--los", default="", help="fit: the floors searched")
    parser.add_argument("--rules", default="", help="rule names to compare (default: all)")
    args = parser.parse_args()
    if args.cmd == "prepare":
        for p in sorted(CAPTURES.glob(f"{args.pattern}.json.gz")):
            prepare(p, args.force)
        return
    from indexer.retrieval.fusion import adaptive_defaults

    if args.cmd == "fit":
        global GRID
        his = [float(x) for x in args.his.split(",") if x] or sorted({hi for _, hi in GRID})
        los = [float(x) for x in args.los.split(",") if x] or sorted({lo for lo, _ in GRID})
        GRID = [(lo, hi) for hi in his for lo in los if lo <= hi]
        return fit(sum((load(p) for p in args.pattern.split(";")), []))
    if args.cmd == "rules":
        return rules(load(args.pattern), [r for r in args.rules.split(";") if r] or list(RULES))
    for col in load(args.pattern):
        g = cell_grid(col)
        sy = cell_grid(col, "syn") if col["syn"] else None
        rng, _ = adaptive_defaults(col["embedder"])
        s = g["sides"]
        ok = [k for k, v in g["grid"].items() if v[2]]
        best_syn = max(sy["grid"], key=lambda k: (sy["grid"][k][0], -k[1])) if sy else None
        print(f"{col['set']}/{col['strategy']}/{col['embedder']:8} tok {col['avg_tokens']:5.0f} code {col['code_share']:.2f} "
              f"emb {s['emb'][0]:.3f} bm25 {s['bm25'][0]:.3f} dflt {g['grid'].get(rng, (0, 0, '?'))[:3]} "
              f"| syn emb {sy['sides']['emb'][0] if sy else 0:.3f} bm25 {sy['sides']['bm25'][0] if sy else 0:.3f} "
              f"best {best_syn} holds@best {g['grid'][best_syn][2] if best_syn else '-'} "
              f"| hold: {' '.join(f'{lo}-{hi}' for lo, hi in ok)}", flush=True)


if __name__ == "__main__":
    main()
