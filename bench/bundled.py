"""The tables of the bundled sets (docs/results.md): every preset on the Turkish corpus,
and code vs fixed128 on the code sample, through the real pipeline.

    python -m bench.bundled              # ~3 minutes on 2 cores (semantic and parent embed sentences)
    python -m bench.bundled --sets code
    python -m bench.bundled --smoke      # two documents, two strategies a set (numbers mean nothing)

Builds into a temporary folder (so numbers are cold and never come from another run's
index), evaluates with `indexer.evaluate`, prints Markdown tables.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from bench.common import CORPUS, SMOKE_CODE, machine, smoke_corpus, smoke_option, table
from indexer.evaluation import evaluate
from indexer.indexing.building import build
from indexer.settings import Settings

TURKISH = ["headers", "fixed64", "fixed128", "fixed128o", "fixed256", "blocks", "semantic", "semantic75", "parent",
           "parent1", "contextual:llm=extractive"]
LABELS = {"semantic": "semantic (25% of each document)", "semantic75": "semantic75 (0.75)",
          "parent": "parent (2 sentences)", "parent1": "parent1 (1 sentence)",
          "contextual-llm-extractive": "contextual (extractive)"}


def rows_of(ev, modes=("embedding", "bm25", "hybrid"), tags=()) -> list[list]:
    n = len(ev.questions)
    index = {q.id: i for i, q in enumerate(ev.questions)}
    out = []
    for r in ev.rows:
        if r.mode not in modes:
            continue
        row = [LABELS.get(r.strategy, r.strategy), "default" if r.mode == "hybrid" else r.mode, r.chunks,
               f"{r.avg_tokens:.0f}", *(f"{r.recall(k)}/{n}" for k in ev.ks), f"{r.mrr:.3f}",
               *(f"{r.recall(k, strict=True)}/{n}" for k in ev.ks), f"{r.ctx_tokens:.0f}"]
        for tag in tags:
            qs = [q for q in ev.questions if tag in q.tags]
            ranks = [r.results[index[q.id]].first_hit for q in qs]
            row.append(f"{sum(1 / x for x in ranks if x and x <= 10) / len(qs):.2f}")
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="tr,code")
    smoke_option(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="indexer-bundled-"))
    turkish, code = CORPUS, CORPUS / "code"
    strategies = TURKISH
    if args.smoke:
        turkish, code = smoke_corpus(work / "smoke-tr"), smoke_corpus(work / "smoke-code", code, SMOKE_CODE)
        strategies = ["headers", "contextual:llm=extractive"]
    print(f"bundled sets; {machine()}\n")
    try:
        if "tr" in args.sets:
            build([turkish], strategies, settings=Settings.load(db=work / "tr"))
            # specs find their collections
            ev = evaluate(turkish / "questions.jsonl", strategies, ks=(1, 5), settings=Settings.load(db=work / "tr"))
            print(table(["strategy", "search", "chunks", "avgTok", "recall@1", "recall@5", "MRR@10", "strict@1",
                         "strict@5", "ctxTok@5"], rows_of(ev)) + "\n")
        if "code" in args.sets:
            build([code], ["code", "fixed128"], settings=Settings.load(db=work / "code"))
            ev = evaluate(code / "questions.jsonl", ["code", "fixed128"], ks=(1, 8), settings=Settings.load(db=work / "code"))
            print(table(["strategy", "search", "chunks", "avgTok", "recall@1", "recall@8", "MRR@10", "strict@1",
                         "strict@8", "ctxTok@5", "symbol MRR", "Turkish-question MRR"],
                        rows_of(ev, tags=("symbol", "tr"))) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
