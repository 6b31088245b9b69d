"""Question sets: JSON lines of questions with their expected document and section,
symbol, span or answer, validated and resolved against the corpus into target spans."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import QuestionSetError
from ..types import PATH_SEP, Document
from .metrics import MRR_DEPTH

REQUIRED = ("id", "question", "doc_id")
MRR_METRIC = f"mrr@{MRR_DEPTH}"


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
    # resolved against the corpus
    target: tuple[int, int] = (0, 0)  # the span a hit must overlap
    answer_span: tuple[int, int] | None = None  # the span a strict hit must contain


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
        missing = [k for k in REQUIRED if not data.get(k)]
        if missing:
            problems.append(f"line {number}: missing {', '.join(missing)}")
            continue
        if not (data.get("section") or data.get("answer") or data.get("symbol") or data.get("span")):
            problems.append(f"line {number}: needs a section, a symbol, a span or an answer")
            continue
        span = data.get("span")
        if span is not None and not (
            isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span) and 0 <= span[0] < span[1]
        ):
            problems.append(f"line {number}: span must be [start, end] character offsets with start < end")
            continue
        if data["id"] in seen:
            problems.append(f"line {number}: duplicate id {data['id']!r}")
        seen.add(data["id"])
        tags = data.get("tags") or []
        out.append(Question(
            str(data["id"]), data["question"], data["doc_id"], data.get("section") or "", data.get("answer") or "",
            data.get("symbol") or "", [tags] if isinstance(tags, str) else list(tags),
            tuple(span) if span else None,
        ))
    if problems:
        raise QuestionSetError(f"{path}: " + "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else ""))
    if not out:
        raise QuestionSetError(f"{path} holds no questions")
    return out


def resolve(questions: list[Question], docs: dict[str, Document]) -> None:
    """Find each question's target span (section or symbol) and answer span in the
    corpus; fail loudly, naming the questions that do not match."""
    problems = []
    for q in questions:
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
        if q.answer:
            lo, hi = target if target else (0, len(doc.text))
            at = doc.text.find(q.answer, lo, hi)
            if at == -1:
                where = f"section {q.section!r}" if q.section else (f"symbol {q.symbol}" if q.symbol else q.doc_id)
                problems.append(f"{q.id}: answer not found in {where}: {q.answer[:60]!r}")
                continue
            q.answer_span = (at, at + len(q.answer))
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
    # tolerate a path given without the document title
    for s in doc.sections:
        if s.path.endswith(PATH_SEP + wanted) or PATH_SEP.join(s.heading_path[1:]) == wanted:
            return (s.start, s.end)
    return None
