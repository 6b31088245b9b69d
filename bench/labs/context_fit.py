"""Context lab: fit the unit scorer of answer-sized context (indexer/retrieval/context/score.py).

    python -m bench.labs.context_fit capture --sets tr,en,xquad-tr,xquad-en
    python -m bench.labs.context_fit fit --sets tr,en,xquad-tr,xquad-en
    python -m bench.labs.context_fit ceiling --sets tr,en [--embedder e5-small]

`capture` builds each set with `auto` (use-m3) through the real pipeline and keeps, per
question, its candidate units (the search's top CANDIDATES chunks, cut by their unit
maps), their feature matrix and which units overlap the answer. `fit` fits the linear
weights by a listwise softmax (the answer units against the rest) twice: with unit
vectors (WEIGHTS) and without (LEXICAL); each set is scored with the weights fitted on
the others (leave one set out), then the weights of all sets are printed to be copied
into context_score.py. The packer's figures at budgets come from bench/context.py.

`ceiling` asks how far any weighting of these features can go: the real packer
(`context.pack.pack`, filling the budget) and scorer (`score_context`) over the captured
units, with the shipped weights, with weights fitted on the set itself (in-sample: the most
favourable case for the fit), and with each feature alone. With
`--embedder e5-small` the capture and the build use that embedder instead of use-m3.
"""

from __future__ import annotations

import argparse
import math
import pickle
from pathlib import Path

import numpy as np

from bench.common import CACHE
from bench.public_sets import materialize

LAB = CACHE / "lab"
LEXICAL_COLUMNS = (0, 3, 4, 5, 6, 7)
N_FEATURES = 9  # without the unit vectors' columns


def capture(name: str, strategy: str = "auto", embedder: str = "use-m3") -> Path:
    from indexer.evaluation.sets import load_questions, resolve
    from indexer.indexing.building import build
    from indexer.loaders import load_documents
    from indexer.retrieval import Index, SearchOptions
    from indexer.retrieval.context.answer import CANDIDATES, unit_cosines
    from indexer.retrieval.context.score import features, query_idf
    from indexer.retrieval.context.units import candidate_units
    from indexer.settings import Settings
    from indexer.text.tokens import get_tokenizer

    folder, questions = materialize(name)
    db = LAB / f"ctx-{name}{_suffix(embedder)}"
    settings = Settings.load(db=db, embedder=embedder)
    build([folder], [strategy], settings=settings)
    docs = {d.doc_id: d for d in load_documents([folder])[1]}
    qs = [q for q in load_questions(questions) if True]
    resolve(qs, docs)
    index = Index.open(strategy, settings=settings)
    tokenizer = get_tokenizer()
    rows = []
    for q in qs:
        spans = answer_spans(q)
        if not spans:
            continue
        hits = index.search(q.question, SearchOptions(k=CANDIDATES))
        gaps: dict = {}
        units = candidate_units(hits, tokenizer, gaps)
        if not units:
            continue
        snapshot = index.snapshot()
        measured = unit_cosines(snapshot, q.question, units)  # every unit: embedded now where it lacks one
        cos, vec = measured.values, measured.vectors
        x = features(units, query_idf(snapshot.parts.bm25, q.question), snapshot.parts.unit_terms, cos, vec,
                     snapshot.sides.query_vector(q.question))
        y = np.array([any(u.doc_id == d and u.start < e and s < u.end for d, s, e in spans) for u in units], float)
        x_lex = features(units, query_idf(snapshot.parts.bm25, q.question), snapshot.parts.unit_terms, None)
        rows.append({"id": q.id, "x": x, "x_lex": x_lex, "y": y, "units": units, "gaps": gaps, "spans": spans})
    out = LAB / f"ctx-{name}-{strategy}{_suffix(embedder)}.pkl"
    out.write_bytes(pickle.dumps(rows))
    print(f"{name}: {len(rows)} questions captured -> {out}")
    return out


def answer_spans(q) -> list[tuple[str, int, int]]:
    spans = getattr(q, "answer_spans", None) or ([q.answer_span] if q.answer_span else [])
    return [(q.doc_id, s, e) for s, e in spans]


def _suffix(embedder: str) -> str:
    return "" if embedder == "use-m3" else f"-{embedder}"


