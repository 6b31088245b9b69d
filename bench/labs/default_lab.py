"""The default-search lab: capture each collection's embedding candidates once, then score
analyzers, exact-match signals and fusion rules offline, per set × strategy × embedder.

    python -m bench.labs.default_lab capture --sets tr,en --strategies auto,headers --embedders use-m3
    python -m bench.labs.default_lab report            # every capture: each side and the rules

Capture goes through the real pipeline (`indexer.build`, `Index.sides.nearest` for the embedding
side, the stored chunks and their `indexed_text`); the BM25 side is rebuilt in memory from
those texts with the analyzer under test (`BM25Index`, the same code a build runs), and the
exact-match tiers and the fusion come from the library's own functions
(`indexer.retrieval.exact.rank.rank_exact`, `indexer.retrieval.fusion`), so the lab ranks as
`Index.search` does — checked end to end by bench/public.py. Parent-child collections are
scored on their parents, like `indexer eval`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from bench.common import CACHE
from bench.public_sets import DEFAULT_SETS, materialize
from indexer.settings import Settings

LAB = CACHE / "lab"
CAPTURES = LAB / "captures"
DEPTH = 50  # what Index searches each side to (SearchOptions.candidates)
STRATEGIES = ("fixed64", "fixed256", "headers", "blocks", "semantic", "parent", "code", "auto")


def strategies_for(name: str) -> list[str]:
    return [s for s in STRATEGIES if s != "code" or name.startswith("code") or name == "exact"]


def capture_path(set_name: str, strategy: str, embedder: str) -> Path:
    return CAPTURES / f"{set_name}--{strategy}--{embedder}.json.gz"


def capture(set_name: str, strategy: str, embedder: str, force: bool = False) -> Path:
    from indexer.evaluation.run import load_questions
    from indexer.indexing.building import build
    from indexer.retrieval.index import Index

    out = capture_path(set_name, strategy, embedder)
    if out.exists() and not force:
        return out
    folder, qpath = materialize(set_name)
    db = LAB / f"db-{set_name}"
    t0 = time.perf_counter()
    build([folder], [strategy], settings=Settings.load(db=db, embedder=embedder))
    built = time.perf_counter() - t0
    index = Index.open(strategy, built_with=embedder, settings=Settings.load(db=db))
    chunks = {c.id: [c.doc_id, c.start, c.end, c.n_tokens, c.parent_id, c.symbol] for c in index.chunks()}
    texts = {cid: meta.get("indexed_text", "") for cid, meta in
             ((c.id, m) for c, m in index.store.records.scan(index.entry))}
    parent_ids = sorted({c[4] for c in chunks.values() if c[4]})
    parents = {pid: [p.doc_id, p.start, p.end, p.n_tokens] for pid, p in index.fetch_parents(parent_ids).items()}
    t1 = time.perf_counter()
    nearest = index.snapshot().sides.nearest
    dense = {q.id: [[cid, round(s, 6)] for cid, s in nearest(q.question, DEPTH)] for q in load_questions(qpath)}
    synthetic = LAB / "synthetic" / f"{set_name}.jsonl"  # made-up questions (`indexer questions`), for calibration
    dense_syn = ({q.id: [[cid, round(s, 6)] for cid, s in nearest(q.question, DEPTH)]
                  for q in load_questions(synthetic)} if synthetic.exists() else {})
    CAPTURES.mkdir(parents=True, exist_ok=True)
    data = {"set": set_name, "strategy": strategy, "embedder": embedder, "analyzer": index.entry.extra["analyzer"],
            "chunks": chunks, "texts": texts, "parents": parents, "dense": dense, "dense_syn": dense_syn,
            "build_s": round(built, 1), "search_s": round(time.perf_counter() - t1, 1)}
    with gzip.open(out, "wt", encoding="utf-8") as fh:
        json.dump(data, fh)
    print(f"captured {set_name} {strategy} {embedder}: {len(dense)} questions, {len(chunks)} chunks, "
          f"build {built:.0f}s, dense {data['search_s']:.0f}s", flush=True)
    return out


# -- offline -----------------------------------------------------------------------------
@dataclass
class Query:
    id: str
    text: str
    question: object  # indexer.evaluation.sets.Question (its `hits` rule)
    dense: list[tuple[str, float]]
    sparse: list[tuple[str, float]] = field(default_factory=list)
    coverage: float = 0.0
    extra: list[str] = field(default_factory=list)  # ids the exact-match signal adds
    tier: dict[str, int] = field(default_factory=dict)


class Collection:
    """One capture, with its BM25 side rebuilt under an analyzer."""

    def __init__(self, path: Path, analyzer_overrides: dict | None = None) -> None:
        from indexer.evaluation.run import load_questions, resolve
        from indexer.loaders import load_documents
        from indexer.retrieval.bm25.index import BM25Index
        from indexer.retrieval.exact.index import ExactIndex, defined_in
        from indexer.text.analyzer import Analyzer

        with gzip.open(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
        self.set, self.strategy, self.embedder = data["set"], data["strategy"], data["embedder"]
        self.chunks, self.parents = data["chunks"], data["parents"]
        base = {k: v for k, v in data["analyzer"].items() if k in ("lang", "fold", "stem", "stopwords")}
        self.analyzer = Analyzer(**{**base, **(analyzer_overrides or {})})
        ids = list(data["texts"])
        self.bm25 = BM25Index.build(ids, [data["texts"][i] for i in ids], self.analyzer, engine="bm25s")
        self.exact = ExactIndex()
        for cid, c in self.chunks.items():  # what a build records (`exact.defined_in`)
            chunk = SimpleNamespace(id=cid, symbol=c[5], doc_id=c[0], text=data["texts"][cid], language="")
            for args in defined_in(chunk, self.analyzer):
                self.exact.add(*args)
        self.exact.name_documents({c[0] for c in self.chunks.values()}, self.analyzer)
        self.by_doc: dict[str, list[str]] = {}
        for cid, c in sorted(self.chunks.items(), key=lambda kv: (kv[1][0], kv[1][1])):
            self.by_doc.setdefault(c[0], []).append(cid)
        folder, qpath = materialize(self.set)
        questions = load_questions(qpath)
        _, docs = load_documents([folder])
        resolve(questions, {d.doc_id: d for d in docs})
        self.queries = [Query(q.id, q.question, q, [tuple(x) for x in data["dense"][q.id]]) for q in questions]
        self.avg_tokens = sum(c[3] for c in self.chunks.values()) / max(len(self.chunks), 1)
        self.prepare()

    @property
    def key(self) -> str:
        return f"{self.set}/{self.strategy}/{self.embedder}"

    def prepare(self) -> None:
        from indexer.retrieval.exact.rank import rank_exact

        bm25, live = self.bm25, set(self.bm25.ids)
        for q in self.queries:
            q.sparse = [(bm25.ids[p], s) for p, s in bm25.search(q.text, DEPTH)]
            q.coverage = bm25.coverage(q.text, [bm25.position(q.sparse[0][0])])[0] if q.sparse else 0.0
            ids = list(dict.fromkeys([c for c, _ in q.sparse] + [c for c, _ in q.dense[:DEPTH]]))
            q.extra, q.tier = rank_exact(
                q.text, self.analyzer, ids, self.exact,
                lambda terms, xs: bm25.holds(terms, [bm25.position(x) for x in xs]),
                lambda xs: {x: self.chunks[x][0] for x in xs if x in self.chunks},
                lambda doc: self.by_doc.get(doc, [])[:3], live)

    def first_hit(self, q: Query, ranked: list[str]) -> int | None:
        """Rank (1-based, within 10) of the first hit, on parents for parent-child collections."""
        if self.parents:
            seen, out = set(), []
            for cid in ranked:
                pid = self.chunks.get(cid, [None] * 5)[4]
                if pid and pid not in seen and pid in self.parents:
                    seen.add(pid)
                    out.append(self.parents[pid])
            spans = out
        else:
            spans = [self.chunks[c] for c in ranked if c in self.chunks]
        for i, (doc, start, end, *_rest) in enumerate(spans[:10], start=1):
            if q.question.hits(doc, start, end):
                return i
        return None


def ordered(scores: dict[str, float], chunks: dict, tier: dict[str, int] | None = None) -> list[str]:
    """`ranking.break_ties`'s order: tier, score, then document and position."""
    tier = tier or {}

    def key(c):
        doc, start = chunks[c][:2] if c in chunks else ("", 0)
        return (-tier.get(c, 0), -round(scores[c], 9), doc, start, c)

    return sorted(scores, key=key)


