"""Scoring one question's ranked hits: hit and strict hit, context cost, nDCG@10,
token-level span metrics and the hits that fit a token budget. The evaluator
(`run.evaluate`) and tuning (`tune`) score every question this way."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

from ..text.tokens import get_tokenizer
from ..types import Document, Hit
from .metrics import (
    NDCG_DEPTH,
    contains,
    document_gains,
    first_hit_ndcg,
    first_hit_rank,
    ndcg,
    span_scores,
    union_length,
)
from .sets import Question


@dataclass
class QuestionResult:
    """One question's score in one strategy × mode (ranks are 1-based, None: no hit)."""

    id: str
    first_hit: int | None
    first_strict: int | None
    ctx_tokens: int
    sections: int
    retrieved: list[str]
    ndcg: float = 0.0  # nDCG@10 (graded for whole-document targets, else the first hit's)
    span: tuple[float, float, float] | None = None  # recall, precision, IoU at the context k
    budget_hit: int | None = None
    budget_tokens: int = 0


class TokenSpans:
    """Character spans to token spans per document (for token-level span metrics)."""

    def __init__(self, docs: dict[str, Document], cache_dir: Path | None = None) -> None:
        self.docs = docs
        self.cache_dir = cache_dir
        self.bounds: dict[str, list[int]] = {}

    def tokens(self, doc_id: str, start: int, end: int) -> tuple[int, int]:
        if doc_id not in self.bounds:
            doc = self.docs.get(doc_id)
            self.bounds[doc_id] = []
            if doc is not None:
                tokenizer = get_tokenizer(cache_dir=self.cache_dir)
                self.bounds[doc_id] = tokenizer.boundaries(doc.text).tolist()
        b = self.bounds[doc_id]
        if not b:
            return (0, 0)
        return (max(bisect.bisect_right(b, start) - 1, 0), bisect.bisect_left(b, end))


def question_ndcg(q: Question, hits: list[Hit], first_hit: int | None) -> float:
    """nDCG@10 of one question. Whole-document targets: graded, a document counted once at
    its first chunk's rank (linear gain = grade, as trec_eval and BEIR). Passage targets:
    binary, the first hit is the one relevant item (ideal DCG 1)."""
    if q.documents:
        gains = document_gains([seen_doc(q, h) for h in hits[:NDCG_DEPTH]], q.documents)
        return ndcg(gains, list(q.documents.values()))
    return first_hit_ndcg(first_hit)


def seen_doc(q: Question, h: Hit) -> str:
    """The document a hit stands for in a question with whole-document targets: its own,
    or a target document holding the very same text (search shows a text once and names
    its other documents in `same_text`)."""
    if h.chunk.doc_id in q.documents:
        return h.chunk.doc_id
    return next((d for d in h.same_text if d in q.documents), h.chunk.doc_id)


def seen_span(q: Question, h: Hit, docs: dict[str, Document]) -> tuple[str, int, int]:
    """(document, start, end) a hit stands for: its own place, or where a copy of its
    text in the question's target document lies, when only the copy hits the target."""
    c = h.chunk
    own = (c.doc_id, c.start, c.end)
    if q.documents:
        return (seen_doc(q, h), c.start, c.end)
    if q.hits(*own) or q.doc_id not in h.same_text or q.doc_id not in docs:
        return own
    text = docs[q.doc_id].text
    at = text.find(c.text, max(0, q.target[0] - len(c.text)))
    return (q.doc_id, at, at + len(c.text)) if 0 <= at < q.target[1] else own


def score_question(
    q: Question, hits: list[Hit], ctx_k: int, budget: int | None, spans: TokenSpans
) -> QuestionResult:
    """How one question's ranked hits score: the rank of the first hit and first strict
    hit, what the top `ctx_k` cost (tokens, sections), nDCG@10, token-level span recall,
    precision and IoU at `ctx_k`, and, with a token `budget`, the first hit among the hits
    that fit it. `spans` maps the question's documents to tokens."""
    seen = {id(h): seen_span(q, h, spans.docs) for h in hits}

    def is_hit(h: Hit) -> bool:
        return q.hits(*seen[id(h)])

    def is_strict(h: Hit) -> bool:
        doc_id, start, end = seen[id(h)]
        return (
            q.answer_span is not None
            and doc_id == q.doc_id
            and contains((start, end), q.answer_span)
        )

    top = hits[:ctx_k]
    hit_flags = [is_hit(h) for h in hits]
    first = first_hit_rank(hit_flags)
    result = QuestionResult(
        q.id,
        first,
        first_hit_rank([is_strict(h) for h in hits]),
        *_cost(top),
        [h.chunk.id for h in hits],
        question_ndcg(q, hits, first),
    )
    if q.answer_span is not None:
        places = [seen[id(h)] for h in top]
        result.span = _span_scores(spans, places, q.doc_id, q.answer_span)
    if budget:
        taken, result.budget_tokens = _fitting(hits, budget)
        result.budget_hit = first_hit_rank(hit_flags[:taken])
    return result


def _cost(top: list[Hit]) -> tuple[int, int]:
    """What the top hits put in a prompt: their tokens, and the sections they come from."""
    return sum(h.chunk.n_tokens for h in top), len(
        {(h.chunk.doc_id, h.chunk.heading_path) for h in top}
    )


def _span_scores(
    spans: TokenSpans, places: list[tuple[str, int, int]], doc_id: str, answer: tuple[int, int]
) -> tuple[float, float, float]:
    """Token-level recall, precision and IoU of the places retrieved against the answer
    span (in `doc_id`)."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for place_doc, start, end in places:
        by_doc.setdefault(place_doc, []).append(spans.tokens(place_doc, start, end))
    total = sum(union_length(v) for v in by_doc.values())
    return span_scores(by_doc.get(doc_id, []), total, spans.tokens(doc_id, *answer))


def _fitting(hits: list[Hit], budget: int) -> tuple[int, int]:
    """How many hits, in rank order, fit a token budget (the first always does), and the
    tokens they use."""
    used = 0
    taken = 0
    for h in hits:
        if taken and used + h.chunk.n_tokens > budget:
            break
        used += h.chunk.n_tokens
        taken += 1
    return taken, used
