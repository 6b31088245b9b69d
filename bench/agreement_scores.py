"""What the question-agreement programs share (bench/questions_agreement.py, its noise
ceiling bench/agreement_ceiling.py, and the generator's tuning lab
bench/labs/agreement_tune.py): the sets people wrote questions for, their builds, the
MRR@10 of every strategy × mode row through the real pipeline (`indexer.build`,
`indexer.evaluate`), and how two rankings of those rows agree (Kendall's tau-b, winner,
regret, the advice by `tune --save`'s rule).

Builds live in bench/.cache/lab/db-<set> (bench/public.py's layout; the embedding cache
makes reruns cheap), scores in bench/.cache/agreement/.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from pathlib import Path

from bench.common import CACHE, CORPUS
from bench.public_sets import materialize
from indexer.evaluation.run import evaluate
from indexer.indexing.building import build
from indexer.questions.generate import GENERATOR_VERSION, make_questions
from indexer.questions.simulate import Knobs
from indexer.settings import Settings

LAB = CACHE / "lab"
OUT = CACHE / "agreement"

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
    if name == "smoke":  # bench/public_sets.py's two-document set, for --smoke runs
        return ("fixed64", "headers")
    return STRATEGIES + (("code",) if name.startswith("code") else ())


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


def within_mode(real_pq: dict[str, list[float]], made: dict[str, float]) -> dict[str, dict]:
    """How the made-up questions order the strategies of one search mode, per mode:
    `tau`, Kendall's tau-b of the strategies' MRR@10 (people's questions against made-up);
    `spread_ok`, whether the mode's real spread exceeds its noise (the real best and worst
    strategy differ with a paired 95% interval above 0); `separated`, the pairs of
    strategies people's questions separate (paired 95% interval excluding 0), and `sep_agree`,
    over those pairs, the share the made-up order gets right minus the share it gets wrong
    (a pair the real questions cannot tell apart says nothing about the generator)."""
    from indexer.evaluation.metrics import paired_differences

    out = {}
    for mode in MODES:
        rows = [k for k in real_pq if k.endswith("/" + mode) and k in made]
        means = {k: sum(real_pq[k]) / len(real_pq[k]) for k in rows}
        lower = {}  # (a, b) -> lower bound of the interval of a - b
        for b in rows:
            for a, (_, (lo, _hi)) in paired_differences({a: real_pq[a] for a in rows if a != b},
                                                        real_pq[b]).items():
                lower[(a, b)] = lo
        top, bottom = max(rows, key=means.get), min(rows, key=means.get)
        right = wrong = separated = 0
        for a, b in itertools.permutations(rows, 2):
            if lower[(a, b)] > 0:  # people's questions put a above b
                separated += 1
                d = _sign(made[a] - made[b])
                right += d > 0
                wrong += d < 0
        out[mode] = {"tau": kendall_tau_b([means[k] for k in rows], [made[k] for k in rows]),
                     "spread": means[top] - means[bottom], "spread_ok": top != bottom and lower[(top, bottom)] > 0,
                     "separated": separated, "sep_agree": (right - wrong) / separated if separated else None}
    return out


SYNTAX_AWARE = ("auto", "code")  # on source code `auto` cuts by definitions, as `code` does


def leaders(per_question: dict[str, list[float]], targets: list | None = None) -> list[str]:
    """The rows `eval --generate`'s advice calls tied with the best (paired 95% interval of
    best - row reaching 0, questions about one passage resampled together), the best first."""
    from indexer.evaluation.advice import advise

    return advise(per_question, clusters=targets).tied


def syntax_leads(real_pq: dict[str, list[float]], made_pq: dict[str, list[float]],
                 made_targets: list | None = None) -> dict:
    """On a code set: is a syntax-aware strategy among the leaders, by people's questions
    and by made-up ones (the issue's bar: among the made-up leaders whenever among the real)."""
    real, made = leaders(real_pq), leaders(made_pq, made_targets)
    aware = lambda rows: any(r.split("/")[0] in SYNTAX_AWARE for r in rows)  # noqa: E731
    return {"real": aware(real), "made": aware(made), "real_leaders": real, "made_leaders": made}


def real_per_question(name: str, db: Path) -> dict[str, list[float]]:
    """Each row's reciprocal ranks of the set's own questions (cached like `real_scores`)."""
    _, questions = set_paths(name)
    cache = OUT / f"real-pq-{name}.json"
    stamp = _stamp(questions, db)
    if cache.is_file():
        data = json.loads(cache.read_text())
        if data.get("stamp") == stamp:
            return data["per_question"]
    per_question: dict[str, list[float]] = {}
    scores(name, questions, db, per_question)
    OUT.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"stamp": stamp, "per_question": per_question}))
    return per_question


def overlap(folder: Path, questions: Path) -> dict[str, float]:
    """How much of a question its target gives away: the share of its content words (BM25's
    analyzer) found in the target span with its heading path, and the share of its IDF
    mass (over the corpus's sections) found there."""
    import math

    from indexer.evaluation.sets import load_questions, resolve
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
    build([folder], list(strategies_for(name)), settings=Settings.load(db=db, embedder=EMBEDDER))
    return db


def scores(name: str, questions: Path, db: Path, per_question: dict | None = None,
           targets: list | None = None) -> dict[str, float]:
    """MRR@10 of every strategy/mode row on a question file (`indexer.evaluate`); with
    `per_question`, each row's reciprocal ranks are appended to it too, and with `targets`
    each question's passage (`advice.targets_of`: what the advice's intervals resample)."""
    from indexer.evaluation.advice import targets_of

    folder, _ = set_paths(name)
    ev = evaluate(questions, list(strategies_for(name)), MODES, (1, 5), built_with=(EMBEDDER,), corpus=folder, settings=Settings.load(db=db))
    rows = {f"{r.strategy}/{r.mode}": r.per_question("mrr") for r in ev.rows}
    if per_question is not None:
        for key, values in rows.items():
            per_question.setdefault(key, []).extend(values)
    if targets is not None:
        found = targets_of(ev.questions, rows)
        if found is None:
            raise ValueError(f"{questions}: a row left questions out; the advice's passages cannot be paired")
        targets.extend(found)
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


def made_scores(name: str, db: Path, n: int, seed: int, knobs: Knobs, per_question: dict | None = None,
                targets: list | None = None) -> tuple[dict[str, float], dict]:
    folder, _ = set_paths(name)
    key = hashlib.sha256(json.dumps([GENERATOR_VERSION, n, seed, knobs.to_dict()], sort_keys=True).encode()
                         ).hexdigest()[:12]
    path = OUT / f"made-{name}-{key}.jsonl"
    t0 = time.perf_counter()
    made = make_questions(folder, n, seed=seed, knobs=knobs)
    OUT.mkdir(parents=True, exist_ok=True)
    made.write(path)
    info = {"made": len(made.questions), "generate_s": round(time.perf_counter() - t0, 2), "path": str(path)}
    return scores(name, path, db, per_question, targets), info


def real_count(name: str) -> int:
    _, questions = set_paths(name)
    return sum(1 for line in questions.read_text(encoding="utf-8").splitlines() if line.strip())
