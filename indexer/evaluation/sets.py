"""Question sets: JSON lines of questions with their expected document and section,
symbol, span or answer — or whole documents, with graded relevance — validated and
resolved against the corpus into target spans."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

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
    # more answer excerpts (a context must hold them all)
    answers: list[str] = field(default_factory=list)
    # resolved: `answer`'s, then `answers`'
    answer_spans: list[tuple[int, int]] = field(default_factory=list)

    def hits(self, doc_id: str, start: int, end: int) -> bool:
        """Does a retrieved chunk (document and character span) hit this question's target?
        A whole-document target is hit by any chunk of one of its documents; a passage
        target by a chunk of its document that overlaps the target span."""
        if self.documents:
            return doc_id in self.documents
        return doc_id == self.doc_id and start < self.target[1] and self.target[0] < end


def load_questions(path: str | os.PathLike[str]) -> list[Question]:
    """Read a JSON-lines question set; every malformed line is reported with its number."""
    path = Path(path)
    out: list[Question] = []
    problems: list[str] = []
    seen: set[object] = set()
    for number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        record = _record(line)
        if isinstance(record, str):
            problems.append(f"line {number}: {record}")
            continue
        data, documents = record
        if data["id"] in seen:
            problems.append(f"line {number}: duplicate id {data['id']!r}")
        seen.add(data["id"])
        out.append(_question(data, documents))
    if problems:
        raise QuestionSetError(f"{path}: " + _listed(problems))
    if not out:
        raise QuestionSetError(f"{path} holds no questions")
    return out


def _listed(problems: list[str]) -> str:
    """The first five problems, and an ellipsis when there are more."""
    return "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else "")


def _read_lines(path: Path) -> list[str]:
    try:
        # a byte-order mark (Windows editors) is not data
        return path.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:
        raise QuestionSetError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise QuestionSetError(
            f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None


def _record(line: str) -> tuple[dict[str, Any], dict[str, int]] | str:
    """A line's record and its whole-document targets, or what is wrong with it."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg})"
    except ValueError as exc:  # a number over Python's digit limit for int() (4,300)
        return f"not JSON that can be read ({exc})"
    if not isinstance(data, dict):
        return f"a question is a JSON object, not {type(data).__name__}"
    return _checked(data)


def _checked(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]] | str:
    """A record and its whole-document targets, or the first problem of its fields."""
    problem = field_problem(data)
    if problem:
        return problem
    missing = [k for k in REQUIRED if not data.get(k)]
    if not (data.get("doc_id") or "targets" in data):
        missing.append("doc_id")
    if missing:
        return f"missing {', '.join(missing)}"
    documents, problem = _documents(data)
    return problem or (data, documents)


def _question(data: dict[str, Any], documents: dict[str, int]) -> Question:
    """A checked record as a Question (not resolved against the corpus yet)."""
    span = data.get("span")
    tags = data.get("tags") or []
    return Question(
        str(data["id"]),
        data["question"],
        data.get("doc_id") or next(iter(documents)),
        section=data.get("section") or "",
        answer=data.get("answer") or "",
        symbol=data.get("symbol") or "",
        tags=[tags] if isinstance(tags, str) else list(tags),
        span=(span[0], span[1]) if span else None,
        documents=documents,
        answers=list(data.get("answers") or []),
    )


TEXT_FIELDS = ("question", "doc_id", "section", "answer", "symbol")


def _is_span(span: object) -> bool:
    return (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
        and 0 <= span[0] < span[1]
    )


