"""Do made-up questions choose a strategy and a search mode like questions people wrote?

    python -m bench.questions_agreement                  # the proof: seven sets, tables + summary
    python -m bench.questions_agreement --sets tr,en --seeds 3
    python -m bench.questions_agreement --check          # the tuning mirror against indexer.evaluate
    python -m bench.questions_agreement --held-out --seeds 3       # docs/results.md's table
    python -m bench.questions_agreement --summarize      # the table again from the last results
    python -m bench.questions_agreement --smoke          # the two-document smoke set (numbers mean nothing)
    python -m bench.questions_agreement --sets tr,en,code,pdf --stability 3   # one default run per seed

On every set where people wrote the questions (the bundled Turkish, English, code and PDF
sets; XQuAD tr and en; code-pypi, from bench/public_sets.py) the offline generator
(`indexer.make_questions`, `llm=extractive`) makes a set of the same size over the same
documents. Both sets are scored on every strategy × search mode — strategies fixed64,
fixed256, headers, blocks, semantic, parent, auto (and code on the code sets), modes
embedding, bm25 and the default (hybrid, adaptive fusion), embedder use-m3 — through the
real pipeline (`indexer.build`, `indexer.evaluate`). Rows are ranked by MRR@10 under each
set; reported: Kendall's tau-b between the two rankings, whether the winner is the same,
the regret (real MRR@10 of the made-up set's winner minus the real best), the advice the
tool would give on the made-up set by `tune --save`'s rule (its best row only when the
paired 95% interval of the gain over auto/hybrid is above 0) with that advice's regret, and
the bias (mean MRR@10 per mode, made-up minus real).

The generator's knobs were tuned by bench/labs/agreement_tune.py (a grid scored through
`Mirror`, an in-memory copy of each collection that searches with the library's code;
`--check` shows it agrees with `indexer.evaluate`), leave-one-set-out: for each set, the
knobs best on the other six; `--held-out` scores each set with those
(bench/.cache/agreement/loso.json, which the lab writes).

Builds live in bench/.cache/lab/db-<set> (bench/public.py's layout; the embedding cache
makes reruns cheap), scores in bench/.cache/agreement/.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread a process: tuning runs two side by side
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench.agreement_advice import stability, stability_summary
from bench.agreement_mirror import SetLab, check
from bench.agreement_scores import (
    DEFAULT_ROW,
    MODES,
    OUT,
    REGRET_OK,
    SET_NAMES,
    advised,
    agreement,
    ensure_built,
    made_scores,
    overlap,
    real_count,
    real_per_question,
    real_scores,
    set_paths,
    syntax_leads,
    within_mode,
)
from bench.common import machine, smoke_option, table
from indexer.questions.simulate import Knobs


# -- report -------------------------------------------------------------------------------------
def set_table(name: str, real: dict[str, float], made: dict[str, float]) -> str:
    order_real = sorted(real, key=lambda k: -real[k])
    order_made = sorted(made, key=lambda k: -made[k])
    rows = [[k, f"{real[k]:.3f}", order_real.index(k) + 1, f"{made[k]:.3f}", order_made.index(k) + 1]
            for k in order_real]
    return table(["strategy/mode", "real MRR@10", "real rank", "made-up MRR@10", "made-up rank"], rows)


def summary(results: list[dict]) -> str:
    rows = []
    for r in results:
        a = r["agreement"]
        spread = (f"{min(r['real'].values()):.2f}-{max(r['real'].values()):.2f} / "
                  f"{min(r['made'].values()):.2f}-{max(r['made'].values()):.2f}")
        seeds = r["per_seed"]
        advice = r.get("advised") or {"row": "–", "regret": float("nan")}
        rows.append([r["set"], r["n"], f"{a['tau']:+.2f}", f"{min(seeds):+.2f} to {max(seeds):+.2f}",
                     "yes" if a["same_winner"] else "no", f"{a['regret']:.3f}", a["real_best"], a["pick"],
                     advice["row"], f"{advice['regret']:.3f}", spread,
                     " ".join(f"{m[:3]} {a['modes'][m][1] - a['modes'][m][0]:+.2f}" for m in MODES)])
    taus = [r["agreement"]["tau"] for r in results]
    ok = sum(1 for r in results if r["agreement"]["same_winner"] or r["agreement"]["regret"] <= REGRET_OK)
    text = table(["set", "questions", "Kendall tau-b", "tau-b of each seed", "same winner", "regret MRR@10",
                  "real best", "made-up pick", "advice (tune's rule)", "its regret", "MRR@10 range real / made-up",
                  "bias (made-up - real MRR@10 per mode)"], rows)
    advised_ok = sum(1 for r in results if r.get("advised") and r["advised"]["regret"] <= REGRET_OK)
    text += (f"\n\nmean tau-b {sum(taus) / len(taus):+.2f}; same winner or regret <= {REGRET_OK}: "
             f"{ok}/{len(results)}; the advice by tune's rule (the made-up best only when its gain over "
             f"{DEFAULT_ROW} is significant) within {REGRET_OK} of the real best: {advised_ok}/{len(results)}")
    rows = [[r["set"], f"{r['overlap']['real']['length']:.1f}", f"{r['overlap']['made']['length']:.1f}",
             f"{r['overlap']['real']['words']:.2f}", f"{r['overlap']['made']['words']:.2f}",
             f"{r['overlap']['real']['idf']:.2f}", f"{r['overlap']['made']['idf']:.2f}"] for r in results]
    text += "\n\n" + within_table(results)
    return text + "\n\nHow much a question shares with its target (BM25's analyzer; target span and heading path):\n\n" + \
        table(["set", "terms real", "terms made-up", "share of terms real", "made-up", "share of IDF mass real",
               "made-up"], rows)


def within_table(results: list[dict]) -> str:
    """Within each mode: the strategies' order by made-up questions against people's."""
    rows, held, counted = [], 0, 0
    for r in results:
        for mode, w in r.get("within", {}).items():
            sep = "-" if w["sep_agree"] is None else f"{w['sep_agree']:+.2f} of {w['separated']}"
            rows.append([r["set"], mode, f"{w['spread']:.3f}", "yes" if w["spread_ok"] else "no (noise)",
                         f"{w['tau']:+.2f}", sep])
            if w["spread_ok"]:
                counted += 1
                held += w["tau"] >= 0.5
    code = [r for r in results if r.get("syntax")]
    lines = "".join(f"\n{r['set']}: a syntax-aware row among the leaders by people's questions "
                    f"{'yes' if r['syntax']['real'] else 'no'} ({', '.join(r['syntax']['real_leaders'])}), by made-up "
                    f"{'yes' if r['syntax']['made'] else 'no'} ({', '.join(r['syntax']['made_leaders'])})" for r in code)
    return ("Within one mode (the strategies' order; spread = real best - worst MRR@10, above noise when "
            "their paired 95% interval is above 0; separated pairs: those people's questions tell apart, "
            "scored right - wrong):\n\n"
            + table(["set", "mode", "real spread", "above noise", "tau-b", "separated pairs: right - wrong"], rows)
            + f"\n\nwithin-mode tau-b >= 0.5 in {held}/{counted} set x mode cells whose spread is above noise"
            + ("\n" + lines if lines else ""))


LARGE = 300  # questions: a set this big is scored on --large-seeds made-up sets (each as big as it is)


def run(names: list[str], seeds: list[int], knobs: Knobs | dict[str, Knobs], show_tables: bool,
        large_seeds: int | None = None) -> list[dict]:
    results = []
    for name in names:
        set_knobs = knobs[name] if isinstance(knobs, dict) else knobs
        t0 = time.perf_counter()
        db = ensure_built(name)
        real = real_scores(name, db)
        n = real_count(name)
        set_seeds = seeds[:large_seeds] if large_seeds and n > LARGE else seeds
        per_question: dict[str, list[float]] = {}
        targets: list = []
        runs = [made_scores(name, db, n, seed, set_knobs, per_question, targets) for seed in set_seeds]
        made = {k: sum(s[k] for s, _ in runs) / len(runs) for k in real}
        folder, questions = set_paths(name)
        advice = advised(per_question)
        result = {"set": name, "n": n, "real": real, "made": made, "agreement": agreement(real, made),
                  "advised": {"row": advice, "regret": max(real.values()) - real[advice]},
                  "per_seed": [agreement(real, s)["tau"] for s, _ in runs], "info": [i for _, i in runs],
                  "within": within_mode(real_per_question(name, db), made),
                  "syntax": syntax_leads(real_per_question(name, db), per_question, targets) if name.startswith("code") else None,
                  "overlap": {"real": overlap(folder, questions), "made": overlap(folder, Path(runs[0][1]["path"]))}}
        results.append(result)
        OUT.mkdir(parents=True, exist_ok=True)  # each set as it is done: --summarize prints a table of them
        (OUT / f"result-{name}.json").write_text(json.dumps({"knobs": set_knobs.to_dict(), **result}, indent=1))
        print(f"  {name}: tau {result['agreement']['tau']:+.2f} (seeds {', '.join(f'{t:+.2f}' for t in result['per_seed'])})"
              f" in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
        if show_tables:
            print(f"\n### {name} ({n} questions each)\n\n{set_table(name, real, made)}\n", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SET_NAMES))
    parser.add_argument("--seeds", type=int, default=1, help="made-up sets per real set (their MRRs averaged)")
    parser.add_argument("--large-seeds", type=int, default=None,
                        help=f"made-up sets per real set of over {LARGE} questions (default: --seeds)")
    parser.add_argument("--summarize", action="store_true",
                        help="print the summary of the last result of each set (bench/.cache/agreement/result-*.json)")
    parser.add_argument("--knobs", default="", help="generator knobs as JSON, e.g. '{\"passage\": 0.4}'")
    parser.add_argument("--check", action="store_true", help="compare the tuning mirror with indexer.evaluate")
    parser.add_argument("--held-out", action="store_true",
                        help="each set with the knobs bench/labs/agreement_tune.py chose on the other six "
                             "(bench/.cache/agreement/loso.json)")
    parser.add_argument("--stability", type=int, default=0, metavar="RUNS",
                        help="the advice of RUNS runs (seeds 0..RUNS-1) as a user makes them: one made-up set "
                             "as big as the set's own (before) and `eval --generate`'s default (after)")
    parser.add_argument("--json", type=Path, default=None)
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sets, args.seeds = "smoke", 1
    names = args.sets.split(",")
    if args.stability or args.smoke:
        runs = args.stability or 1
        print(f"the advice of one run per seed (seeds 0..{runs - 1}); {time.strftime('%Y-%m-%d')}, {machine()}\n")
        print(stability_summary([stability(name, runs) for name in names]))
        if not args.smoke:
            return
    if args.check:
        check([SetLab(name) for name in names])
        return
    if args.summarize:
        results = [json.loads((OUT / f"result-{name}.json").read_text()) for name in names]
        for r in results:
            print(f"{r['set']}: {len(r['per_seed'])} made-up set(s) of {r['n']} questions, knobs "
                  f"{json.dumps({k: v for k, v in r['knobs'].items() if v != getattr(Knobs(), k)})}")
        print()
        print(summary(results))
        return
    knobs = replace(Knobs(), **json.loads(args.knobs)) if args.knobs else Knobs()
    print(f"made-up vs real questions on {', '.join(names)}; {time.strftime('%Y-%m-%d')}, {machine()}")
    if args.held_out:
        chosen = json.loads((OUT / "loso.json").read_text())
        knobs = {name: replace(Knobs(), **chosen[name]) for name in names}
        print("generator: extractive, each set with the knobs chosen on the other six (leave-one-set-out):")
        for name in names:
            print(f"  {name}: {json.dumps({k: v for k, v in chosen[name].items() if v != getattr(Knobs(), k)})}")
        print(f"seeds 0..{args.seeds - 1}" + (f" ({args.large_seeds} for sets over {LARGE} questions)"
                                               if args.large_seeds else "") + "\n")
    else:
        print(f"generator: extractive, knobs {knobs.to_dict()}, seeds 0..{args.seeds - 1}\n")
    results = run(names, list(range(args.seeds)), knobs, show_tables=True, large_seeds=args.large_seeds)
    print(summary(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
