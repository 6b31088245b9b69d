"""Do made-up questions choose a strategy and a search mode like questions people wrote?

    python bench/questions_agreement.py                  # the proof: seven sets, tables + summary
    python bench/questions_agreement.py --sets tr,en --seeds 3
    python bench/questions_agreement.py --tune           # choose the knobs, leave-one-set-out
    python bench/questions_agreement.py --check          # the tuning mirror against indexer.evaluate
    python bench/questions_agreement.py --tune --every --seeds 3   # ... every setting on three seeds
    python bench/questions_agreement.py --held-out --seeds 3       # README's table
    python bench/questions_agreement.py --summarize      # the table again from the last results

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

`--tune` scores a small grid of generator knobs on every set through `Mirror` (an
in-memory copy of each collection that searches with the library's code; `--check` shows
it agrees with `indexer.evaluate`) and chooses the knobs leave-one-set-out: for each set,
the knobs best on the other six, scored on it.

Builds live in bench/.cache/lab/db-<set> (bench/public.py's layout; the embedding cache
makes reruns cheap), scores in bench/.cache/agreement/.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread a process: tuning runs two side by side
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import hashlib
import itertools
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CORPUS, machine, table  # noqa: E402
from public_sets import materialize  # noqa: E402

from indexer.indexing.building import build  # noqa: E402
from indexer.evaluation.generate import GENERATOR_VERSION, make_questions  # noqa: E402
from indexer.evaluation.run import evaluate  # noqa: E402
from indexer.evaluation.simulate import Knobs  # noqa: E402

BENCH = Path(__file__).resolve().parent
LAB = BENCH / ".cache" / "lab"
OUT = BENCH / ".cache" / "agreement"
SET_NAMES = ("tr", "en", "code", "pdf", "xquad-tr", "xquad-en", "code-pypi")
STRATEGIES = ("fixed64", "fixed256", "headers", "blocks", "semantic", "parent", "auto")
MODES = ("embedding", "bm25", "hybrid")
EMBEDDER = "use-m3"
REGRET_OK = 0.02


def set_paths(name: str) -> tuple[Path, Path]:
    if name == "pdf":
        return CORPUS / "pdf", CORPUS / "pdf" / "questions.jsonl"
    return materialize(name)


def strategies_for(name: str) -> tuple[str, ...]:
    return STRATEGIES + (("code",) if name.startswith("code") else ())


def row_labels(name: str) -> list[str]:
    return [f"{s}/{m}" for s in strategies_for(name) for m in MODES]


# -- statistics ---------------------------------------------------------------------------------
def kendall_tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b (ties in either ranking counted as in scipy.stats.kendalltau)."""
    concordant = discordant = tie_x = tie_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = _sign(x[i] - x[j]), _sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tie_x += 1
        elif dy == 0:
            tie_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    denom = ((concordant + discordant + tie_x) * (concordant + discordant + tie_y)) ** 0.5
    return (concordant - discordant) / denom if denom else 0.0


def _sign(v: float, eps: float = 1e-9) -> int:
    return 0 if abs(v) <= eps else (1 if v > 0 else -1)