def fuse(q: Query, alpha: float | None, chunks: dict, exact: bool = True) -> list[str]:
    """Min-max weighted fusion of the two sides (alpha: the embedding share; None = BM25
    alone, 1.0 = embedding alone), then the exact-match tiers (not for the embedding alone)."""
    from indexer.retrieval.fusion import weighted

    if alpha is None:
        scores = dict(q.sparse)
    elif alpha >= 1.0 and not exact:
        scores = dict(q.dense[:DEPTH])
    else:
        scores = dict(weighted(dict(q.dense[:DEPTH]), dict(q.sparse), alpha))
    tier = q.tier if exact and (alpha is None or alpha < 1.0) else {}
    if tier:
        for cid in q.extra:
            scores.setdefault(cid, 0.0)
    return ordered(scores, chunks, tier)


def ranks(col: Collection, rule) -> list[int | None]:
    return [col.first_hit(q, rule(q)) for q in col.queries]


def mrr(rs: list[int | None]) -> float:
    return sum(1.0 / r for r in rs if r) / max(len(rs), 1)


def r1(rs: list[int | None]) -> int:
    return sum(1 for r in rs if r == 1)


def load_all(pattern: str = "*", overrides: dict | None = None) -> list[Collection]:
    return [Collection(p, overrides) for p in sorted(CAPTURES.glob(f"{pattern}.json.gz"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("--sets", default=",".join(DEFAULT_SETS))
    cap.add_argument("--strategies", default="")
    cap.add_argument("--embedders", default="use-m3")
    cap.add_argument("--force", action="store_true")
    rep = sub.add_parser("report")
    rep.add_argument("--pattern", default="*")
    args = parser.parse_args()
    if args.cmd == "capture":
        for emb in args.embedders.split(","):
            for name in args.sets.split(","):
                for strategy in (args.strategies.split(",") if args.strategies else strategies_for(name)):
                    capture(name, strategy, emb, args.force)
    else:
        from indexer.retrieval.fusion import adaptive_alpha, adaptive_defaults

        for col in load_all(args.pattern):
            (a_lo, a_hi), cov = adaptive_defaults(col.embedder)
            ch = col.chunks
            sides = {"emb": ranks(col, lambda q: fuse(q, 1.0, ch, exact=False)),
                     "bm25-": ranks(col, lambda q: fuse(q, None, ch, exact=False)),
                     "bm25": ranks(col, lambda q: fuse(q, None, ch)),
                     "dflt-": ranks(col, lambda q: fuse(q, adaptive_alpha(q.coverage, (a_lo, a_hi), cov), ch, False)),
                     "dflt": ranks(col, lambda q: fuse(q, adaptive_alpha(q.coverage, (a_lo, a_hi), cov), ch))}
            print(f"{col.key:38} " + "  ".join(f"{k} {mrr(v):.3f} {r1(v):4d}" for k, v in sides.items()), flush=True)


if __name__ == "__main__":
    main()
