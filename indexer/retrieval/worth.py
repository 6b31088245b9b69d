"""What the embedding side is worth on one collection, measured on the collection itself.

A collection's fusion is first chosen by its kind and language (`fusion.calibrated`); that
cannot see a collection where the embedder reads the text poorly (long technical English
for `use-m3`: library reference pages, system-call pages). So a build
probes the collection it made: it samples chunks, makes from each a short known-item query
of the chunk's own words (its most frequent content words that are not common in the
collection, drawn by frequency as `questions.simulate` makes terms from a passage), and asks
both sides for the chunk. Such probes favour BM25 (they share the chunk's words: BM25
finds 0.9-1.0 of them first), on every collection alike; what differs from one collection
to the next is how far the embedding side falls behind on them. Their ratio, `embedding
MRR@10 / BM25 MRR@10`, is the measure (stored with the build, `Entry.extra["fusion"]
["measured"]`); `factor` turns it into a factor on the embedding share of the kind's range:
1 where the embedder reads the collection about as well as the sets the range was fitted
on, less where it reads it worse. Made-up queries' lexical bias is corrected by comparing
like with like: the reference ratio is measured with the same probes on the fitting sets.
Deterministic: the same collection gives the same number.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..text.analyzer import STOPWORDS

# chunks probed, one query each: 2-7 s with use-m3 (e5-small: ~25 s idle; on the man-pages
# `auto`, 3.6 CPU s with bge-small-en, 2.5 with use-m3)
PROBES = 150
TERMS = 5  # content words per probe
DEPTH = 10  # MRR@10
COMMON = 0.05  # a word in more than this share of the collection's chunks is not a probe term
MIN_CHUNKS = 20  # a collection this small is not measured (too few probes to tell)
# (embedder, kind) -> the probe ratio at and above which the kind's embedding share is kept
# whole: a little under the lowest ratio measured on the sets that kind's range was fitted
# on (bench/labs/worth_lab.py); below it the share shrinks in proportion, to FLOOR at least
FULL_AT: dict[tuple[str, str], float] = {
    ("use-m3", "prose"): 0.65,
    ("use-m3", "code"): 0.43,
    ("e5-small", "prose"): 0.5,
    # bge's probes read 0.51-0.63 on SciPy's and the system-call pages, where on real
    # questions it beats BM25 alone: nothing measured so far is narrowed
    ("bge-small-en", "prose"): 0.45,
    ("bge-small-en", "code"): 0.45,
}
FLOOR = 0.4  # the embedding side keeps at least this share of its range: it breaks BM25's ties
STEP = 0.05  # the factor is rounded to this step (the ratio's noise changes nothing)
_WORD = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]{2,}")


@dataclass(frozen=True)
class Probe:
    query: str
    target: str  # the chunk id the query was made from


def share(ratio: float, full: float | None) -> float:
    """The factor on the embedding share for a probe ratio: 1.0 at or above `full` (None:
    no reference for this embedder and kind, nothing narrowed), else `ratio / full`
    rounded to STEP, never under FLOOR.

    >>> share(0.9, 0.65), share(0.39, 0.65), share(0.1, 0.65), share(0.3, None)
    (1.0, 0.6, 0.4, 1.0)
    """
    if full is None or ratio >= full:
        return 1.0
    return max(FLOOR, round(round(ratio / full / STEP) * STEP, 2))


def factor(embedder: str, kind: str, measured: Mapping[str, Any] | None) -> float:
    """The factor on a collection's embedding share from what was measured on it."""
    if not measured or not isinstance(measured.get("ratio"), (int, float)):
        return 1.0
    return share(measured["ratio"], FULL_AT.get((embedder, kind)))


def probe_terms(
    text: str, common: Callable[[str], bool], rng: random.Random, n: int = TERMS
) -> list[str]:
    """Up to n distinct content words of `text`, drawn by their frequency in it (words in
    `common` and stop words left out), in the order drawn."""
    counts = Counter(w for w in _WORD.findall(text) if w.lower() not in STOPWORDS and not common(w))
    words = list(counts)
    out: list[str] = []
    while words and len(out) < n:
        pick = rng.choices(words, weights=[counts[w] for w in words])[0]
        out.append(pick)
        words.remove(pick)
    return out


def make_probes(
    ids: Sequence[str],
    text_of: Callable[[list[str]], dict[str, str]],
    common: Callable[[str], bool],
    n: int = PROBES,
    seed: int = 0,
) -> list[Probe]:
    """Probes from up to n chunks sampled (seeded) from `ids`; a chunk with fewer than
    three usable words makes none."""
    rng = random.Random(seed)
    chosen = sorted(rng.sample(list(ids), min(n, len(ids))))
    texts = text_of(chosen)
    out: list[Probe] = []
    for cid in chosen:
        terms = probe_terms(texts.get(cid, ""), common, rng)
        if len(terms) >= 3:
            out.append(Probe(" ".join(terms), cid))
    return out


def reciprocal_rank(found: Sequence[str], target: str, depth: int = DEPTH) -> float:
    return next((1.0 / r for r, cid in enumerate(found[:depth], start=1) if cid == target), 0.0)
