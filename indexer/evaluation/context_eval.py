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
from ..types import Document, Hit

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
        if out and (s <= out[-1][1] or not text[out[-1][1]:s].strip()):
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


class TokenCounter:
    """Characters to token positions, per document (the tool's tokenizer)."""

    def __init__(self, docs: dict[str, Document], tokenizer: Tokenizer) -> None:
        self.docs = docs
        self.tokenizer = tokenizer
        self._bounds: dict[str, list[int]] = {}

    def tokens(self, doc_id: str, start: int, end: int) -> set[int]:
        """The positions of the tokens that start inside [start, end)."""
        import bisect

        if doc_id not in self._bounds:
            doc = self.docs.get(doc_id)
            self._bounds[doc_id] = self.tokenizer.boundaries(doc.text).tolist() if doc else []
        b = self._bounds[doc_id]
        return set(range(bisect.bisect_left(b, start), bisect.bisect_left(b, end)))


def score_context(answers: list[Place], handed: list[Place], tokens: int, counter: TokenCounter) -> ContextScore:
    """How much of the answer spans what was handed over holds."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for d, s, e in handed:
        by_doc.setdefault(d, []).append((s, e))
    merged = {d: glued(v, counter.docs[d].text) if d in counter.docs else v for d, v in by_doc.items()}
    strict = bool(answers) and all(any(s <= a0 and a1 <= e for s, e in merged.get(d, [])) for d, a0, a1 in answers)
    got: set[tuple[str, int]] = {(d, t) for d, v in merged.items() for s, e in v for t in counter.tokens(d, s, e)}
    want: set[tuple[str, int]] = {(d, t) for d, s, e in answers for t in counter.tokens(d, s, e)}
    hit = len(got & want)
    union = len(got | want)
    return ContextScore(strict, hit / len(want) if want else 0.0, hit / len(got) if got else 0.0,
                        hit / union if union else 0.0, tokens)


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
