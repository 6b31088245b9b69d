"""The reference BM25 engines, built in memory over a live index's chunks: `rank-bm25`
(loops over every chunk per query term) and `bm25s` (sparse matrices, `pip install
'indexer-rag[fast]'`). Both score Lucene's BM25, as `postings` does (`retrieval.bm25`)."""

from __future__ import annotations

import math
from collections.abc import Callable

from numpy.typing import ArrayLike

from ...errors import UsageError

# a reference engine as `BM25Index.scores` asks it: a query's term ids -> every chunk's score
Scorer = Callable[[list[int]], ArrayLike]


def build_bm25s(corpus: list[list[int]], vocabulary: int, k1: float, b: float) -> Scorer:
    """bm25s's Lucene BM25 over chunks given as term ids (`vocabulary`: how many)."""
    try:
        import bm25s
    except ImportError:
        raise UsageError(
            "the bm25s engine needs the bm25s package: pip install 'indexer-rag[fast]'"
        ) from None
    model = bm25s.BM25(k1=k1, b=b, method="lucene", idf_method="lucene")
    model.scores = model.build_index_from_ids(
        unique_token_ids=list(range(vocabulary)), corpus_token_ids=corpus, show_progress=False
    )
    model.vocab_dict = {i: i for i in range(vocabulary)}
    model.unique_token_ids_set = set(range(vocabulary))
    scorer: Scorer = model.get_scores_from_ids  # bm25s has no type information
    return scorer


def lucene_okapi(corpus: list[list[int]], k1: float, b: float) -> Scorer:
    """rank-bm25's BM25Okapi with Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5))."""
    from rank_bm25 import BM25Okapi

    class LuceneOkapi(BM25Okapi):  # type: ignore[misc]  # rank_bm25 has no type information
        def _calc_idf(self, nd: dict[int, int]) -> None:
            for word, freq in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

    scorer: Scorer = LuceneOkapi(corpus, k1=k1, b=b).get_scores
    return scorer
