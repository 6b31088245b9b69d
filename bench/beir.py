"""Relevance labels from elsewhere, end to end: a BEIR-layout set made from XQuAD, imported
with `indexer import-beir`, built and evaluated with graded whole-document targets.

    python -m bench.beir                           # xquad-tr and xquad-en, use-m3 (~5 min cold)
    python -m bench.beir --sets xquad-en --embedder e5-small --force
    python -m bench.beir --smoke       # the smoke documents in XQuAD's layout, not XQuAD (numbers mean nothing)

Nothing BEIR hosts can be downloaded here, and no package on the registries reached here
ships a real BEIR or TREC test collection with human judgements (searched: pypi.tsv and
npm.tsv for beir, cranfield, nfcorpus, scifact, fiqa, trec-covid, vaswani, cisi, cacm,
medline, qrels, test collection, relevance judgements; the three retrieval-benchmark
wheels that matched, hydrag-benchmark, rag-ablations and szl-retrieval-bench, hold code
only; `beir` and `ir-datasets` download their data at run time). So the set is made from
XQuAD (CC BY-SA 4.0; files from --xquad DIR, env INDEXER_XQUAD_DIR, else bench/.cache/xquad),
written out in BEIR's layout:

- corpus.jsonl.gz: one record per paragraph (240), `_id` = `<article slug>/p<n>` (a slash on
  purpose: file names must stay safe), `title` = the article's title in that language,
  `text` = the paragraph, cleaned as bench/public_sets.py cleans it;
- queries.jsonl: the 1,190 questions (`_id` = XQuAD's question id);
- qrels/test.tsv: grade 2 for the paragraph the question was written from; grade 1 for every
  other paragraph of the same article that contains the question's first answer as whole
  words (case-sensitive, answers of at least 4 characters): a paragraph that states the
  answer again is relevant, but less than the one the question was asked about. No other
  paragraph is judged (BEIR's convention: unjudged = not relevant).

Then `import_beir` (the library behind `indexer import-beir`) writes 240 Markdown documents
and the question set into bench/.cache/beir/<set>/docs, `indexer.build` builds `auto` and
`headers` (use-m3 unless --embedder), and `indexer.evaluate` scores embedding, bm25 and the
default hybrid search. Printed per set × strategy × mode: nDCG@10 with its 95% bootstrap
interval, recall@1/5/10 (questions with a relevant document in the top k) and MRR@10.
With pytrec_eval installed (`pip install ir-measures`), every question's nDCG@10 is also
computed by trec_eval's ndcg_cut.10 from the same ranked chunks, and the largest
difference is printed. Data stays under bench/.cache (git-ignored), never committed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

from bench.common import (
    CACHE,
    XQUAD_SOURCE,
    SetError,
    collapse,
    machine,
    parse_args,
    save_json,
    sha256_file,
    smoke_option,
    table,
    xquad_dir,
    xquad_option,
)
from bench.xquad_set import XQUAD_SHA256, clean_with_map, smoke_xquad, title_slug
from indexer.evaluation import NDCG_METRIC, evaluate
from indexer.evaluation.beir import import_beir
from indexer.indexing.building import build
from indexer.retrieval import Index
from indexer.settings import Settings

HOME = CACHE / "beir"
MODES = ("embedding", "bm25", "hybrid")
STRATEGIES = ("auto", "headers")
KS = (1, 5, 10)
VERSION = "beir-xquad-1"  # bump when the BEIR files written change
MIN_ANSWER = 4  # characters an answer needs to mark another paragraph relevant


def write_xquad_beir(lang: str, out: Path, smoke: bool = False) -> dict:
    """XQuAD in BEIR's layout (see the module's docstring for how grades are made); with
    `smoke`, the smoke documents in XQuAD's layout (xquad_set.smoke_xquad) instead."""
    folder = smoke_xquad(out.parent / "xquad") if smoke else xquad_dir()
    paths = {x: folder / f"xquad.{x}.json" for x in ("en", lang)}
    for x, path in paths.items():
        if not smoke and (not path.is_file() or sha256_file(path) != XQUAD_SHA256[x]):
            raise SetError(f"{path}: missing or not the pinned copy; get {XQUAD_SOURCE} and pass --xquad DIR "
                           "(or set INDEXER_XQUAD_DIR)")
    english = json.loads(paths["en"].read_text(encoding="utf-8"))["data"]
    data = json.loads(paths[lang].read_text(encoding="utf-8"))["data"]
    corpus, queries, qrels, stats = [], [], [], Counter()
    for art_en, art in zip(english, data):
        slug = title_slug(art_en["title"])
        paragraphs = [(f"{slug}/p{i}", clean_with_map(p["context"])[0]) for i, p in enumerate(art["paragraphs"])]
        corpus += [{"_id": pid, "title": art["title"].replace("_", " "), "text": text} for pid, text in paragraphs]
        for (pid, context), para in zip(paragraphs, art["paragraphs"]):
            for qa in para["qas"]:
                answer = collapse(qa["answers"][0]["text"])
                queries.append({"_id": qa["id"], "text": collapse(qa["question"])})
                qrels.append((qa["id"], pid, 2))
                stats["grade 2"] += 1
                if len(answer) < MIN_ANSWER:
                    continue
                pattern = re.compile(rf"(?<!\w){re.escape(answer)}(?!\w)")
                for other, text in paragraphs:
                    if other != pid and pattern.search(text):
                        qrels.append((qa["id"], other, 1))
                        stats["grade 1"] += 1
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "corpus.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus)
    (out / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in queries),
                                       encoding="utf-8")
    (out / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels), encoding="utf-8")
    shutil.copyfile(folder / "CC-BY-SA4.0.txt", out / "LICENSE-CC-BY-SA-4.0.txt")
    (out / "NOTICE.md").write_text(
        f"XQuAD ({lang}), CC BY-SA 4.0, written in BEIR's layout by bench/beir.py ({VERSION}): paragraphs as "
        "documents, questions as queries, grade 2 for the question's paragraph, grade 1 for other paragraphs of the "
        f"same article containing its first answer as whole words (answers of {MIN_ANSWER}+ characters). "
        "Not for redistribution from this repository.\n", encoding="utf-8")
    return {"documents": len(corpus), "queries": len(queries), **stats}


