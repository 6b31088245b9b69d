"""What restoring Turkish letters in a query does to search (the real question behind
bench/deasciify.py's comparison of deasciifiers).

On the bundled Turkish questions (tr) and XQuAD-tr, strategy auto, both embedders, modes
embedding / bm25 / hybrid, k=10: (a) the spelled question, (b) its ASCII fold, (c)
indexer.text.deasciify of the fold, (d) the mean of the (b) and (c) query vectors. MRR@10,
recall@1/5, and how often the top 1 is the spelled question's top 1.

Usage (needs the fusion_lab.py stores in bench/.cache/lab):
  python -m bench.labs.deasciify_retrieval [--sets tr,xquad-tr] [--embedders use-m3,e5-small] [--json out.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.common import CACHE, ROOT, TYPED_ASCII, fold, parse_args, save_json, xquad_option
from indexer.settings import Settings

LAB = CACHE / "lab"
VARIANTS = {
    "a": "spelled (Turkish letters)",
    "b": "ASCII-folded",
    "c": "deasciify(folded)",
    "d": "mean of folded + deasciified vectors",
}


class _QueryVectors:
    """Stands in for embedder.embed_query: caches vectors by text (a, b and c often coincide),
    and returns `override[text]` when set, which is how variant d reaches Index.search."""

    def __init__(self, embed_query):
        self.embed_query = embed_query
        self.cache: dict[str, object] = {}
        self.override: dict[str, object] = {}
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, text: str):
        if text in self.override:
            return self.override[text]
        if text not in self.cache:
            t = time.perf_counter()
            self.cache[text] = self.embed_query(text)
            self.seconds += time.perf_counter() - t
            self.calls += 1
        return self.cache[text]


def _retrieval_questions(set_name: str):
    """(questions with resolved targets, spelled forms): the 11 corpus questions typed without
    Turkish letters get their hand-written spelling (TYPED_ASCII) as the spelled form."""
    from indexer.evaluation.run import load_questions, resolve
    from indexer.loaders import load_documents
    if set_name == "tr":
        folder, qpath = ROOT / "corpus", ROOT / "corpus" / "questions.jsonl"
    else:
        from bench.public_sets import materialize
        folder, qpath = materialize(set_name)
    questions = load_questions(qpath)
    resolve(questions, {d.doc_id: d for d in load_documents([folder])[1]})
    spelled = [TYPED_ASCII.get(q.question, q.question).strip() for q in questions]
    return questions, spelled


def retrieval(args) -> dict:
    import numpy as np

    from indexer.retrieval.index import Index
    from indexer.text.deasciify import deasciify

    lab = Path(args.lab) if args.lab else LAB
    out: dict = {}
    for set_name in args.sets.split(","):
        questions, spelled = _retrieval_questions(set_name)
        folded = [fold(q) for q in spelled]
        restored = [deasciify(q) for q in folded]
        exact = [c == a for a, c in zip(spelled, restored)]
        t = time.perf_counter()
        for q in folded:
            deasciify(q)
        ms = (time.perf_counter() - t) * 1000 / len(folded)
        out[set_name] = {"questions": len(questions), "restored_exactly": sum(exact),
                         "changed_by_folding": sum(a != b for a, b in zip(spelled, folded)),
                         "deasciify_ms": ms, "runs": {}}
        print(f"## {set_name}: {len(questions)} questions; folding changes "
              f"{out[set_name]['changed_by_folding']}, deasciify restores {sum(exact)} exactly "
              f"({ms:.2f} ms/question)\n", flush=True)
        bm25_done = None
        for emb in args.embedders.split(","):
            ix = Index.open("auto", built_with=emb, settings=Settings.load(db=lab / f"db-{set_name}"))
            qv = _QueryVectors(ix.embedder.embed_query)
            ix.embedder.embed_query = qv
            for mode in ("embedding", "bm25", "hybrid"):
                if mode == "bm25" and bm25_done is not None:  # BM25 does not depend on the embedder
                    out[set_name]["runs"][(emb, mode)] = bm25_done
                    continue
                runs: dict[str, dict] = {}
                t0 = time.perf_counter()
                for v in ("a", "b", "c", "d"):
                    if v == "d" and mode == "bm25":
                        continue
                    ranks, top1 = [], []
                    for i, q in enumerate(questions):
                        text = {"a": spelled, "b": folded, "c": restored, "d": folded}[v][i]
                        if v == "d":
                            if restored[i] != folded[i]:
                                mean = qv(folded[i]) + qv(restored[i])
                                qv.override = {text: (mean / np.linalg.norm(mean)).astype(np.float32)}
                            else:
                                qv.override = {}
                        hits = ix.search(text, mode=mode, k=10)
                        qv.override = {}
                        rank = next((h.rank for h in hits if h.chunk.doc_id == q.doc_id
                                     and h.chunk.start < q.target[1] and q.target[0] < h.chunk.end), None)
                        ranks.append(rank)
                        top1.append(hits[0].chunk.id if hits else None)
                    runs[v] = {"ranks": ranks, "top1": top1}
                n = len(questions)
                for v, r in runs.items():
                    same = [x == y for x, y in zip(r["top1"], runs["a"]["top1"])]
                    r["mrr10"] = sum(1 / k for k in r["ranks"] if k) / n
                    r["r1"] = sum(k == 1 for k in r["ranks"] if k) / n
                    r["r5"] = sum(k <= 5 for k in r["ranks"] if k) / n
                    r["same_top1"] = sum(same)
                    r["same_top1_not_exact"] = sum(s for s, e in zip(same, exact) if not e)
                out[set_name]["runs"][(emb, mode)] = runs
                if mode == "bm25":
                    bm25_done = runs
                print(f"ran {set_name} {emb} {mode} in {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
            out[set_name][f"embed_ms_{emb}"] = 1000 * qv.seconds / max(1, qv.calls)
        _print_retrieval(set_name, out[set_name])
    return out


def _print_retrieval(set_name: str, res: dict) -> None:
    n, exact = res["questions"], res["restored_exactly"]
    print(f"| embedder | mode | variant | MRR@10 | recall@1 | recall@5 | same top-1 as (a) "
          f"| same top-1, the {n - exact} not restored exactly |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for (emb, mode), runs in res["runs"].items():
        if mode == "bm25" and emb != next(iter(res["runs"]))[0]:
            continue
        for v, r in runs.items():
            print(f"| {emb if mode != 'bm25' else '(any)'} | {mode} | ({v}) {VARIANTS[v]} | {r['mrr10']:.3f} | "
                  f"{r['r1']:.3f} | {r['r5']:.3f} | {r['same_top1']}/{n} ({100 * r['same_top1'] / n:.1f}%) | "
                  f"{r['same_top1_not_exact']}/{n - exact} |")
    print()
    print("query embedding, ms: " + ", ".join(f"{k[9:]} {v:.1f}" for k, v in res.items() if k.startswith("embed_ms_")))
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="tr,xquad-tr", help="question sets (default: tr,xquad-tr)")
    ap.add_argument("--embedders", default="use-m3,e5-small", help="default: use-m3,e5-small")
    ap.add_argument("--lab", help="folder of the db-<set> stores fusion_lab.py built (default: bench/.cache/lab)")
    ap.add_argument("--json", metavar="PATH", help="write all results as JSON")
    xquad_option(ap, "folder with xquad.tr.json (for the xquad-tr set)")
    args = parse_args(ap)
    print(f"# Deasciifying queries before search — {time.strftime('%Y-%m-%d')}, strategy auto, k=10\n")
    print("variants: " + "; ".join(f"({k}) {v}" for k, v in VARIANTS.items())
          + ". (d) searches with the mean of the two normalised query vectors (BM25 gets the folded text); "
          "it equals (b) when deasciify leaves the query alone. 'same top-1': the first hit is the chunk "
          "the spelled question (a) ranks first in the same mode.\n", flush=True)
    res = retrieval(args)
    for r in res.values():
        r["runs"] = {f"{e}/{m}": v for (e, m), v in r["runs"].items()}
    save_json(args.json, res)


if __name__ == "__main__":
    main()
