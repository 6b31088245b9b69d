"""Answer-sized context against whole chunks and the peers' compressors, at equal budgets.

    python -m bench.context                                  # tr, en, xquad-tr, xquad-en
    python -m bench.context --sets tr,en --budgets 100,200,400,800 --peers
    python -m bench.context --smoke
    python -m bench.context --sets en,xquad-en --strategies auto --embedder use-m3 --json use.json
    python -m bench.context --paired bge.json,use.json      # the first run minus the second

Each set's collections are built as `indexer build` builds them: with no `--embedder`, the
model the rule picks for the folder (`bge-small-en` for English and code, `use-m3` for
Turkish); `--embedder NAME` builds and reads that one instead (its own index folder).

For every set, through the real pipeline (`indexer.build`, then the stored collections):
- `packed`: `indexer query --budget N` (the packer on `auto`'s default search), as it
  stops by itself and with `fill` (the whole budget used);
- whole chunks of every strategy cut at the budget (the baseline), and the best of them
  at any budget up to 2,000 tokens (what a packer at 400 must match);
- with `--peers`: LlamaIndex's SentenceEmbeddingOptimizer and LangChain's
  EmbeddingsFilter on the same 20 candidates with the same embedder (bench/context_peers.py).
Each row: questions whose whole answer is inside (strict), token recall, precision and
IoU against the answer spans, tokens used, with 95% bootstrap intervals over questions.
"""

from __future__ import annotations

import argparse
import time

from bench.common import CACHE, machine, parse_args, save_json, smoke_option, table, xquad_option
from bench.public_sets import materialize

SETS = ("tr", "en", "xquad-tr", "xquad-en")
STRATEGIES = ("auto", "fixed64", "fixed128", "fixed256", "headers", "semantic", "parent")
BUDGETS = (100, 200, 400, 800)
BASELINE_BUDGETS = (100, 200, 400, 800, 1200, 2000)


def interval(values: list[float]) -> tuple[float, float]:
    from indexer.evaluation.metrics import bootstrap_interval

    return bootstrap_interval(values)


def row(label: str, budget: int, scores: list) -> dict:
    strict = [1.0 if s.strict else 0.0 for s in scores]
    iou = [s.iou for s in scores]
    n = len(scores)
    return {"method": label, "budget": budget, "questions": n, "strict": int(sum(strict)),
            "strict_ci": interval(strict), "recall": sum(s.recall for s in scores) / n,
            "precision": sum(s.precision for s in scores) / n, "iou": sum(iou) / n, "iou_ci": interval(iou),
            "tokens": sum(s.tokens for s in scores) / n, "strict_each": strict, "iou_each": iou}