def materialize(name: str, force: bool) -> tuple[Path, Path, dict]:
    """bench/.cache/beir/<name>/: src/ (the BEIR folder) and docs/ (what import-beir wrote).
    `smoke-tr` is made of the smoke documents."""
    home = HOME / name
    stamp = home / "STAMP.json"
    if not force and stamp.is_file() and json.loads(stamp.read_text()).get("version") == VERSION:
        return home / "docs", home / "docs" / "questions.jsonl", json.loads(stamp.read_text())
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    made = write_xquad_beir(name.split("-", 1)[1], home / "src", smoke=name.startswith("smoke"))
    result = import_beir(home / "src", home / "docs")
    info = {"version": VERSION, "made": made, "import": result.to_dict()}
    stamp.write_text(json.dumps(info, indent=1, ensure_ascii=False), encoding="utf-8")
    return home / "docs", home / "docs" / "questions.jsonl", info


def reference_ndcg(ev, db: Path, embedder: str) -> tuple[float, int, int] | None:
    """The largest |ours - trec_eval's ndcg_cut.10| over every row and question, how many
    were compared and how many of them lie strictly between 0 and 1 (the ones a wrong gain,
    discount or ideal would move); None without pytrec_eval. A repeated chunk of a document already counted
    stands in the run as a non-relevant item of its own (the document's rank is its first
    chunk's)."""
    try:
        import pytrec_eval
    except ImportError:
        return None
    qrels = {q.id: dict(q.documents) for q in ev.questions}
    worst, compared, between = 0.0, 0, 0
    for row in ev.rows:
        where = {c.id: c.doc_id for c in Index.open(row.strategy, built_with=embedder, settings=Settings.load(db=db)).chunks()}
        run = {}
        for r in row.results:
            run[r.id], seen = {}, set()
            for rank, cid in enumerate(r.retrieved[:10], start=1):
                doc = where[cid]
                run[r.id][doc if doc not in seen else f"{doc}#again{rank}"] = 100.0 - rank
                seen.add(doc)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        for r in row.results:
            worst = max(worst, abs(r.ndcg - theirs.get(r.id, {}).get("ndcg_cut_10", 0.0)))
            compared += 1
            between += 0 < r.ndcg < 1
    return worst, compared, between


