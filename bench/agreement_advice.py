"""Is the advice of one `eval --generate` run stable? For each set, runs as a user makes
them (seeds 0, 1, ...), under two protocols: *before*, one made-up set as big as the set's
own question set (what the agreement table has used); *after*, `eval --generate`'s default
(`indexer.questions.on_demand`: QUESTIONS a set, SEEDS sets pooled). Each run's advice
(`indexer.evaluation.advice`: the best row, the rows tied with it within noise, a winner
only when it is separated) is checked against the MRR@10 of the set's own questions: is
the best made-up row within REGRET_OK of the real best, or, when no winner is named, is the
real best among the rows called tied (the issue's bar); how far below the real best the
worst row called tied is (what "any of them will do" costs). And the bias of the mode
comparison: the made-up bm25 - embedding gap minus the real one. "one set" is the default
number of questions from a single seed: what pooling the seeds adds.

A pooled run's per-question results are its seeds' results put together (each question
is searched on its own, so this is what evaluating the pooled file gives).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bench.agreement_scores import (
    OUT,
    REGRET_OK,
    ensure_built,
    real_count,
    real_scores,
    scores,
    set_paths,
)
from bench.common import table
from indexer.evaluation.advice import LEXICAL_BIAS, LEXICAL_BIAS_RANGE, advise
from indexer.questions.generate import GENERATOR_VERSION
from indexer.questions.on_demand import QUESTIONS, SEEDS, generated_questions
from indexer.settings import Settings


def seed_scores(name: str, db: Path, n: int, seed: int) -> tuple[dict[str, list[float]], list]:
    """Per-question MRR@10 of every row on the made-up set `eval --generate n --seed seed
    --seeds 1` makes, and each question's passage (cached in bench/.cache/agreement by the
    set file and the catalogue)."""
    folder, _ = set_paths(name)
    made = generated_questions(n, [], settings=Settings.load(db=db), corpus=folder, seed=seed, seeds=1)
    catalog = db / "indexer.json"
    key = hashlib.sha256(made.path.read_bytes() + catalog.read_bytes() + str(GENERATOR_VERSION).encode()).hexdigest()
    cache = OUT / f"advice2-{name}-{key[:16]}.json"
    if cache.is_file():
        data = json.loads(cache.read_text())
        return data["per_question"], [_key(t) for t in data["targets"]]
    per_question: dict[str, list[float]] = {}
    targets: list = []
    scores(name, made.path, db, per_question, targets)
    OUT.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"per_question": per_question, "targets": targets}))
    return per_question, [_key(t) for t in targets]


def _key(target: list | tuple) -> tuple:
    """A passage key as `advice.targets_of` makes it, back from JSON (lists to tuples)."""
    return tuple(tuple(x) if isinstance(x, list) else x for x in target)


def judge(real: dict[str, float], per_question: dict[str, list[float]], targets: list | None = None) -> dict:
    advice = advise(per_question, clusters=targets)
    best = max(real.values())
    real_best = max(real, key=real.get)
    gap = lambda s: s["bm25"] - s["embedding"]  # noqa: E731
    real_modes = {m: sum(v for k, v in real.items() if k.endswith("/" + m)) / sum(k.endswith("/" + m) for k in real)
                  for m in ("bm25", "embedding")}
    pick_ok = best - real[advice.best] <= REGRET_OK
    return {"best": advice.best, "regret": best - real[advice.best], "winner": advice.winner,
            "tied": advice.tied, "real_best": real_best, "pick_ok": pick_ok,
            "advice_ok": pick_ok or (advice.winner is None and real_best in advice.tied),
            "tied_regret": max(best - real[k] for k in advice.tied),
            "bias": gap(advice.modes) - gap(real_modes), "questions": advice.questions}


def stability(name: str, runs: int) -> dict:
    db = ensure_built(name)
    real = real_scores(name, db)
    n_real = real_count(name)
    out = {"set": name, "n": n_real, "protocols": {}}
    for label, n, k in (("before", n_real, 1), ("one set", QUESTIONS, 1), ("after", QUESTIONS, SEEDS)):
        per_seed = [seed_scores(name, db, n, s) for s in range(runs + k - 1)]
        judged = []
        for r in range(runs):
            parts = per_seed[r:r + k]
            pooled = {row: [v for part, _ in parts for v in part[row]] for row in parts[0][0]}
            judged.append(judge(real, pooled, [t for _, targets in parts for t in targets]))
        out["protocols"][label] = {"questions": n, "seeds": k, "runs": judged}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"stability-{name}.json").write_text(json.dumps(out, indent=1))
    return out


def stability_summary(results: list[dict]) -> str:
    rows, totals = [], {}
    for r in results:
        for label, p in r["protocols"].items():
            runs = p["runs"]
            t = totals.setdefault(label, [0, 0, 0, [], [], []])
            t[0] += sum(j["pick_ok"] for j in runs)
            t[1] += sum(j["advice_ok"] for j in runs)
            t[2] += len(runs)
            t[3] += [len(j["tied"]) for j in runs]
            t[4].append(sum(j["bias"] for j in runs) / len(runs))  # the set's mean
            t[5] += [j["tied_regret"] for j in runs]
            rows.append([r["set"], label, f"{runs[0]['questions']} ({p['seeds']} x {p['questions']})",
                         " ".join(j["best"] for j in runs), " ".join(f"{j['regret']:.3f}" for j in runs),
                         f"{sum(j['pick_ok'] for j in runs)}/{len(runs)}",
                         " ".join(j["winner"] or f"tie of {len(j['tied'])}" for j in runs),
                         f"{sum(j['advice_ok'] for j in runs)}/{len(runs)}",
                         " ".join(f"{j['tied_regret']:.3f}" for j in runs),
                         " ".join(f"{j['bias']:+.2f}" for j in runs)])
    text = table(["set", "protocol", "questions a run", "best made-up row per run", "its regret MRR@10",
                  f"best within {REGRET_OK}", "advice per run", "advice right",
                  "worst real regret of a tied row", "bias (bm25-emb, made-up - real)"],
                 rows)
    for label, (pick, advice, n, tied, bias, worst) in totals.items():
        text += (f"\n\n{label}: best made-up row within {REGRET_OK} of the real best in {pick}/{n} runs; advice right "
                 f"(the best row within {REGRET_OK}, or the real best among the rows called tied) in {advice}/{n}; "
                 f"rows tied a run: mean {sum(tied) / len(tied):.1f}, the worst of them {max(worst):.3f} below the real best "
                 f"at most; bias: mean over the sets {sum(bias) / len(bias):+.3f}, "
                 f"sets from {min(bias):+.3f} to {max(bias):+.3f} (shipped: {LEXICAL_BIAS:.2f}, "
                 f"{LEXICAL_BIAS_RANGE[0]:+.2f} to {LEXICAL_BIAS_RANGE[1]:+.2f})")
    return text
