"""Question sets: JSON lines of questions with their expected document and section,
symbol, span or answer — or whole documents, with graded relevance — validated and
resolved against the corpus into target spans."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import QuestionSetError
from ..types import PATH_SEP, Document
from .metrics import MRR_DEPTH, NDCG_DEPTH

REQUIRED = ("id", "question")
MRR_METRIC = f"mrr@{MRR_DEPTH}"
NDCG_METRIC = f"ndcg@{NDCG_DEPTH}"
PASSAGE_KEYS = ("section", "answer", "answers", "symbol", "span")


@dataclass
class Question:
    id: str
    question: str
    doc_id: str
    section: str = ""
    answer: str = ""
    symbol: str = ""
    tags: list[str] = field(default_factory=list)
    span: tuple[int, int] | None = None  # [start, end) characters of the expected passage
    # whole-document targets: doc_id -> grade (1 = relevant, higher = more); empty for a passage
    documents: dict[str, int] = field(default_factory=dict)
    # resolved against the corpus
    target: tuple[int, int] = (0, 0)  # the span a hit must overlap
    answer_span: tuple[int, int] | None = None  # the span a strict hit must contain
    answers: list[str] = field(default_factory=list)  # more answer excerpts (a context must hold them all)
    answer_spans: list[tuple[int, int]] = field(default_factory=list)  # resolved: `answer`'s, then `answers`'

    def hits(self, doc_id: str, start: int, end: int) -> bool:
        """Does a retrieved chunk (document and character span) hit this question's target?
        A whole-document target is hit by any chunk of one of its documents; a passage
        target by a chunk of its document that overlaps the target span."""
        if self.documents:
            return doc_id in self.documents
        return doc_id == self.doc_id and start < self.target[1] and self.target[0] < end


def load_questions(path: str | os.PathLike) -> list[Question]:
    """Read a JSON-lines question set; every malformed line is reported with its number."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a byte-order mark (Windows editors) is not data
    except OSError as exc:
        raise QuestionSetError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise QuestionSetError(f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    out, problems, seen = [], [], set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            problems.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(data, dict):
            problems.append(f"line {number}: a question is a JSON object, not {type(data).__name__}")
            continue
        problem = field_problem(data)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        missing = [k for k in REQUIRED if not data.get(k)]
        if not (data.get("doc_id") or "targets" in data):
            missing.append("doc_id")
        if missing:
            problems.append(f"line {number}: missing {', '.join(missing)}")
            continue
        documents, problem = _documents(data)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        span = data.get("span")
        if data["id"] in seen:
            problems.append(f"line {number}: duplicate id {data['id']!r}")
        seen.add(data["id"])
        tags = data.get("tags") or []
        out.append(Question(
            str(data["id"]), data["question"], data.get("doc_id") or next(iter(documents)), data.get("section") or "",
            data.get("answer") or "", data.get("symbol") or "", [tags] if isinstance(tags, str) else list(tags),
            tuple(span) if span else None, documents, answers=list(data.get("answers") or []),
        ))
    if problems:
        raise QuestionSetError(f"{path}: " + "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else ""))
    if not out:
        raise QuestionSetError(f"{path} holds no questions")
    return out


TEXT_FIELDS = ("question", "doc_id", "section", "answer", "symbol")


def _is_span(span) -> bool:
    return (isinstance(span, list) and len(span) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in span) and 0 <= span[0] < span[1])


def field_problem(data: dict) -> str:
    """The first field of a record of the wrong type, said in a few words ("" when all
    fit): `id` a string or a whole number, the texts strings, `tags` a string or a list of
    strings, `span` two character offsets (`targets` is checked by `_documents`)."""
    qid = data.get("id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, (str, int))):
        return f"id must be a string or a whole number, not {type(qid).__name__}"
    for name in TEXT_FIELDS:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string, not {type(value).__name__}"
    if isinstance(data.get("question"), str) and not data["question"].strip():
        return "question is blank"
    tags = data.get("tags")
    if tags is not None and not isinstance(tags, str) and not (
            isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        return f"tags must be a string or a list of strings, not {json.dumps(tags)[:40]}"
    if data.get("span") is not None and not _is_span(data["span"]):
        return "span must be [start, end] character offsets with start < end"
    answers = data.get("answers")
    if answers is not None and not (isinstance(answers, list) and all(isinstance(a, str) and a.strip()
                                                                      for a in answers)):
        return f"answers must be a list of excerpts (strings), not {json.dumps(answers)[:40]}"
    return ""


def _documents(data: dict) -> tuple[dict[str, int], str]:
    """A record's whole-document targets, best grade first, or a problem. `targets` lists
    documents with grades; a bare `doc_id` (no section, symbol, span or answer) is one
    document of grade 1; anything else is a passage target (no documents)."""
    passage = any(data.get(k) for k in PASSAGE_KEYS)
    if "targets" not in data:
        return ({} if passage else {str(data["doc_id"]): 1}), ""
    if passage or data.get("doc_id"):
        return {}, "targets name whole documents; a doc_id with a section, symbol, span or answer is the other kind"
    targets = data["targets"]
    if not isinstance(targets, list) or not targets:
        return {}, 'targets must be a non-empty list like [{"doc_id": "a.md", "grade": 2}]'
    documents: dict[str, int] = {}
    for t in targets:
        if not isinstance(t, dict) or not isinstance(t.get("doc_id"), str) or not t["doc_id"]:
            return {}, 'each target needs a doc_id: {"doc_id": "a.md", "grade": 2}'
        grade = t.get("grade", 1)
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
            return {}, f"grade of {t['doc_id']!r} must be a whole number from 1 (leave non-relevant documents out)"
        if t["doc_id"] in documents:
            return {}, f"target {t['doc_id']!r} is listed twice"
        documents[t["doc_id"]] = grade
    return dict(sorted(documents.items(), key=lambda item: -item[1])), ""


def resolve(questions: list[Question], docs: dict[str, Document]) -> None:
    """Find each question's target span (section or symbol) and answer span in the
    corpus, or check that its target documents are there; fail loudly, naming the
    questions that do not match."""
    problems = []
    for q in questions:
        if q.documents:
            absent = [d for d in q.documents if d not in docs]
            if absent:
                more = f" (and {len(absent) - 1} more)" if len(absent) > 1 else ""
                problems.append(f"{q.id}: no document {absent[0]!r}{more}")
                continue
            q.target = (0, len(docs[q.doc_id].text))
            continue
        doc = docs.get(q.doc_id)
        if doc is None:
            problems.append(f"{q.id}: no document {q.doc_id!r}")
            continue
        target = None
        if q.span:
            if q.span[1] > len(doc.text):
                problems.append(f"{q.id}: span {list(q.span)} ends after {q.doc_id} ({len(doc.text)} characters)")
                continue
            target = q.span
        elif q.section:
            target = _section_span(doc, q.section)
            if target is None:
                problems.append(f"{q.id}: no section {q.section!r} in {q.doc_id}")
                continue
        elif q.symbol:
            from ..loaders.symbols import symbol_span

            target = symbol_span(doc, q.symbol)
            if target is None:
                problems.append(f"{q.id}: no symbol {q.symbol!r} in {q.doc_id}")
                continue
        lo, hi = target if target else (0, len(doc.text))
        spans = [(text, doc.text.find(text, lo, hi)) for text in ([q.answer] if q.answer else []) + q.answers]
        absent = next((text for text, at in spans if at == -1), None)
        if absent is not None:
            where = f"section {q.section!r}" if q.section else (f"symbol {q.symbol}" if q.symbol else q.doc_id)
            problems.append(f"{q.id}: answer not found in {where}: {absent[:60]!r}")
            continue
        q.answer_spans = [(at, at + len(text)) for text, at in spans]
        if q.answer_spans:
            q.answer_span = q.answer_spans[0]
        q.target = target or q.answer_span
    if problems:
        raise QuestionSetError(
            f"{len(problems)} question(s) do not match the corpus: " + "; ".join(problems[:5])
            + (" ..." if len(problems) > 5 else "")
        )


def _section_span(doc: Document, section: str) -> tuple[int, int] | None:
    wanted = section.strip()
    for s in doc.sections:
        if s.path == wanted:
            return (s.start, s.end)
    # tolerate a path given without the document title, or with it in front of a
    # later top-level heading (as versions before 0.2 wrote every path)
    titled = doc.title + PATH_SEP
    untitled = wanted[len(titled):] if wanted.startswith(titled) else None
    for s in doc.sections:
        if s.path.endswith(PATH_SEP + wanted) or PATH_SEP.join(s.trail(doc.title)) == wanted:
            return (s.start, s.end)
        if untitled is not None and s.path == untitled:
            return (s.start, s.end)
    return None