def agreement(real: dict[str, float], made: dict[str, float]) -> dict:
    """Tau-b of the two rankings of rows, same winner, regret, per-mode means."""
    rows = list(real)
    r, g = [real[k] for k in rows], [made[k] for k in rows]
    best_real = max(r)
    picks = [k for k in rows if made[k] >= max(g) - 1e-9]  # the made-up set's winner (ties: all of them)
    regret = best_real - sum(real[k] for k in picks) / len(picks)
    modes = {m: (sum(real[k] for k in rows if k.endswith("/" + m)) / (len(rows) // len(MODES)),
                 sum(made[k] for k in rows if k.endswith("/" + m)) / (len(rows) // len(MODES))) for m in MODES}
    return {"tau": kendall_tau_b(r, g), "same_winner": any(real[k] >= best_real - 1e-9 for k in picks),
            "regret": regret, "pick": picks[0], "real_best": rows[r.index(best_real)], "modes": modes}


def overlap(folder: Path, questions: Path) -> dict[str, float]:
    """How much of a question its target gives away: the share of its content words (BM25's
    analyzer) found in the target span with its heading path, and the share of its IDF
    mass (over the corpus's sections) found there."""
    import math

    from indexer.evaluation.questions import load_questions, resolve
    from indexer.loaders import load_documents
    from indexer.text.analyzer import Analyzer, detect_language

    _, docs = load_documents([folder])
    docs = {d.doc_id: d for d in docs}
    qs = load_questions(questions)
    resolve(qs, docs)
    analyzer = Analyzer.for_language(detect_language([d.text[:5000] for d in docs.values()]))
    sections = [set(analyzer(d.text[s.start:s.end])) for d in docs.values() for s in d.sections] or [set()]
    df: dict[str, int] = {}
    for terms in sections:
        for t in terms:
            df[t] = df.get(t, 0) + 1
    n = len(sections)

    def idf(t):
        return math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))

    words, mass = [], []
    for q in qs:
        terms = analyzer(q.question)
        if not terms:
            continue
        doc = docs[q.doc_id]
        section = doc.section_at(q.target[0])
        there = set(analyzer(doc.text[q.target[0]:q.target[1]])) | set(analyzer(section.path if section else ""))
        words.append(sum(t in there for t in terms) / len(terms))
        mass.append(sum(idf(t) for t in terms if t in there) / sum(idf(t) for t in terms))
    return {"words": sum(words) / len(words), "idf": sum(mass) / len(mass),
            "length": sum(len(analyzer(q.question)) for q in qs) / len(qs)}


# -- building and scoring through the real pipeline ---------------------------------------------
def ensure_built(name: str) -> Path:
    folder, _ = set_paths(name)
    db = LAB / f"db-{name}"
    build([folder], list(strategies_for(name)), db=db, embedder=EMBEDDER)
    return db


def scores(name: str, questions: Path, db: Path, per_question: dict | None = None) -> dict[str, float]:
    """MRR@10 of every strategy/mode row on a question file (`indexer.evaluate`); with
    `per_question`, each row's reciprocal ranks are appended to it too."""
    folder, _ = set_paths(name)
    ev = evaluate(questions, list(strategies_for(name)), MODES, (1, 5), db=db, embedders=(EMBEDDER,), corpus=folder)
    if per_question is not None:
        for r in ev.rows:
            per_question.setdefault(f"{r.strategy}/{r.mode}", []).extend(r.per_question("mrr"))
    return {f"{r.strategy}/{r.mode}": r.mrr for r in ev.rows}


DEFAULT_ROW = "auto/hybrid"  # what the tool searches with when nobody chose


def advised(per_question: dict[str, list[float]]) -> str:
    """The row the tool would advise on these (made-up) questions, by the rule `tune --save`
    follows: the best row by MRR@10 only when the paired 95% interval of its gain over the
    default row is above 0, else the default (made-up rows within noise of each other are
    no reason to move)."""
    from indexer.evaluation.metrics import paired_difference

    means = {k: sum(v) / len(v) for k, v in per_question.items()}
    best = max(means, key=lambda k: (means[k], k == DEFAULT_ROW))
    if best == DEFAULT_ROW or DEFAULT_ROW not in per_question:
        return best
    _, (lo, _hi) = paired_difference(per_question[best], per_question[DEFAULT_ROW])
    return best if lo > 0 else DEFAULT_ROW


def _stamp(path: Path, db: Path) -> str:
    """The questions and the catalogue of the collections they were scored on: a rebuild
    (new generations) makes the scores stale."""
    catalog = db / "indexer.json"
    return hashlib.sha256(path.read_bytes() + (catalog.read_bytes() if catalog.is_file() else b"")).hexdigest()[:16]


def real_scores(name: str, db: Path) -> dict[str, float]:
    _, questions = set_paths(name)
    cache = OUT / f"real-{name}.json"
    stamp = _stamp(questions, db)
    if cache.is_file():
        data = json.loads(cache.read_text())
        if data.get("stamp") == stamp:
            return data["scores"]
    result = scores(name, questions, db)
    OUT.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"stamp": stamp, "scores": result}, indent=1))
    return result


def made_scores(name: str, db: Path, n: int, seed: int, knobs: Knobs, per_question: dict | None = None
                ) -> tuple[dict[str, float], dict]:
    folder, _ = set_paths(name)
    key = hashlib.sha256(json.dumps([GENERATOR_VERSION, n, seed, knobs.to_dict()], sort_keys=True).encode()
                         ).hexdigest()[:12]
    path = OUT / f"made-{name}-{key}.jsonl"
    t0 = time.perf_counter()
    made = make_questions(folder, n, seed=seed, knobs=knobs)
    OUT.mkdir(parents=True, exist_ok=True)
    made.write(path)
    info = {"made": len(made.questions), "generate_s": round(time.perf_counter() - t0, 2), "path": str(path)}
    return scores(name, path, db, per_question), info


def real_count(name: str) -> int:
    _, questions = set_paths(name)
    return sum(1 for line in questions.read_text(encoding="utf-8").splitlines() if line.strip())


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
    return text + "\n\nHow much a question shares with its target (BM25's analyzer; target span and heading path):\n\n" + \
        table(["set", "terms real", "terms made-up", "share of terms real", "made-up", "share of IDF mass real",
               "made-up"], rows)


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
        runs = [made_scores(name, db, n, seed, set_knobs, per_question) for seed in set_seeds]
        made = {k: sum(s[k] for s, _ in runs) / len(runs) for k in real}
        folder, questions = set_paths(name)
        advice = advised(per_question)
        result = {"set": name, "n": n, "real": real, "made": made, "agreement": agreement(real, made),
                  "advised": {"row": advice, "regret": max(real.values()) - real[advice]},
                  "per_seed": [agreement(real, s)["tau"] for s, _ in runs], "info": [i for _, i in runs],
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
    parser.add_argument("--tune", action="store_true", help="choose the knobs leave-one-set-out (see agreement_tune.py)")
    parser.add_argument("--check", action="store_true", help="compare the tuning mirror with indexer.evaluate")
    parser.add_argument("--held-out", action="store_true",
                        help="each set with the knobs --tune chose on the other six (bench/.cache/agreement/loso.json)")
    parser.add_argument("--every", action="store_true",
                        help="--tune: every config on every seed (one stage), not seed 0 then a shortlist")
    parser.add_argument("--cap", type=int, default=150, help="--tune: at most this many made-up questions per set")
    parser.add_argument("--worker", default="0/1", help="--tune: this process scores configs i with i %% N == I (I/N)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    names = args.sets.split(",")
    if args.tune or args.check:
        import agreement_tune

        agreement_tune.main(names, args)
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
