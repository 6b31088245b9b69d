"""Retrieval question sets nobody on this project wrote, in the project's question-set
format, plus the three bundled sets, behind one name each.

    python -m bench.public_sets               # materialise all six, print a summary table
    python -m bench.public_sets --check       # ... and run build + evaluate on each
    python -m bench.public_sets --sets xquad-tr,code-pypi --check --force
    python -m bench.public_sets --smoke       # the two-document smoke set, materialised and checked

    from bench.public_sets import SETS, materialize
    folder, questions = materialize("xquad-tr")

Sets (in this order):
- `tr`, `en`, `code`: the bundled sets (corpus/, corpus/en, corpus/code), listed, not copied.
- `xquad-tr`, `xquad-en`: XQuAD (CC BY-SA 4.0; its files are read from --xquad DIR, env
  INDEXER_XQUAD_DIR, else bench/.cache/xquad): 48 Wikipedia
  articles as Markdown documents (`# Title`, then the 5 paragraphs), 1,190 questions per
  language; the same doc_ids and question ids in both languages. Target span = the
  question's paragraph, answer = its first answer text.
- `code-pypi`: more-itertools (PyPI, Python) and lodash.js (npm, JavaScript), with every
  function's documentation removed from the source; the question is the first paragraph
  of a public function's removed docstring / JSDoc, the target span the whole function
  definition, the answer its first signature line.
- `scipy-docs`, `man-pages` (bench/manual_sets.py): long scientific and technical English
  whose labels come from the source's own structure, not from relevance judgements: SciPy's
  reference pages (one per documented function of stats, special, signal, integrate,
  interpolate, optimize; PyPI wheel) and section 2 of the Linux man-pages (Debian's
  manpages-dev, rendered by groff); the question is the page's own summary line (the
  docstring's first line, the NAME line's description), removed from the page; the target
  is the whole page.

Generated data lives in bench/.cache/sets/<name>/ (git-ignored): `corpus/` (what gets
indexed), `questions.jsonl`, licence and NOTICE files beside `corpus/`, and `STAMP.json`;
downloads in bench/.cache/downloads/. A set is rebuilt only when its builder version
(stamp) changes or with --force; a build goes to a temporary folder and replaces the old
one when it is complete and validated.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import exact_set, library_set
from bench.code_set import LODASH, MORE_ITERTOOLS, build_code_pypi
from bench.common import (
    CORPUS,
    SETS_DIR,
    SMOKE_DOCS,
    machine,
    parse_args,
    save_json,
    smoke_corpus,
    smoke_option,
    table,
    word_count,
    write_text,
    xquad_option,
)
from bench.manual_sets import MANPAGES, SCIPY, build_man_pages, build_scipy_docs
from bench.xquad_set import build_xquad
from indexer.settings import Settings


@dataclass(frozen=True)
class PublicSet:
    name: str
    description: str
    origin: str  # where the documents and questions come from, and their licence
    version: str = ""  # builder version, the stamp; bump it when a builder's output changes
    builder: Callable[[Path], dict] | None = None  # writes corpus/ + questions.jsonl into a folder
    folder: Path | None = None  # bundled sets: the corpus folder ...
    questions: Path | None = None  # ... and its question file

    @property
    def bundled(self) -> bool:
        return self.builder is None

    @property
    def home(self) -> Path:
        return SETS_DIR / self.name


def _stamp(s: PublicSet) -> dict:
    return {"set": s.name, "version": s.version}


def materialize(name: str, force: bool = False) -> tuple[Path, Path]:
    """(corpus folder, questions file) of a set, building it first if it is not there
    (or its stamp is from another builder version, or `force`)."""
    if name not in SETS:
        raise KeyError(f"unknown set {name!r}; known: {', '.join(SETS)}")
    s = SETS[name]
    if s.bundled:
        return s.folder, s.questions
    home, stamp = s.home, s.home / "STAMP.json"
    corpus, questions = home / "corpus", home / "questions.jsonl"
    if not force and stamp.is_file() and questions.is_file() and corpus.is_dir():
        try:
            if {k: v for k, v in json.loads(stamp.read_text()).items() if k in ("set", "version")} == _stamp(s):
                return corpus, questions
        except ValueError:
            pass
    SETS_DIR.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=SETS_DIR))
    try:
        t0 = time.perf_counter()
        report = s.builder(tmp)
        write_text(tmp / "STAMP.json", json.dumps({**_stamp(s), "built": time.strftime("%Y-%m-%d %H:%M:%S"),
                                               "seconds": round(time.perf_counter() - t0, 2), "report": report},
                                              indent=1, ensure_ascii=False) + "\n")
        old = None
        if home.exists():
            old = SETS_DIR / f".{name}.old-{os.getpid()}"
            home.rename(old)
        tmp.rename(home)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return corpus, questions


def build_smoke(out: Path) -> dict:
    """The smoke set: SMOKE_DOCS in out/corpus, their questions in out/questions.jsonl."""
    corpus = smoke_corpus(out / "corpus")
    (corpus / "questions.jsonl").rename(out / "questions.jsonl")
    return {"documents": list(SMOKE_DOCS)}


def build_report(name: str) -> dict:
    """What the builder recorded in the stamp (skip counts, cleaning notes); {} for bundled sets."""
    s = SETS[name]
    if s.bundled or not (s.home / "STAMP.json").is_file():
        return {}
    return json.loads((s.home / "STAMP.json").read_text(encoding="utf-8")).get("report", {})


SETS: dict[str, PublicSet] = {
    "tr": PublicSet("tr", "bundled Turkish policy documents", "this project (corpus/)",
                    folder=CORPUS, questions=CORPUS / "questions.jsonl"),
    "en": PublicSet("en", "bundled English SaaS documentation", "this project (corpus/en)",
                    folder=CORPUS / "en", questions=CORPUS / "en" / "questions.jsonl"),
    "code": PublicSet("code", "bundled sample repository, 6 languages", "this project (corpus/code)",
                      folder=CORPUS / "code", questions=CORPUS / "code" / "questions.jsonl"),
    "xquad-tr": PublicSet("xquad-tr", "XQuAD Turkish: 48 Wikipedia articles, 1,190 questions",
                          "XQuAD (google-deepmind/xquad), CC BY-SA 4.0", "xquad-1",
                          lambda out: build_xquad("tr", out)),
    "xquad-en": PublicSet("xquad-en", "XQuAD English: the same articles and questions",
                          "XQuAD (google-deepmind/xquad), CC BY-SA 4.0", "xquad-1",
                          lambda out: build_xquad("en", out)),
    "code-pypi": PublicSet("code-pypi", f"more-itertools {MORE_ITERTOOLS} + lodash.js {LODASH}, docs removed",
                           "PyPI more-itertools, npm lodash; MIT", f"code-1-mi{MORE_ITERTOOLS}-lodash{LODASH}",
                           build_code_pypi),
    "code-lib2": PublicSet("code-lib2", "toolz + ramda with toolz's tests, docs removed",
                           "PyPI toolz (BSD), npm ramda (MIT)", "lib2-1-toolz1.2.0-ramda0.32.0",
                           library_set.build),
    "exact": PublicSet("exact", "lookups: codes, symbols, numbers, file names, phrases",
                       "bundled corpora + PyPI pycodestyle (Expat); questions written here", "exact-1-pycodestyle2.15.0",
                       exact_set.build),
    "scipy-docs": PublicSet("scipy-docs", f"SciPy {SCIPY} reference pages (stats, special, signal, ...); "
                            "question = the docstring's own summary line, removed (structure, not judgements)",
                            "PyPI scipy wheel; BSD-3-Clause", f"scipy-docs-1-{SCIPY}", build_scipy_docs),
    "man-pages": PublicSet("man-pages", "Linux man-pages section 2 (system calls); question = the NAME line's "
                           "description, removed (structure, not judgements)",
                           f"Debian manpages-dev {MANPAGES}; man-pages licences (verbatim, GPL, BSD)",
                           f"man-pages-1-{MANPAGES}", build_man_pages),
    "smoke": PublicSet("smoke", "two bundled Turkish documents and their questions (what --smoke runs use)",
                       "this project (corpus/)", "smoke-1", build_smoke),
}
# what a run measures unless told: every set but the smoke set
DEFAULT_SETS = tuple(name for name in SETS if name != "smoke")


# ---------------------------------------------------------------------------------------
# command line


def summary(name: str) -> dict:
    from indexer.evaluation.run import load_questions
    from indexer.loaders import load_documents

    folder, qpath = materialize(name)
    _, docs = load_documents([folder])
    docs = list(docs)
    questions = load_questions(qpath)
    return {
        "set": name, "documents": len(docs), "questions": len(questions),
        "avg_words": sum(word_count(q.question) for q in questions) / len(questions),
        "mb": sum(len(d.text.encode("utf-8")) for d in docs) / 1024 / 1024,
    }


def check(name: str, ks=(1, 5, 10)) -> dict:
    """Build the set with `auto` and the default embedder into a temporary database and
    evaluate every mode."""
    from indexer.evaluation.run import evaluate
    from indexer.indexing.building import build

    folder, qpath = materialize(name)
    db = Path(tempfile.mkdtemp(prefix=f"indexer-public-{name}-"))
    try:
        t0 = time.perf_counter()
        reports = build([folder], ["auto"], settings=Settings.load(db=db))
        build_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        ev = evaluate(qpath, ["auto"], ("embedding", "bm25", "hybrid"), ks, corpus=folder, settings=Settings.load(db=db))
        eval_s = time.perf_counter() - t1
    finally:
        shutil.rmtree(db, ignore_errors=True)
    r = reports[0]
    return {
        "set": name, "n": len(ev.questions), "chunks": r.chunks, "avg_tokens": r.avg_tokens,
        "max_tokens": r.max_tokens, "analyzer": r.analyzer, "build_s": build_s, "eval_s": eval_s,
        "skipped": [str(x) for x in r.skipped], "warnings": [str(x) for x in r.warnings],
        "unsupported": dict(r.unsupported),
        "rows": [{"mode": row.mode, **{f"recall@{k}": row.recall(k) for k in ks},
                  "strict@1": row.recall(1, strict=True), "strict@5": row.recall(5, strict=True),
                  "mrr": row.mrr, "ctx": row.ctx_tokens} for row in ev.rows],
        "by_tag": _by_tag(ev, SPLIT_TAGS.get(name, ()), ks),
    }


# sets whose questions fall into parts worth reading apart (the two languages of code-pypi)
SPLIT_TAGS = {"code-pypi": ("python", "javascript"), "code-lib2": ("python", "javascript")}


def _by_tag(ev, tags, ks) -> list[dict]:
    from indexer.evaluation.metrics import mrr, recall_at

    tagged = {q.id: set(q.tags) for q in ev.questions}
    out = []
    for tag in tags:
        for row in ev.rows:
            ranks = [r.first_hit for r in row.results if tag in tagged[r.id]]
            strict = [r.first_strict for r in row.results if tag in tagged[r.id]]
            out.append({"tag": tag, "mode": row.mode, "n": len(ranks),
                        **{f"recall@{k}": recall_at(ranks, k) for k in ks},
                        "strict@1": recall_at(strict, 1), "mrr": mrr(ranks)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS), help="comma-separated set names (default: all but smoke)")
    parser.add_argument("--check", action="store_true", help="build each set with `auto` and evaluate it")
    parser.add_argument("--force", action="store_true", help="rebuild generated sets even if stamped")
    parser.add_argument("--json", type=Path, default=None, help="write every number to this file")
    xquad_option(parser)
    smoke_option(parser)
    args = parse_args(parser)
    if args.smoke:
        args.sets, args.check = "smoke", True
    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}")
    print(f"public question sets, {time.strftime('%Y-%m-%d')}, {machine()}\n", flush=True)
    results: dict = {"sets": {}, "checks": {}}
    rows = []
    for name in names:
        t0 = time.perf_counter()
        materialize(name, force=args.force)
        seconds = time.perf_counter() - t0
        s = summary(name)
        results["sets"][name] = {**s, "materialize_s": round(seconds, 2), "report": build_report(name)}
        rows.append([name, s["documents"], s["questions"], f"{s['avg_words']:.1f}", f"{s['mb']:.2f}",
                     f"{seconds:.1f}"])
    print(table(["set", "documents", "questions", "avg question words", "MB of text", "materialise s"], rows))
    print(f"\n(sets in {SETS_DIR})\n", flush=True)
    if args.check:
        rows, tag_rows = [], []
        for name in names:
            c = check(name)
            results["checks"][name] = c
            for row in c["rows"]:
                n = c["n"]
                rows.append([name, row["mode"], c["chunks"], f"{row['recall@1']}/{n}", f"{row['recall@5']}/{n}",
                             f"{row['recall@10']}/{n}", f"{row['mrr']:.3f}", f"{row['strict@1']}/{n}",
                             round(row["ctx"]), f"{c['build_s']:.1f}"])
            extra = [f"analyzer {c['analyzer']}", f"avg {c['avg_tokens']:.0f} / max {c['max_tokens']} tokens",
                     f"eval {c['eval_s']:.1f} s"]
            if c["skipped"] or c["warnings"] or c["unsupported"]:
                extra.append(f"skipped {c['skipped']}, warnings {c['warnings']}, not indexed {c['unsupported']}")
            print(f"  {name}: " + "; ".join(extra), flush=True)
            for row in c["by_tag"]:
                n = row["n"]
                tag_rows.append([f"{name} [{row['tag']}]", row["mode"], "", f"{row['recall@1']}/{n}",
                                 f"{row['recall@5']}/{n}", f"{row['recall@10']}/{n}", f"{row['mrr']:.3f}",
                                 f"{row['strict@1']}/{n}", "", ""])
        print("\nauto strategy, default embedder, a fresh database per set:\n")
        print(table(["set", "mode", "chunks", "recall@1", "recall@5", "recall@10", "MRR", "strict@1", "ctxTok@5",
                     "build s"], rows + tag_rows))
    save_json(args.json, results)


if __name__ == "__main__":
    main()