def _id_problem(data: dict[str, Any]) -> str:
    qid = data.get("id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, (str, int))):
        return f"id must be a string or a whole number, not {type(qid).__name__}"
    return ""


def _text_problem(data: dict[str, Any]) -> str:
    for name in TEXT_FIELDS:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string, not {type(value).__name__}"
    if isinstance(data.get("question"), str) and not data["question"].strip():
        return "question is blank"
    return ""


def _tags_problem(data: dict[str, Any]) -> str:
    tags = data.get("tags")
    if tags is None or isinstance(tags, str):
        return ""
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        return ""
    return f"tags must be a string or a list of strings, not {json.dumps(tags)[:40]}"


def _span_problem(data: dict[str, Any]) -> str:
    if data.get("span") is not None and not _is_span(data["span"]):
        return "span must be [start, end] character offsets with start < end"
    return ""


def _answers_problem(data: dict[str, Any]) -> str:
    answers = data.get("answers")
    if answers is None:
        return ""
    if isinstance(answers, list) and all(isinstance(a, str) and a.strip() for a in answers):
        return ""
    return f"answers must be a list of excerpts (strings), not {json.dumps(answers)[:40]}"


# the checks of `field_problem`, in the order it reports them
_FIELD_CHECKS: tuple[Callable[[dict[str, Any]], str], ...] = (
    _id_problem,
    _text_problem,
    _tags_problem,
    _span_problem,
    _answers_problem,
)


def field_problem(data: dict[str, Any]) -> str:
    """The first field of a record of the wrong type, said in a few words ("" when all
    fit): `id` a string or a whole number, the texts strings, `tags` a string or a list of
    strings, `span` two character offsets (`targets` is checked by `_documents`)."""
    for check in _FIELD_CHECKS:
        problem = check(data)
        if problem:
            return problem
    return ""


def _documents(data: dict[str, Any]) -> tuple[dict[str, int], str]:
    """A record's whole-document targets, best grade first, or a problem. `targets` lists
    documents with grades; a bare `doc_id` (no section, symbol, span or answer) is one
    document of grade 1; anything else is a passage target (no documents)."""
    passage = any(data.get(k) for k in PASSAGE_KEYS)
    if "targets" not in data:
        return ({} if passage else {str(data["doc_id"]): 1}), ""
    if passage or data.get("doc_id"):
        return {}, (
            "targets name whole documents; a doc_id with a section, symbol, span or answer "
            "is the other kind"
        )
    targets = data["targets"]
    if not isinstance(targets, list) or not targets:
        return {}, 'targets must be a non-empty list like [{"doc_id": "a.md", "grade": 2}]'
    return _graded(targets)


def _graded(targets: list[Any]) -> tuple[dict[str, int], str]:
    """The documents of a non-empty `targets` list, best grade first, or a problem."""
    documents: dict[str, int] = {}
    for t in targets:
        problem = _target_problem(t, documents)
        if problem:
            return {}, problem
        documents[t["doc_id"]] = t.get("grade", 1)
    return dict(sorted(documents.items(), key=lambda item: -item[1])), ""


def _target_problem(t: object, documents: dict[str, int]) -> str:
    """What is wrong with one entry of `targets` ("" when nothing), given those before it."""
    if not isinstance(t, dict) or not isinstance(t.get("doc_id"), str) or not t["doc_id"]:
        return 'each target needs a doc_id: {"doc_id": "a.md", "grade": 2}'
    grade = t.get("grade", 1)
    if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
        return (
            f"grade of {t['doc_id']!r} must be a whole number from 1 "
            "(leave non-relevant documents out)"
        )
    if t["doc_id"] in documents:
        return f"target {t['doc_id']!r} is listed twice"
    return ""


def resolve(questions: list[Question], docs: dict[str, Document]) -> None:
    """Find each question's target span (section or symbol) and answer span in the
    corpus, or check that its target documents are there; fail loudly, naming the
    questions that do not match."""
    problems = []
    for q in questions:
        problem = _resolve_documents(q, docs) if q.documents else _resolve_passage(q, docs)
        if problem:
            problems.append(f"{q.id}: {problem}")
    if problems:
        raise QuestionSetError(
            f"{len(problems)} question(s) do not match the corpus: " + _listed(problems)
        )


def _resolve_documents(q: Question, docs: dict[str, Document]) -> str:
    """Check a whole-document question's documents are there; its target is its first
    document, whole. A problem ("" when none)."""
    absent = [d for d in q.documents if d not in docs]
    if absent:
        more = f" (and {len(absent) - 1} more)" if len(absent) > 1 else ""
        return f"no document {absent[0]!r}{more}"
    q.target = (0, len(docs[q.doc_id].text))
    return ""


def _resolve_passage(q: Question, docs: dict[str, Document]) -> str:
    """Set a passage question's target and answer spans. A problem ("" when none)."""
    doc = docs.get(q.doc_id)
    if doc is None:
        return f"no document {q.doc_id!r}"
    target = _passage_target(q, doc)
    if isinstance(target, str):
        return target
    spans = _answer_spans(q, doc, target or (0, len(doc.text)))
    if isinstance(spans, str):
        return spans
    q.answer_spans = spans
    if spans:
        q.answer_span = spans[0]
    # a loaded passage question names a span, section, symbol or answer: one is found
    q.target = target or q.answer_span or q.target
    return ""


def _answer_spans(
    q: Question, doc: Document, within: tuple[int, int]
) -> list[tuple[int, int]] | str:
    """Where `answer`, then each of `answers`, occurs first in `within`; or a problem
    naming the first excerpt not found."""
    texts = ([q.answer] if q.answer else []) + q.answers
    spans = [(text, doc.text.find(text, *within)) for text in texts]
    absent = next((text for text, at in spans if at == -1), None)
    if absent is not None:
        return f"answer not found in {_where(q)}: {absent[:60]!r}"
    return [(at, at + len(text)) for text, at in spans]


def _passage_target(q: Question, doc: Document) -> tuple[int, int] | None | str:
    """The span a question's span, section or symbol names in its document (None when it
    names none of them), or a problem."""
    if q.span:
        if q.span[1] > len(doc.text):
            return f"span {list(q.span)} ends after {q.doc_id} ({len(doc.text)} characters)"
        return q.span
    if q.section:
        target = _section_span(doc, q.section)
        return f"no section {q.section!r} in {q.doc_id}" if target is None else target
    if q.symbol:
        from ..loaders.symbols import symbol_span

        target = symbol_span(doc, q.symbol)
        return f"no symbol {q.symbol!r} in {q.doc_id}" if target is None else target
    return None


def _where(q: Question) -> str:
    if q.section:
        return f"section {q.section!r}"
    return f"symbol {q.symbol}" if q.symbol else q.doc_id


def _section_span(doc: Document, section: str) -> tuple[int, int] | None:
    wanted = section.strip()
    for s in doc.sections:
        if s.path == wanted:
            return (s.start, s.end)
    # tolerate a path given without the document title, or with it in front of a
    # later top-level heading (as versions before 0.2 wrote every path)
    titled = doc.title + PATH_SEP
    untitled = wanted[len(titled) :] if wanted.startswith(titled) else None
    for s in doc.sections:
        if s.path.endswith(PATH_SEP + wanted) or PATH_SEP.join(s.trail(doc.title)) == wanted:
            return (s.start, s.end)
        if untitled is not None and s.path == untitled:
            return (s.start, s.end)
    return None