def measure(name: str, strategies: tuple[str, ...], budgets: tuple[int, ...], with_peers: bool,
            embedder: str | None = None) -> list[dict]:
    from indexer.evaluation.context_eval import score_context, whole_chunks
    from indexer.evaluation.scoring import TokenSpans
    from indexer.evaluation.sets import load_questions, resolve
    from indexer.indexing.building import build
    from indexer.loaders import load_documents
    from indexer.retrieval import Index, SearchOptions
    from indexer.retrieval.context.answer import CANDIDATES, answer_context
    from indexer.settings import Settings
    from indexer.text.tokens import get_tokenizer

    folder, questions_path = materialize(name)
    db = CACHE / "lab" / (f"ctx-{name}-{embedder}" if embedder else f"ctx-{name}")
    settings = Settings.load(db=db, embedder=embedder)
    build([folder], list(strategies), settings=settings)
    docs = {d.doc_id: d for d in load_documents([folder])[1]}
    questions = load_questions(questions_path)
    resolve(questions, docs)
    questions = [q for q in questions if q.answer_spans]
    tokenizer = get_tokenizer()
    counter = TokenSpans(docs)
    answers = {q.id: [(q.doc_id, s, e) for s, e in q.answer_spans] for q in questions}
    rows: list[dict] = []

    auto = Index.open("auto", settings=settings)
    print(f"{name}: {auto.entry.embedder}", flush=True)
    for budget in budgets:
        for label, mass in (("packed", None), ("packed, fill", 1.0)):
            scores, took = [], []
            for q in questions:
                t0 = time.perf_counter()
                ctx = answer_context(auto.snapshot(), q.question, budget, **({"mass": mass} if mass else {}))
                took.append(time.perf_counter() - t0)
                scores.append(score_context(answers[q.id], [(s.doc_id, s.start, s.end) for s in ctx.spans],
                                            ctx.tokens, counter))
            rows.append({**row(label, budget, scores), "set": name, "ms_p50": 1000 * sorted(took)[len(took) // 2]})
    for strategy in strategies:
        index = Index.open(strategy, settings=settings)
        hits = {q.id: index.search(q.question, SearchOptions(k=40)) for q in questions}
        for budget in sorted(set(budgets) | set(BASELINE_BUDGETS)):
            scores = []
            for q in questions:
                places, used = whole_chunks(hits[q.id], budget, tokenizer)
                scores.append(score_context(answers[q.id], places, used, counter))
            rows.append({**row(f"whole {strategy}", budget, scores), "set": name})
    if with_peers:
        from bench.context_peers import Memo, cut, peers

        candidates = {q.id: auto.search(q.question, SearchOptions(k=CANDIDATES)) for q in questions}
        for peer in peers(Memo(auto.embedder)):
            pieces = {q.id: peer.pieces(q.question, candidates[q.id]) for q in questions}  # once, cut per budget
            for budget in budgets:
                scores = []
                for q in questions:
                    places, used = cut(pieces[q.id], budget, tokenizer)
                    scores.append(score_context(answers[q.id], places, used, counter))
                rows.append({**row(peer.label, budget, scores), "set": name})
    return rows


def verdicts(rows: list[dict]) -> list[list]:
    """The issue's bars per set: packed@400 strict against the best whole chunks at any
    budget up to 2,000; packed@200 within 5 points of it; IoU@400 at least 3x whole@400's."""
    out = []
    for name in dict.fromkeys(r["set"] for r in rows):
        mine = [r for r in rows if r["set"] == name]
        whole = [r for r in mine if r["method"].startswith("whole ")]
        best = max(whole, key=lambda r: r["strict"])
        best400 = max((r for r in whole if r["budget"] == 400), key=lambda r: r["iou"], default=None)
        p400 = next(r for r in mine if r["method"] == "packed" and r["budget"] == 400)
        p200 = next((r for r in mine if r["method"] == "packed" and r["budget"] == 200), None)
        n = p400["questions"]
        out.append([name, f"{p400['strict']}/{n}", f"{best['strict']}/{n} ({best['method'][6:]}@{best['budget']})",
                    f"{p200['strict']}/{n}" if p200 else "-",
                    f"{p400['iou']:.4f}", f"{best400['iou']:.4f} ({best400['method'][6:]})" if best400 else "-",
                    f"{p400['iou'] / best400['iou']:.1f}x" if best400 and best400["iou"] else "-"])
    return out


def paired(paths: str) -> str:
    """Two runs' `--json` rows side by side: strict and IoU of the first minus the second's,
    per set × method × budget, with paired 95% intervals over the same questions."""
    import json

    from indexer.evaluation.metrics import paired_difference

    first, second = ({(r["set"], r["method"], r["budget"]): r for r in json.load(open(p, encoding="utf-8"))}
                     for p in paths.split(","))
    rows = []
    for key, a in first.items():
        b = second.get(key)
        if b and "strict_each" in a and "strict_each" in b:
            ds, (slo, shi) = paired_difference(a["strict_each"], b["strict_each"])
            di, (ilo, ihi) = paired_difference(a["iou_each"], b["iou_each"])
            rows.append([*key, f"{a['strict']} vs {b['strict']}/{a['questions']}",
                         f"{ds * a['questions']:+.0f} [{slo * a['questions']:+.0f}, {shi * a['questions']:+.0f}]",
                         f"{a['iou']:.4f} vs {b['iou']:.4f}", f"{di:+.4f} [{ilo:+.4f}, {ihi:+.4f}]"])
    return table(["set", "method", "budget", "strict", "difference [95%]", "IoU", "difference [95%]"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--peers", action="store_true", help="LlamaIndex and LangChain (the bench extra)")
    parser.add_argument("--json", default=None, help="write every row to this file")
    parser.add_argument("--embedder", default=None, help="build and read with this model (default: the rule's)")
    parser.add_argument("--paired", default="", metavar="A.json,B.json", help="compare two runs' --json rows, A minus B")
    xquad_option(parser)
    smoke_option(parser)
    args = parse_args(parser)
    if args.paired:
        print(paired(args.paired))
        return
    sets = ("smoke",) if args.smoke else tuple(args.sets.split(","))
    strategies = ("auto", "fixed64") if args.smoke else tuple(args.strategies.split(","))
    budgets = (200,) if args.smoke else tuple(int(b) for b in args.budgets.split(","))
    print(f"# Answer-sized context, {machine()}\n")
    rows: list[dict] = []
    for name in sets:
        rows += measure(name, strategies, budgets, args.peers, args.embedder)
    print(table(["set", "method", "budget", "strict", "95% CI", "recall", "precision", "IoU", "95% CI", "tokens", "ms"],
                [[r["set"], r["method"], r["budget"], f"{r['strict']}/{r['questions']}",
                  f"{r['strict_ci'][0]:.2f}-{r['strict_ci'][1]:.2f}", f"{r['recall']:.3f}", f"{r['precision']:.3f}",
                  f"{r['iou']:.4f}", f"{r['iou_ci'][0]:.4f}-{r['iou_ci'][1]:.4f}", f"{r['tokens']:.0f}",
                  f"{r['ms_p50']:.1f}" if "ms_p50" in r else ""] for r in rows]))
    if not args.smoke:
        print()
        print(table(["set", "packed@400 strict", "best whole ≤2000", "packed@200", "packed@400 IoU",
                     "best whole@400 IoU", "ratio"], verdicts(rows)))
    save_json(args.json, rows)


if __name__ == "__main__":
    main()