def load(name: str, strategy: str = "auto", embedder: str = "use-m3") -> list[dict]:
    return pickle.loads((LAB / f"ctx-{name}-{strategy}{_suffix(embedder)}.pkl").read_bytes())


def ceiling(name: str, embedder: str, budgets: tuple[int, ...] = (200, 400, 800)) -> list[list]:
    """Strict answers of the real packer (filling the budget) on the captured units, under
    the shipped weights, weights fitted on this set itself, and each feature alone."""
    from indexer.evaluation.context_eval import score_context
    from indexer.evaluation.scoring import TokenSpans
    from indexer.loaders import load_documents
    from indexer.retrieval.context.pack import pack
    from indexer.retrieval.context.score import FEATURES, WEIGHTS
    from indexer.text.tokens import get_tokenizer

    rows = [r for r in load(name, embedder=embedder) if r["y"].sum()]
    folder, _ = materialize(name)
    counter = TokenSpans({d.doc_id: d for d in load_documents([folder])[1]})
    tokenizer = get_tokenizer()
    own = fit(rows, "x", steps=600)
    scorers = {"shipped weights": lambda x: x @ np.asarray(WEIGHTS),
               "fitted on this set": lambda x: x @ own}
    scorers.update({f"{f} alone": (lambda x, i=i: x[:, i]) for i, f in enumerate(FEATURES)})
    out = []
    for label, score in scorers.items():
        strict = []
        for budget in budgets:
            held = 0
            for r in rows:
                s = score(r["x"])
                spans, _ = pack(r["units"], s - s.min(), budget, tokenizer, math.inf, r["gaps"])
                handed = [(sp.doc_id, sp.start, sp.end) for sp in spans]
                held += score_context(r["spans"], handed, 0, counter).strict
            strict.append(f"{held}/{len(rows)}")
        out.append([name, embedder, label, *strict])
    return out


def fit(rows: list[dict], key: str, columns=None, l2: float = 1e-3, steps: int = 400) -> np.ndarray:
    """Listwise softmax: the answer units' share of the probability, maximised (Adam)."""
    data = [(r[key][:, columns] if columns else r[key], r["y"]) for r in rows if r["y"].sum()]
    w = np.zeros(data[0][0].shape[1])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for step in range(1, steps + 1):
        g = l2 * w
        for x, y in data:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            g += x.T @ (p - y / y.sum()) / len(data)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= 0.05 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return w


def first_answer_ranks(rows: list[dict], key: str, w: np.ndarray, columns=None) -> np.ndarray:
    out = []
    for r in rows:
        x = r[key][:, columns] if columns else r[key]
        order = np.argsort(-(x @ w), kind="stable")
        hit = np.where(r["y"][order] > 0)[0]
        out.append(hit[0] if len(hit) else 10**6)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("capture", "fit", "ceiling"))
    parser.add_argument("--sets", default="tr,en,xquad-tr,xquad-en")
    parser.add_argument("--embedder", default="use-m3", help="capture and ceiling with this embedder")
    args = parser.parse_args()
    sets = args.sets.split(",")
    if args.what == "capture":
        for name in sets:
            capture(name, embedder=args.embedder)
        return
    if args.what == "ceiling":
        from bench.common import table

        rows = []
        for name in sets:
            capture(name, embedder=args.embedder)
            rows += ceiling(name, args.embedder)
        print(table(["set", "embedder", "unit scores", "strict@200", "strict@400", "strict@800"], rows))
        return
    data = {name: load(name) for name in sets}
    for key, columns, label in (("x", None, "WEIGHTS"), ("x_lex", list(LEXICAL_COLUMNS), "LEXICAL")):
        print(f"\n{label}: first answer unit within the top k, each set with the others' weights")
        for held in sets:
            w = fit([r for s in sets if s != held for r in data[s]], key, columns)
            ranks = first_answer_ranks(data[held], key, w, columns)
            print(f"  {held:9} " + " ".join(f"top{k} {np.mean(ranks < k):.3f}" for k in (1, 3, 10)))
        w = fit([r for s in sets for r in data[s]], key, columns)
        full = np.zeros(N_FEATURES)
        full[columns or slice(None)] = w
        print(f"{label} = ({', '.join(f'{v:.2f}' for v in full)})")


if __name__ == "__main__":
    main()
