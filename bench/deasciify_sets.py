"""The question sets bench/deasciify.py restores (Turkish folded to ASCII, and English and
code it must leave alone) and how it scores a candidate's outputs on them."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

from bench.common import ROOT, TYPED_ASCII, fold, tr_lower, xquad_dir
from bench.deasciify_yuret import WORD

# --------------------------------------------------------------------------------------------
# folding, tokens, data
# --------------------------------------------------------------------------------------------

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
