"""Tuning the question generator's knobs by agreement (see bench/questions_agreement.py).

    python -m bench.labs.agreement_tune tune --every --seeds 3     # the last tune
    python -m bench.labs.agreement_tune explore '{"noise": 0.4}' '{"noise": 0.5}'
    python -m bench.labs.agreement_tune sizes      # chunk size against each mode's order
    python -m bench.labs.agreement_tune names --sets code,code-pypi   # embedding rows without name lookups

Every candidate set of knobs (`GRID`) makes a question set per real set (the real set's size,
capped by --cap for the 1,190-question XQuAD sets and code-pypi), scored through `Mirror`s;
the rankings of strategy × mode rows are compared with the real questions' (`indexer.evaluate`,
cached). Two stages: every config on seed 0; then (`--seeds 3`) the shortlisted ones — the
best SHORTLIST by mean tau-b on the other six sets, for each left-out set — on more seeds,
whose mean decides. With `--every`, one stage: every config on every seed (one seed's
shortlist flatters: its best settings fell by 0.03-0.05 on three). Leave-one-set-out: each set is scored with the knobs both stages chose
without it. `python -m bench.questions_agreement --check` first compares each mirror with
`indexer.evaluate` on the real questions.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import replace

from bench.agreement_mirror import SetLab
from bench.agreement_scores import MODES, OUT, REGRET_OK, SET_NAMES, agreement, kendall_tau_b
from indexer.questions.simulate import Knobs

GRID = {
    "noise": (0.35, 0.45),
    "code_noise": (0.25, 0.45),
    "shuffle": (0.0, 0.25, 0.5),
    "inflect": (0.15, 0.3),
}
# The first grid (passage 0.35-0.75, noise 0.1-0.4, context discrimination and question frames
# in it too, length 5.5) favoured more noise; the second (passage 0.3-0.6, noise 0.25-0.55,
# discrimination 0-2, length 4-7; 108 settings) chose passage 0.45, noise 0.45, discrimination 0,
# length 5.5. The third (this one, every setting on three seeds with --every, after grids of
# 32 and 96 settings on seed 0 tried question frames, phrases, passage share and length
# again: bench/RESULTS.md) gave code its own off-target share and tuned the typing noise.
FIXED: dict = {}


def configs() -> list[Knobs]:
    keys = list(GRID)
    out = []
    for values in itertools.product(*(GRID[k] for k in keys)):
        knobs = replace(Knobs(), **FIXED, **dict(zip(keys, values)))
        if knobs.passage + max(knobs.noise, knobs.code_noise) <= 0.95 + 1e-9:
            out.append(knobs)
    return out


SHORTLIST = 4  # stage 2: the best configs of stage 1 (per left-out set) scored on more seeds (10 configs in the last tune)


def _load(cap: int) -> dict:
    results = {}
    for cache in OUT.glob("tune*.jsonl"):
        for line in cache.read_text().splitlines():
            row = json.loads(line)
            if row.get("cap") == cap:
                results[(row["set"], row["config"], row["seed"])] = row
    return results


def _agreements(real: dict, results: dict, seeds: list[int]) -> dict[str, dict[str, dict]]:
    """config -> set -> agreement of the made-up MRRs averaged over `seeds` (configs scored on
    every set with every seed only)."""
    runs: dict[str, dict[str, list]] = {}
    for (name, config, seed), row in results.items():
        if name in real and seed in seeds:
            runs.setdefault(config, {}).setdefault(name, []).append(row["made"])
    out = {}
    for config, sets in runs.items():
        if set(sets) == set(real) and all(len(v) == len(seeds) for v in sets.values()):
            out[config] = {name: agreement(real[name], {k: sum(r[k] for r in rs) / len(rs) for k in real[name]})
                           for name, rs in sets.items()}
    return out


def _mean_tau(per: dict, config: str, among: list[str]) -> float:
    return sum(per[config][n]["tau"] for n in among) / len(among)


def shortlists(per: dict, names: list[str]) -> dict[str, list[str]]:
    """Stage 1: per left-out set (and for all sets, "in-sample"), the SHORTLIST configs with the
    best mean tau-b on the other sets."""
    out = {}
    for left in ["in-sample", *names]:
        among = [n for n in names if n != left]
        out[left] = sorted(per, key=lambda c: -_mean_tau(per, c, among))[:SHORTLIST]
    return out


def tune(names: list[str], args: argparse.Namespace) -> None:
    """Score every config of the grid (or, with more seeds, the shortlist), then report."""
    labs = [SetLab(n) for n in names]
    cap = args.cap
    results = _load(cap)
    real = {lab.name: lab.real for lab in labs}
    stage1 = _agreements(real, results, [0])
    todo = configs()
    seeds = [0]
    if args.seeds > 1 and args.every:  # one stage: every config on every seed
        seeds = list(range(args.seeds))
    elif args.seeds > 1 and stage1:  # stage 2: more seeds for the shortlisted configs
        wanted = {c for short in shortlists(stage1, names).values() for c in short}
        todo = [k for k in configs() if json.dumps(k.to_dict(), sort_keys=True) in wanted]
        seeds = list(range(args.seeds))
    worker, workers = (int(x) for x in args.worker.split("/"))
    with open(OUT / f"tune-{worker}.jsonl", "a") as fh:
        for i, knobs in enumerate(todo):
            if i % workers != worker:
                continue
            config = json.dumps(knobs.to_dict(), sort_keys=True)
            for lab in labs:
                for seed in seeds:
                    if (lab.name, config, seed) in results:
                        continue
                    t0 = time.perf_counter()
                    made = lab.score(lab.made(knobs, seed, cap))
                    row = {"set": lab.name, "config": config, "seed": seed, "cap": cap, "made": made,
                           "seconds": round(time.perf_counter() - t0, 1)}
                    results[(lab.name, config, seed)] = row
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
            print(f"  {config}: done", file=sys.stderr, flush=True)
    if workers == 1:
        report(names, real, results, list(range(args.seeds)), every=args.every)


def _short(config: str) -> str:
    c, default = json.loads(config), Knobs().to_dict()
    return json.dumps({k: v for k, v in c.items() if k in GRID or v != default.get(k)})


def report(names: list[str], real: dict, results: dict, seeds: list[int], every: bool = False) -> None:
    """Stage 1 (seed 0, every config) shortlists; stage 2 (all seeds) chooses among them.
    With `every`, every config of the grid was scored on every seed: one stage."""
    final = _agreements(real, results, seeds) if len(seeds) > 1 else _agreements(real, results, [0])
    if every:
        grid = {json.dumps(k.to_dict(), sort_keys=True) for k in configs()}
        final = {c: v for c, v in final.items() if c in grid}
    stage1 = final if every else _agreements(real, results, [0])
    lists = shortlists(stage1, names)
    print(f"\nstage 1: {len(stage1)} configs, seed 0; best mean tau-b over all sets:")
    for config in lists["in-sample"]:
        taus = " ".join(f"{n} {stage1[config][n]['tau']:+.2f}" for n in names)
        print(f"  {_mean_tau(stage1, config, names):+.3f} {_short(config)}  [{taus}]")
    print(f"\nstage 2: the shortlist on seeds {seeds}, in-sample:")
    pool = [c for c in lists["in-sample"] if c in final]
    for config in sorted(pool, key=lambda c: -_mean_tau(final, c, names)):
        ok = sum(1 for n in names if final[config][n]["same_winner"] or final[config][n]["regret"] <= REGRET_OK)
        taus = " ".join(f"{n} {final[config][n]['tau']:+.2f}" for n in names)
        print(f"  {_mean_tau(final, config, names):+.3f} ok {ok}/{len(names)} {_short(config)}  [{taus}]")
    chosen = {"in-sample": json.loads(max(pool, key=lambda c: _mean_tau(final, c, names)))}
    print("\nleave-one-set-out (shortlist and choice on the other sets only):")
    held = []
    for name in names:
        others = [n for n in names if n != name]
        pool = [c for c in lists[name] if c in final]
        pick = max(pool, key=lambda c: _mean_tau(final, c, others))
        chosen[name] = json.loads(pick)
        a = final[pick][name]
        held.append(a)
        print(f"  {name}: tau {a['tau']:+.2f} same winner {a['same_winner']} regret {a['regret']:.3f}  {_short(pick)}")
    (OUT / "loso.json").write_text(json.dumps(chosen, indent=1))
    ok = sum(1 for a in held if a["same_winner"] or a["regret"] <= REGRET_OK)
    print(f"  held-out mean tau-b {sum(a['tau'] for a in held) / len(held):+.3f}; same winner or regret <= "
          f"{REGRET_OK}: {ok}/{len(held)}")


def _within_tau(real: dict[str, float], made: dict[str, float], mode: str) -> float:
    """Kendall's tau-b of the strategies of one mode (people's questions against made-up)."""
    rows = [k for k in real if k.endswith("/" + mode)]
    return kendall_tau_b([real[k] for k in rows], [made[k] for k in rows])


def explore(names: list[str], trials: list[dict], seeds: list[int], cap: int) -> None:
    """Score a few knob settings (each a dict of overrides) and print agreement per set."""
    labs = [SetLab(n) for n in names]
    for overrides in trials:
        knobs = replace(Knobs(), **overrides)
        taus, line = [], []
        for lab in labs:
            runs = [lab.score(lab.made(knobs, seed, cap)) for seed in seeds]
            made = {k: sum(r[k] for r in runs) / len(runs) for k in lab.real}
            a = agreement(lab.real, made)
            taus.append(a["tau"])
            bias = " ".join(f"{m[:1]}{a['modes'][m][1] - a['modes'][m][0]:+.2f}" for m in MODES)
            within = " ".join(f"{m[:1]}{_within_tau(lab.real, made, m):+.2f}" for m in MODES)
            line.append(f"{lab.name} {a['tau']:+.2f} r{a['regret']:.3f} [bias {bias}] [within {within}]")
        print(f"{sum(taus) / len(taus):+.3f} {json.dumps(overrides)}\n    " + "\n    ".join(line), flush=True)


def sizes(names: list[str]) -> None:
    """Kendall tau-b between the strategies' mean chunk size (characters of what is
    embedded) and their MRR@10 per mode, with people's questions and with made-up ones
    (the last `bench.questions_agreement` run's result for each set)."""
    print("set        mode       size~people  size~made-up")
    for name in names:
        path = OUT / f"result-{name}.json"
        if not path.exists():
            print(f"{name}: no result (run python -m bench.questions_agreement --sets {name} first)")
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        lab = SetLab(name)
        size = {s: sum(len(c.indexed_text) for c in m.chunk_list) / max(1, len(m.chunk_list))
                for s, m in lab.mirrors.items()}
        for mode in MODES:
            rows = [k for k in result["real"] if k.endswith("/" + mode)]
            x = [size[k.split("/")[0]] for k in rows]
            people = kendall_tau_b(x, [result["real"][k] for k in rows])
            made = kendall_tau_b(x, [result["made"][k] for k in rows])
            print(f"{name:10} {mode:10} {people:+11.2f}  {made:+12.2f}", flush=True)


def names(sets: list[str], seeds: list[int], cap: int) -> None:
    """Within-mode tau-b of the default made-up sets, each mode scored on every question
    and on the questions that are not a bare symbol name (tag `name`)."""
    for name in sets:
        lab = SetLab(name)
        every, described = [], []
        for seed in seeds:
            questions = lab.made(Knobs(), seed, cap)
            every.append(lab.score(questions))
            described.append(lab.score([q for q in questions if "name" not in q.tags]))
        mean = {k: sum(r[k] for r in every) / len(every) for k in lab.real}
        rest = {k: sum(r[k] for r in described) / len(described) for k in lab.real}
        line = " | ".join(f"{m} {_within_tau(lab.real, mean, m):+.2f} -> {_within_tau(lab.real, rest, m):+.2f}"
                          for m in MODES)
        print(f"{name}: every question -> without name lookups: {line}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    grid = commands.add_parser("tune", help="the grid, leave-one-set-out (writes bench/.cache/agreement/loso.json)")
    grid.add_argument("--sets", default=",".join(SET_NAMES))
    grid.add_argument("--seeds", type=int, default=1, help="seeds of the second stage (or of every config, --every)")
    grid.add_argument("--every", action="store_true",
                      help="every config on every seed (one stage), not seed 0 then a shortlist")
    grid.add_argument("--cap", type=int, default=150, help="at most this many made-up questions per set")
    grid.add_argument("--worker", default="0/1", help="this process scores configs i with i %% N == I (I/N)")
    trials = commands.add_parser("explore", help="score a few knob settings and print agreement per set")
    trials.add_argument("--sets", default="tr,en,code,pdf")
    trials.add_argument("--seeds", type=int, default=2)
    trials.add_argument("--cap", type=int, default=300)
    trials.add_argument("trials", nargs="+", help="JSON dicts of knob overrides")
    size = commands.add_parser("sizes", help="chunk size against each mode's order, people's and made-up")
    size.add_argument("--sets", default=",".join(SET_NAMES))
    bare = commands.add_parser("names", help="within-mode order without bare symbol-name questions")
    bare.add_argument("--sets", default="code,code-pypi")
    bare.add_argument("--seeds", type=int, default=3)
    bare.add_argument("--cap", type=int, default=300)
    args = parser.parse_args()
    if args.command == "names":
        names(args.sets.split(","), list(range(args.seeds)), args.cap)
    elif args.command == "sizes":
        sizes(args.sets.split(","))
    elif args.command == "tune":
        tune(args.sets.split(","), args)
    else:
        explore(args.sets.split(","), [json.loads(t) for t in args.trials], list(range(args.seeds)), args.cap)


if __name__ == "__main__":
    main()
