"""Choosing defaults by measurement: embedders × BM25 analyzers × fusion, on the bundled
Turkish and English question sets (and the code set as a third opinion).

    python -m bench.labs.defaults            # ~5 minutes on 2 cores (e5 is the slow part)
    python -m bench.labs.defaults --json F   # every number, for diffing

Everything goes through the real pipeline: `indexer.build` into a fresh database (so
build times are cold, nothing comes from the embedding cache), `indexer.evaluate` on the
stored collections. Analyzer variants are built as extra collections over the same
chunks (their vectors come from the cache: only BM25 differs).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import CORPUS, machine, save_json, table
from indexer.evaluation.run import evaluate
from indexer.indexing.building import build
from indexer.indexing.options import BuildOptions
from indexer.retrieval.index import SearchOptions
from indexer.settings import Settings

SETS = {
    "tr": (CORPUS, CORPUS / "questions.jsonl", (1, 5)),
    "en": (CORPUS / "en", CORPUS / "en" / "questions.jsonl", (1, 5)),
    "code": (CORPUS / "code", CORPUS / "code" / "questions.jsonl", (1, 5)),
}
STRATEGIES = ("headers", "fixed128")
CODE_STRATEGIES = ("code", "fixed128")
EMBEDDERS = ("use-m3", "e5-small")
ANALYZERS = {  # name -> build() keyword arguments
    "nofold-nostem": {"fold": False, "stem": 0, "stopwords": False},
    "fold-nostem": {"fold": True, "stem": 0, "stopwords": False},
    "fold-stem4": {"fold": True, "stem": 4, "stopwords": False},
    "fold-stem5": {"fold": True, "stem": 5, "stopwords": False},
    "fold-stem6": {"fold": True, "stem": 6, "stopwords": False},
    "fold-nostem-stop": {"fold": True, "stem": 0, "stopwords": True},
    "fold-stem4-stop": {"fold": True, "stem": 4, "stopwords": True},
    "fold-stem5-stop": {"fold": True, "stem": 5, "stopwords": True},
    "nofold-stem4-stop": {"fold": False, "stem": 4, "stopwords": True},
}
FUSIONS = {  # name -> SearchOptions keyword arguments
    "rrf k=60 1:1": {"fusion": "rrf", "rrf_k": 60, "weights": (1.0, 1.0)},
    "rrf k=60 1:2 (bm25 x2)": {"fusion": "rrf", "rrf_k": 60, "weights": (1.0, 2.0)},
    "rrf k=60 2:1 (embedding x2)": {"fusion": "rrf", "rrf_k": 60, "weights": (2.0, 1.0)},
    "weighted a=0.3": {"fusion": "weighted", "alpha": 0.3},
    "weighted a=0.5": {"fusion": "weighted", "alpha": 0.5},
    "weighted a=0.7": {"fusion": "weighted", "alpha": 0.7},
    "rrf k=10 1:1 (default)": {"fusion": "rrf", "rrf_k": 10},
    "rrf k=10 2:1 (embedding x2)": {"fusion": "rrf", "rrf_k": 10, "weights": (2.0, 1.0)},
}


def row_numbers(row, n):
    return {"recall@1": row.recall(1), "recall@5": row.recall(5), "mrr": round(row.mrr, 4),
            "ctx": round(row.ctx_tokens), "n": n}


def fmt(v, n):
    return f"{v['recall@1']}/{n}", f"{v['recall@5']}/{n}", f"{v['mrr']:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--sets", default="tr,en,code")
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    args = parser.parse_args()
    sets = args.sets.split(",")
    embedders = args.embedders.split(",")
    work = Path(tempfile.mkdtemp(prefix="indexer-defaults-"))
    results: dict = {"date": time.strftime("%Y-%m-%d"), "machine": machine(), "sets": {}}
    print(f"choosing defaults, {results['date']}, {results['machine']}\n", flush=True)
    try:
        for name in sets:
            folder, questions, ks = SETS[name]
            strategies = CODE_STRATEGIES if name == "code" else STRATEGIES
            db = work / f"db-{name}"
            out = results["sets"][name] = {"embedders": {}, "analyzers": {}, "fusion": {}}
            # 1. embedders: cold builds, then every mode
            for emb in embedders:
                t0 = time.perf_counter()
                reports = build([folder], list(strategies), settings=Settings.load(db=db, embedder=emb))
                seconds = time.perf_counter() - t0
                chunks = sum(r.chunks for r in reports)
                ev = evaluate(questions, list(strategies), ("embedding", "bm25", "hybrid"), ks, built_with=(emb,),
                              settings=Settings.load(db=db))
                n = len(ev.questions)
                for row in ev.rows:
                    out["embedders"][f"{emb}|{row.strategy}|{row.mode}"] = {
                        **row_numbers(row, n), "build_s": round(seconds, 1), "chunks": chunks,
                        "passages_per_s": round(chunks / max(seconds, 1e-9), 1)}
            # 2. BM25 analyzers (embeddings come from the cache; only BM25 changes)
            lang = "tr" if name == "tr" else "en"
            for variant, kwargs in ANALYZERS.items():
                names = []
                for strategy in strategies:
                    build([folder], [strategy], BuildOptions(name=f"{strategy}-{variant}", lang=lang, **kwargs),
                          settings=Settings.load(db=db, embedder=embedders[0]))
                    names.append(f"{strategy}-{variant}")
                ev = evaluate(questions, names, ("bm25",), ks, built_with=(embedders[0],), settings=Settings.load(db=db))
                n = len(ev.questions)
                for row in ev.rows:
                    out["analyzers"][f"{variant}|{row.strategy.rsplit('-' + variant, 1)[0]}"] = row_numbers(row, n)
            # 3. fusion, per embedder, on the default analyzer's collections
            for emb in embedders:
                for fusion, kwargs in FUSIONS.items():
                    ev = evaluate(questions, list(strategies), ("hybrid",), ks, built_with=(emb,),
                                  options=SearchOptions(**kwargs), settings=Settings.load(db=db))
                    n = len(ev.questions)
                    for row in ev.rows:
                        out["fusion"][f"{emb}|{fusion}|{row.strategy}"] = row_numbers(row, n)
            report(name, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    save_json(args.json, results)


def report(name: str, out: dict) -> None:
    rows = []
    for key, v in out["embedders"].items():
        emb, strategy, mode = key.split("|")
        rows.append([emb, strategy, mode, *fmt(v, v["n"]), v["ctx"], v["build_s"], v["passages_per_s"]])
    print(f"### {name}: embedders × modes (cold build of both strategies)\n")
    print(table(["embedder", "strategy", "mode", "recall@1", "recall@5", "MRR", "ctxTok@5", "build s",
                 "chunks/s"], rows) + "\n", flush=True)
    rows = []
    for key, v in out["analyzers"].items():
        variant, strategy = key.split("|")
        rows.append([variant, strategy, *fmt(v, v["n"])])
    print(f"### {name}: BM25 analyzers (bm25 mode)\n")
    print(table(["analyzer", "strategy", "recall@1", "recall@5", "MRR"], rows) + "\n", flush=True)
    rows = []
    for key, v in out["fusion"].items():
        emb, fusion, strategy = key.split("|")
        rows.append([emb, fusion, strategy, *fmt(v, v["n"])])
    print(f"### {name}: fusion (hybrid mode)\n")
    print(table(["embedder", "fusion", "strategy", "recall@1", "recall@5", "MRR"], rows) + "\n", flush=True)


if __name__ == "__main__":
    main()
