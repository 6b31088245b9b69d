"""How well can any question set agree? The noise ceiling of questions_agreement.py's table.

    python -m bench.agreement_ceiling                     # the seven sets, 200 splits each
    python -m bench.agreement_ceiling --sets tr,pdf --splits 500
    python -m bench.agreement_ceiling --smoke     # the two-document smoke set, 5 splits (numbers mean nothing)

A set of real questions is itself a sample: a second set written by the same people over
the same documents would not rank the strategy × mode rows exactly as the first does, and
with 15 or 48 questions the rows are often a few hundredths of MRR@10 apart. So for each
set the real questions are split at random into two disjoint halves, many times, and the
rows are ranked by MRR@10 on each half:

- `real half ~ real half`: Kendall's tau-b between the two halves (what a second set of
  people's questions of half the size agrees with the first: the ceiling, for that size);
- `made-up ~ real half`: tau-b between the made-up set of the last `questions_agreement.py`
  run (bench/.cache/agreement/result-<set>.json) and one half, over the same splits.

When the second is close to the first, made-up questions rank rows about as well as
another set of real questions would; a low tau on a small set is then the set's size, not
the generator. Halves are half the size of the set, so both figures sit below what full
sets would reach. Per-question ranks come from `Mirror` (the library's search on an
in-memory copy of each stored collection; `questions_agreement.py --check`).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

from bench.agreement_mirror import SetLab, first_hits
from bench.agreement_scores import MODES, OUT, SET_NAMES, kendall_tau_b
from bench.common import machine, smoke_option, table
from indexer.evaluation.metrics import reciprocal_rank
from indexer.evaluation.sets import load_questions, resolve


def per_question(lab: SetLab) -> dict[str, list[float]]:
    """Row -> the reciprocal rank of each real question (in file order)."""
    questions = load_questions(lab.questions_path)
    resolve(questions, lab.docs)
    out = {}
    for strategy, mirror in lab.mirrors.items():
        ranks = first_hits(mirror, questions, lab.spans, MODES)
        out.update({f"{strategy}/{m}": [reciprocal_rank(r) for r in ranks[m]] for m in MODES})
    return out


def ceiling(rr: dict[str, list[float]], made: dict[str, float] | None, splits: int, seed: int = 0,
            rows: list[str] | None = None) -> dict:
    """Tau-b between random halves of the real questions (and the made-up ranking against
    each half) over `rows` (default: every row)."""
    rows = rows or list(rr)
    n = len(rr[rows[0]])
    rng = random.Random(seed)
    halves, against_made = [], []
    for _ in range(splits):
        order = list(range(n))
        rng.shuffle(order)
        a, b = order[: n // 2], order[n // 2 :]
        ma = [sum(rr[r][i] for i in a) / len(a) for r in rows]
        mb = [sum(rr[r][i] for i in b) / len(b) for r in rows]
        halves.append(kendall_tau_b(ma, mb))
        if made:
            g = [made[r] for r in rows]
            against_made.append((kendall_tau_b(g, ma) + kendall_tau_b(g, mb)) / 2)
    full = [sum(rr[r]) / n for r in rows]
    return {"n": n, "real_halves": statistics.mean(halves), "real_halves_sd": statistics.pstdev(halves),
            "made_vs_half": statistics.mean(against_made) if against_made else None,
            "made_vs_full": kendall_tau_b([made[r] for r in rows], full) if made else None}


def within_ceilings(rr: dict[str, list[float]], made: dict[str, float] | None, splits: int) -> dict[str, dict]:
    """`ceiling` over the strategies of each mode: how well two halves of people's questions
    agree on the order within a mode (the most a made-up set can be asked to reach there)."""
    return {m: ceiling(rr, made, splits, rows=[k for k in rr if k.endswith("/" + m)]) for m in MODES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SET_NAMES))
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sets, args.splits = "smoke", 5
    print(f"noise ceiling of the agreement table; {machine()}; {args.splits} random half splits per set\n")
    rows, results, within_rows = [], {}, []
    for name in args.sets.split(","):
        lab = SetLab(name)
        saved = OUT / f"result-{name}.json"
        made = json.loads(saved.read_text())["made"] if saved.is_file() else None
        rr = per_question(lab)
        result = ceiling(rr, made, args.splits)
        result["within"] = within_ceilings(rr, made, args.splits)
        results[name] = result
        within_rows += [[name, m, f"{w['real_halves']:+.2f} ± {w['real_halves_sd']:.2f}",
                         "–" if made is None else f"{w['made_vs_half']:+.2f}",
                         "–" if made is None else f"{w['made_vs_full']:+.2f}"] for m, w in result["within"].items()]
        rows.append([name, result["n"], f"{result['real_halves']:+.2f} ± {result['real_halves_sd']:.2f}",
                     "–" if made is None else f"{result['made_vs_half']:+.2f}",
                     "–" if made is None else f"{result['made_vs_full']:+.2f}"])
        print(f"  {name}: done", file=sys.stderr, flush=True)
    print(table(["set", "questions", "tau-b real half ~ real half", "made-up ~ real half", "made-up ~ all real"], rows))
    mean = statistics.mean(r["real_halves"] for r in results.values())
    made = [r["made_vs_half"] for r in results.values() if r["made_vs_half"] is not None]
    print(f"\nmean tau-b: real half ~ real half {mean:+.2f}"
          + (f"; made-up ~ real half {statistics.mean(made):+.2f}" if made else ""))
    print("\nWithin each mode (the strategies of one mode only):\n")
    print(table(["set", "mode", "tau-b real half ~ real half", "made-up ~ real half", "made-up ~ all real"],
                within_rows))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