def measure(name: str, embedder: str, force: bool) -> dict:
    docs, questions, info = materialize(name, force)
    db = HOME / name / f"db-{embedder.replace(':', '_')}"
    t0 = time.perf_counter()
    build([docs], list(STRATEGIES), settings=Settings.load(db=db, embedder=embedder))
    built = time.perf_counter() - t0
    ev = evaluate(questions, list(STRATEGIES), MODES, KS, built_with=(embedder,), settings=Settings.load(db=db))
    rows = []
    for row in ev.rows:
        lo, hi = row.interval(NDCG_METRIC)
        rows.append({"strategy": row.strategy, "mode": row.mode, "chunks": row.chunks, NDCG_METRIC: row.ndcg,
                     "ci95": (lo, hi), "mrr@10": row.mrr, **{f"recall@{k}": row.recall(k) for k in KS},
                     "ctx_tokens@5": row.ctx_tokens})
    return {"set": name, "embedder": embedder, "questions": len(ev.questions), "build_s": built, "info": info,
            "rows": rows, "reference": reference_ndcg(ev, db, embedder)}


def report(results: list[dict]) -> str:
    parts = []
    for r in results:
        imp, made = r["info"]["import"], r["info"]["made"]
        skipped = "; ".join(f"{s['count']} {s['reason']}" for s in imp["skipped"]) or "nothing"
        parts.append(f"{r['set']}: {made['documents']} paragraphs, {r['questions']} questions, "
                     f"{made['grade 2']} grade-2 and {made.get('grade 1', 0)} grade-1 judgements; import skipped "
                     f"{skipped}; build {r['build_s']:.0f}s ({r['embedder']})")
    n = {r["set"]: r["questions"] for r in results}
    rows = [[r["set"], x["strategy"], "default" if x["mode"] == "hybrid" else x["mode"], x["chunks"],
             f"{x[NDCG_METRIC]:.3f}", f"{x['ci95'][0]:.3f}-{x['ci95'][1]:.3f}",
             *(f"{x[f'recall@{k}']}/{n[r['set']]}" for k in KS), f"{x['mrr@10']:.3f}", f"{x['ctx_tokens@5']:.0f}"]
            for r in results for x in r["rows"]]
    parts.append("\n" + table(["set", "strategy", "search", "chunks", "nDCG@10", "nDCG@10 95%",
                               *(f"recall@{k}" for k in KS), "MRR@10", "ctxTok@5"], rows))
    for r in results:
        ref = r["reference"]
        parts.append(f"\n{r['set']}: " + (
            "pytrec_eval not installed (pip install ir-measures): no reference check" if ref is None else
            f"nDCG@10 against trec_eval's ndcg_cut.10 (pytrec_eval) on the same ranked chunks: largest difference "
            f"{ref[0]:.1e} over {ref[1]} question-rows ({ref[2]} of them strictly between 0 and 1)"))
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="xquad-tr,xquad-en")
    parser.add_argument("--embedder", default="use-m3")
    parser.add_argument("--force", action="store_true", help="write the BEIR folders and import them again")
    parser.add_argument("--json", type=Path, default=None)
    xquad_option(parser)
    smoke_option(parser)
    args = parse_args(parser)
    if args.smoke:
        args.sets, args.force = "smoke-tr", True
    print(f"BEIR-layout sets through import-beir, build and eval; {time.strftime('%Y-%m-%d')}, {machine()}\n",
          flush=True)
    results = []
    for name in args.sets.split(","):
        t0 = time.perf_counter()
        results.append(measure(name, args.embedder, args.force))
        print(f"  {name}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    print(report(results))
    save_json(args.json, results)


if __name__ == "__main__":
    main()
