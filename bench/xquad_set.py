"""`xquad-tr`, `xquad-en`: XQuAD (CC BY-SA 4.0) as question sets (bench/public_sets.py).

Each of the 48 Wikipedia articles becomes a Markdown document (`# Title`, then its 5
paragraphs), with the 1,190 questions of the language; the same doc_ids and question ids in
both languages. Target span = the question's paragraph, answer = its first answer text. The
files are read from --xquad DIR, env INDEXER_XQUAD_DIR, else bench/.cache/xquad (their
hashes are checked); bench/beir.py cleans the paragraphs the same way.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

from bench.common import (
    SMOKE_DOCS,
    XQUAD_SOURCE,
    SetError,
    collapse,
    sha256_file,
    smoke_corpus,
    verify_set,
    write_jsonl,
    write_text,
    xquad_dir,
)

XQUAD_SHA256 = {
    "en": "e4c57d1c9143aaa1c5d265ba5987a65f4e69528d2a98f29d6e75019b10344f29",
    "tr": "92179a564774b7696100d144c1e10870d0a966b6fccbdd254a65b9d2ab1971cc",
}

# Characters of the XQuAD contexts that are artifacts, not text: a stray BOM and zero-width
# spaces (Turkish), and a line break inside "O\n2" (Oxygen, both languages), which would
# split a paragraph of a Markdown document. Turned into nothing / a space; paragraphs are
# then stripped. Answers get the same treatment.
_XQUAD_DROP = {"\ufeff", "\u200b"}
_XQUAD_SPACE = {"\n", "\r", "\t"}


def clean_with_map(text: str) -> tuple[str, list[int]]:
    """Cleaned text and, for every original offset 0..len(text), the cleaned offset."""
    out, where = [], []
    for ch in text:
        where.append(len(out))
        if ch in _XQUAD_DROP:
            continue
        out.append(" " if ch in _XQUAD_SPACE else ch)
    where.append(len(out))
    cleaned = "".join(out)
    stripped = cleaned.strip()
    lead = len(cleaned) - len(cleaned.lstrip())
    return stripped, [min(max(w - lead, 0), len(stripped)) for w in where]


def title_slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


# Markdown block starts a paragraph could be mistaken for (reported, not changed)
_MD_BLOCK_START = re.compile(r"^(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|\||<[a-zA-Z/!?]|```|~~~|={3,}|-{3,})")


def build_xquad(lang: str, out: Path) -> dict:
    folder = xquad_dir()
    paths = {x: folder / f"xquad.{x}.json" for x in ("en", lang)}
    for x, path in paths.items():
        if not path.is_file():
            raise SetError(f"XQuAD file missing: {path}; get {XQUAD_SOURCE} and pass --xquad DIR "
                           "(or set INDEXER_XQUAD_DIR)")
        if sha256_file(path) != XQUAD_SHA256[x]:
            raise SetError(f"{path}: unexpected content (sha256 differs from the pinned copy)")
    english = json.loads(paths["en"].read_text(encoding="utf-8"))["data"]
    data = json.loads(paths[lang].read_text(encoding="utf-8"))["data"]
    if len(english) != len(data):
        raise SetError(f"xquad.{lang}.json has {len(data)} articles, xquad.en.json {len(english)}")
    corpus = out / "corpus"
    questions: list[dict] = []
    notes: Counter = Counter()
    intended: dict[str, list[tuple[int, int, str]]] = {}
    seen_docs: set[str] = set()
    for art_en, art in zip(english, data):
        if [len(p["qas"]) for p in art_en["paragraphs"]] != [len(p["qas"]) for p in art["paragraphs"]]:
            raise SetError(f"{art['title']}: paragraphs/questions do not line up with the English file")
        if art["title"] != art_en["title"]:
            notes["titles differing from English"] += 1
        doc_id = title_slug(art_en["title"]) + ".md"  # English title: identical across languages
        if doc_id in seen_docs:
            raise SetError(f"two articles map to {doc_id}")
        seen_docs.add(doc_id)
        text = f"# {art['title'].replace('_', ' ')}"
        for para, para_en in zip(art["paragraphs"], art_en["paragraphs"]):
            context, where = clean_with_map(para["context"])
            if context != para["context"]:
                notes["paragraphs with whitespace/BOM/ZWSP cleaned"] += 1
            if _MD_BLOCK_START.match(context):
                notes["paragraphs starting like a Markdown block"] += 1
            start = len(text) + 2
            text += "\n\n" + context
            end = len(text)
            intended.setdefault(doc_id, []).append((start, end, context))
            for qa, qa_en in zip(para["qas"], para_en["qas"]):
                if qa["id"] != qa_en["id"]:
                    raise SetError(f"question ids differ: {qa['id']} vs {qa_en['id']}")
                first = qa["answers"][0]
                a0 = first["answer_start"]
                raw = first["text"]
                if para["context"][a0:a0 + len(raw)] != raw:
                    notes["answer_start not pointing at the answer"] += 1
                    a0 = para["context"].find(raw)
                    if a0 < 0:
                        raise SetError(f"{qa['id']}: answer not in its paragraph")
                answer = context[where[a0]:where[a0 + len(raw)]].strip()
                if answer != raw:
                    notes["answers cleaned like their paragraph"] += 1
                if not answer or answer not in context:
                    raise SetError(f"{qa['id']}: cleaned answer {answer!r} not in its paragraph")
                questions.append({
                    "id": qa["id"], "question": collapse(qa["question"]), "doc_id": doc_id,
                    "span": [start, end], "answer": answer, "tags": ["xquad", lang],
                })
        write_text(corpus / doc_id, text + "\n")
    write_jsonl(out / "questions.jsonl", questions)
    shutil.copyfile(folder / "CC-BY-SA4.0.txt", out / "LICENSE-CC-BY-SA-4.0.txt")
    write_text(out / "NOTICE.md", (
        f"# xquad-{lang}\n\nDocuments and questions: XQuAD (Artetxe, Ruder, Yogatama, 2020), "
        "google-deepmind/xquad, commit 7d30520c71752400, from the SQuAD v1.1 paragraphs of Wikipedia "
        "articles; licence CC BY-SA 4.0 (LICENSE-CC-BY-SA-4.0.txt).\n\nChanges: each article is one "
        "Markdown document (`# title`, then its paragraphs separated by blank lines); byte-order marks and "
        "zero-width spaces inside paragraphs were removed, line breaks inside a paragraph became spaces, "
        "paragraphs were stripped; the question set keeps the first answer of each question. Generated by "
        "bench/public_sets.py; not for redistribution from this repository.\n"))
    verify_set(out, intended=intended)
    return {"notes": dict(notes)}


def smoke_xquad(folder: Path) -> Path:
    """`folder` with xquad.en.json, xquad.tr.json and CC-BY-SA4.0.txt in XQuAD's layout, made
    of the smoke documents (common.SMOKE_DOCS) and the bundled questions about them (both
    "languages" the same Turkish text; a question goes to the first paragraph holding its
    answer): what `--smoke` runs read instead of the pinned XQuAD files."""
    corpus = smoke_corpus(folder / "corpus")
    questions = [json.loads(line) for line in (corpus / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    placed: set[str] = set()
    data = []
    for name in SMOKE_DOCS:
        blocks = [b.strip() for b in (corpus / name).read_text(encoding="utf-8").split("\n\n") if b.strip()]
        paragraphs = []
        for context in blocks[1:]:
            qas = []
            for q in questions:
                if q["doc_id"] == name and q["id"] not in placed and q.get("answer") and q["answer"] in context:
                    placed.add(q["id"])
                    answer = {"text": q["answer"], "answer_start": context.index(q["answer"])}
                    qas.append({"id": q["id"], "question": q["question"], "answers": [answer]})
            paragraphs.append({"context": context, "qas": qas})
        data.append({"title": blocks[0].lstrip("# "), "paragraphs": paragraphs})
    for lang in ("en", "tr"):
        write_text(folder / f"xquad.{lang}.json", json.dumps({"data": data}, ensure_ascii=False))
    write_text(folder / "CC-BY-SA4.0.txt", "Not XQuAD: the bundled corpus of this repository, for smoke runs.\n")
    return folder
