"""The strategies' order within each search mode, made-up against people's, over a grid of the
generator's prose shares (issue 38: tau-b >= 0.5 in every mode whose real spread is above noise).

    python -m bench.labs.within_grid run --sets tr,en,pdf --out bench/.cache/agreement/within-a.jsonl
    python -m bench.labs.within_grid run --sets xquad-en,xquad-tr --out bench/.cache/agreement/within-b.jsonl
    python -m bench.labs.within_grid report bench/.cache/agreement/within-*.jsonl

`run`: each setting of (passage share, off-target share) makes the tool's default made-up
sets (200 questions a seed) on seeds 0..5, read as two default runs (seeds 0-2 and 3-5, each
pooled), scored through `Mirror`s (bench/agreement_mirror.py); per set x mode it writes the
Kendall tau-b of the strategies' MRR@10 against people's questions and whether the mode's real
spread is above noise (`within_mode`). Resumable: settings already in --out are skipped.
`report`: the settings ranked by the mean tau-b over the cells above noise (each cell the mean
of its two runs), then leave-one-set-out: for each set, the setting best on the other sets'
cells, scored on its own cells beside the default's.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from bench.agreement_mirror import SetLab
from bench.agreement_scores import ensure_built, kendall_tau_b, real_per_question, within_mode
from indexer.evaluation.sets import Question
from indexer.questions.generate import make_questions
from indexer.questions.simulate import Knobs

PASSAGE = (0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
NOISE = (0.15, 0.2, 0.25, 0.3, 0.35)
QUESTIONS, SEEDS, RUN = 200, 6, 3  # a run: RUN seeds pooled, as `--generate` does


def grid() -> list[dict[str, float]]:
    return [{"passage": p, "noise": n} for p in PASSAGE for n in NOISE if p + n <= 0.95 + 1e-9]


def _key(knobs: dict) -> str:
    return json.dumps(knobs, sort_keys=True)


def run(names: list[str], out: Path) -> None:
    done = set()
    if out.exists():
        done = {(r["set"], _key(r["knobs"])) for r in map(json.loads, out.read_text().splitlines())}
    for name in names:
        lab = SetLab(name)
        real_pq = real_per_question(name, ensure_built(name))
        for over in grid():
            if (name, _key(over)) in done:
                continue
            knobs = replace(Knobs(), **over)
            per_seed = []
            for seed in range(SEEDS):
                made = make_questions(lab.folder, QUESTIONS, seed=seed, knobs=knobs).questions
                questions = [Question(q["id"], q["question"], q["doc_id"], answer=q["answer"], tags=q["tags"],
                                      span=tuple(q["span"])) for q in made]
                per_seed.append((len(questions), lab.score(questions)))
            runs = []
            for start in range(0, SEEDS, RUN):
                part = per_seed[start:start + RUN]
                total = sum(n for n, _ in part)
                made_mrr = {k: sum(n * s[k] for n, s in part) / total for k in lab.real}
                cells = within_mode(real_pq, made_mrr)
                rows = list(lab.real)
                runs.append({"within": {m: [round(v["tau"], 3), v["spread_ok"]] for m, v in cells.items()},
                             "tau": round(kendall_tau_b([lab.real[k] for k in rows], [made_mrr[k] for k in rows]), 3)})
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"set": name, "knobs": over, "runs": runs}) + "\n")
            print(name, _key(over), [r["within"] for r in runs], flush=True)


def report(paths: list[Path]) -> None:
    data: dict[str, dict[str, dict]] = {}
    for path in paths:
        for r in map(json.loads, path.read_text().splitlines()):
            data.setdefault(_key(r["knobs"]), {})[r["set"]] = r
    sets = sorted({s for by_set in data.values() for s in by_set})
    full = [k for k in data if all(s in data[k] for s in sets)]
    any_set = data[full[0]]
    cells = sorted((s, m) for s in sets for m, (_, ok) in any_set[s]["runs"][0]["within"].items() if ok)

    def tau(k: str, s: str, m: str) -> float:
        runs = data[k][s]["runs"]
        return sum(r["within"][m][0] for r in runs) / len(runs)

    def mean(k: str, which: list[tuple[str, str]]) -> float:
        return sum(tau(k, s, m) for s, m in which) / len(which)

    print("cells above noise: " + ", ".join(f"{s} {m}" for s, m in cells))
    print("mean tau-b | cells >= 0.5 | whole-ranking tau-b | setting | per cell")
    for k in sorted(full, key=lambda k: -mean(k, cells)):
        whole = sum(sum(r["tau"] for r in data[k][s]["runs"]) / len(data[k][s]["runs"]) for s in sets) / len(sets)
        ok = sum(tau(k, s, m) >= 0.5 for s, m in cells)
        print(f"{mean(k, cells):+.3f} {ok:2d}/{len(cells)} {whole:+.3f} {k} "
              + " ".join(f"{s}:{m[0]}{tau(k, s, m):+.2f}" for s, m in cells))
    default = _key({"passage": Knobs().passage, "noise": Knobs().noise})
    print("\nleave one set out (the setting best on the other sets' cells, on this set's):")
    held_out, kept = [], []
    for s in sets:
        mine = [c for c in cells if c[0] == s]
        if not mine:
            continue
        best = max(full, key=lambda k: mean(k, [c for c in cells if c[0] != s]))
        held_out += [tau(best, *c) for c in mine]
        kept += [tau(default, *c) for c in mine] if default in data else []
        print(f"{s}: {best} " + " ".join(f"{m}{tau(best, s, m):+.2f}" for _, m in mine)
              + (" | default " + " ".join(f"{m}{tau(default, s, m):+.2f}" for _, m in mine) if default in data else ""))
    line = f"mean over the held-out cells: chosen {sum(held_out) / len(held_out):+.3f}"
    print(line + (f", default {sum(kept) / len(kept):+.3f}" if kept else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    grid_run = commands.add_parser("run", help="score the grid on some sets (appends to --out)")
    grid_run.add_argument("--sets", required=True)
    grid_run.add_argument("--out", type=Path, required=True)
    show = commands.add_parser("report", help="rank the settings and leave one set out")
    show.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.sets.split(","), args.out)
    else:
        report(args.paths)


if __name__ == "__main__":
    main()
