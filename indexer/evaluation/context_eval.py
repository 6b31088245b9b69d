"""What a context holds of the answer, in tokens: packed spans, or whole chunks cut at
the same budget (the baseline).

For each question and budget: `strict` (every answer span lies whole inside what was
handed over), token-level recall (answer tokens inside), precision (what was handed over
that is answer) and IoU (their overlap over their union), and the tokens used (labels and
separators included for packed context). Spans of one document that only whitespace
parts count as one (a table's rows, a list's items, blocks parted by a blank line).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text.tokens import Tokenizer
from ..types import Hit
from .scoring import TokenSpans

Place = tuple[str, int, int]  # document, start, end (characters)


@dataclass(frozen=True, slots=True)
class ContextScore:
    strict: bool
    recall: float
    precision: float
    iou: float
    tokens: int  # handed over (labels and separators included)


def glued(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Spans of one document sorted, overlapping ones and those parted only by
    whitespace merged."""
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and (s <= out[-1][1] or not text[out[-1][1] : s].strip()):
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def score_context(
    answers: list[Place], handed: list[Place], tokens: int, spans: TokenSpans
) -> ContextScore:
    """How much of the answer spans what was handed over holds (`spans` maps characters
    to the tokens of each document)."""
    merged = _merged(handed, spans)
    strict = bool(answers) and all(_inside(answer, merged) for answer in answers)
    places = [(d, s, e) for d, v in merged.items() for s, e in v]
    got = _token_positions(places, spans)
    want = _token_positions(answers, spans)
    hit = len(got & want)
    union = len(got | want)
    return ContextScore(
        strict, _share(hit, len(want)), _share(hit, len(got)), _share(hit, union), tokens
    )


def _merged(handed: list[Place], spans: TokenSpans) -> dict[str, list[tuple[int, int]]]:
    """The places handed over per document, glued (`glued`) when the document is known."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for d, s, e in handed:
        by_doc.setdefault(d, []).append((s, e))
    return {d: glued(v, spans.docs[d].text) if d in spans.docs else v for d, v in by_doc.items()}


def _inside(answer: Place, merged: dict[str, list[tuple[int, int]]]) -> bool:
    """Does one merged span hold the whole answer span?"""
    d, a0, a1 = answer
    return any(s <= a0 and a1 <= e for s, e in merged.get(d, []))


def _token_positions(places: list[Place], spans: TokenSpans) -> set[tuple[str, int]]:
    """(document, token index) of every token the places cover."""
    return {(d, t) for d, s, e in places for t in range(*spans.tokens(d, s, e))}


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def whole_chunks(hits: list[Hit], budget: int, tokenizer: Tokenizer) -> tuple[list[Place], int]:
    """Whole chunks in rank order up to the budget, the last one cut at it (the baseline
    a packer must beat): the places handed over and the tokens used."""
    used, out = 0, []
    for hit in hits:
        c = hit.chunk
        n = c.n_tokens or tokenizer.count(c.text)
        if used + n <= budget:
            out.append((c.doc_id, c.start, c.end))
            used += n
            continue
        rest = budget - used
        if rest > 0:
            bounds = tokenizer.boundaries(c.text)
            end = int(bounds[min(rest, len(bounds) - 1)]) if len(bounds) else 0
            if end > 0:
                out.append((c.doc_id, c.start, c.start + end))
                used += rest
        break
    return out, used
