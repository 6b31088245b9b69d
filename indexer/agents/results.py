"""Results sized for a model's context window: chunks as dicts, whole chunks cut at a
token budget, document lines rebuilt from stored chunk texts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..types import Chunk, Hit


def chunk_dict(c: Chunk) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": c.id,
        "doc_id": c.doc_id,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "kind": c.kind,
        "header": c.header,
        "n_tokens": c.n_tokens,
        "text": c.text,
    }
    if c.symbol:
        out["symbol"] = c.symbol
    if c.location:
        out["location"] = c.location  # a slide, a sheet's rows, a notebook cell
    if c.parent_id:
        out["parent_id"] = c.parent_id  # a child chunk: get_chunk(parent_id) gives its section
    return out


def locations(chunks: Iterable[Chunk], first: int, last: int) -> list[str]:
    """The locations (slides, sheet rows, cells) of the chunks on lines first..last, in
    document order, each once."""
    found: list[str] = []
    for c in sorted(chunks, key=lambda c: c.start):
        if c.location and c.start_line <= last and c.end_line >= first:
            if c.location not in found:
                found.append(c.location)
    return found


def hit_dict(hit: Hit) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rank": hit.rank,
        "score": round(float(hit.score), 4),
        **chunk_dict(hit.chunk),
    }
    if hit.match:
        out["match"] = hit.match  # an exact-match tier ranked it (score raised to keep rank order)
    if hit.same_text:
        out["same_text"] = hit.same_text  # other documents holding this very text
    if hit.child_ids:
        # parent-child: the text is the parent section these matched in
        out["matched_children"] = hit.child_ids
    return out


def fit(results: list[dict], budget: int) -> tuple[list[dict], int, int]:
    """The results in rank order while their texts fit `budget` tokens; the first one is
    shortened to fit when it alone is over. Returns (results, how many were left out,
    tokens used)."""
    kept: list[dict] = []
    used = 0
    for r in results:
        if used + r["n_tokens"] > budget:
            if not kept and budget > 0:
                kept.append(shorten(r, budget))
                used = kept[0]["n_tokens"]
            break
        kept.append(r)
        used += r["n_tokens"]
    return kept, len(results) - len(kept), used


def shorten(result: dict, budget: int) -> dict:
    """A result whose text is cut after `budget` tokens (at a token boundary; still a
    prefix of the stored text, with its end line adjusted)."""
    from ..text.tokens import get_tokenizer

    bounds = get_tokenizer().boundaries(result["text"])
    text = result["text"][: int(bounds[min(budget, len(bounds) - 1)])]
    return {
        **result,
        "text": text,
        "n_tokens": min(budget, len(bounds) - 1),
        "truncated": True,
        "end_line": result["start_line"] + text.count("\n"),
    }


def cut_lines(lines: list[str], budget: int) -> tuple[list[str], bool]:
    """The leading lines that fit `budget` tokens (at least one)."""
    from ..text.tokens import get_tokenizer

    tokenizer = get_tokenizer()
    used = 0
    for i, line in enumerate(lines):
        used += tokenizer.count(line + "\n")
        if used > budget and i > 0:
            return lines[:i], True
    return lines, False


def document_lines(chunks: Iterable[Chunk]) -> tuple[list[str], list[tuple[int, int]]]:
    """A document's lines as far as its stored chunks hold them, and the line ranges they
    do not hold exactly. Chunk texts are exact slices of the document, so overlapping
    chunks agree. Between two chunks the line breaks are known (from their line numbers):
    a gap of line breaks alone is rebuilt exactly; other characters in a gap (indentation,
    usually) come back as spaces before the next chunk, and the lines the gap spans are
    listed as not held exactly."""
    segments: list[list] = []  # [start offset, end offset, text, first line]
    for c in sorted(chunks, key=lambda c: (c.start, c.end)):
        if segments and c.start <= segments[-1][1]:
            last = segments[-1]
            if c.end > last[1]:
                last[2] += c.text[last[1] - c.start :]
                last[1] = c.end
        else:
            segments.append([c.start, c.end, c.text, c.start_line])
    parts: list[str] = []
    inexact: list[tuple[int, int]] = []
    line, prev_end = 1, 0
    for start, end, text, first in segments:
        breaks = max(first - line, 0)
        other = max(start - prev_end - breaks, 0)
        parts.append("\n" * breaks + " " * other)
        if other:
            inexact.append((line, first))
        parts.append(text)
        line, prev_end = first + text.count("\n"), end
    return "".join(parts).split("\n"), inexact
