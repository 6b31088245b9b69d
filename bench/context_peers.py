"""The peers' compressors on the same candidates, with the same embedder, mapped back to
exact document spans so they are scored as the packer is.

- LlamaIndex's `SentenceEmbeddingOptimizer` (llama-index-core): per candidate chunk, its
  sentences (LlamaIndex's own splitter) ranked by the embedder's cosine with the query,
  each kept sentence with one sentence of context on either side (its defaults), the
  top `percentile` of each chunk kept;
- LangChain's `EmbeddingsFilter` (langchain-classic) after a sentence splitter, the
  pipeline LangChain's contextual-compression guide builds: the candidates split into
  sentences, the sentences ranked by cosine with the query.

Each gives pieces of text in its own order; pieces are handed over in that order until
the budget is spent, the last cut at it (as whole chunks are), and each piece is found in
its chunk to give its place in the document.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from indexer.evaluation.context_eval import Place
from indexer.types import Hit

PERCENTILES = (0.25, 0.5)


class Memo:
    """The embedder, remembering what it embedded (the peers embed the same sentences)."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.seen: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if new:
            self.seen.update(zip(new, self.embedder.embed_documents(new)))
        return np.stack([self.seen[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)


def _embedder_for_llama(embedder):
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class Adapter(BaseEmbedding):
        model_name: str = embedder.name

        def _get_query_embedding(self, query: str) -> list[float]:
            return embedder.embed_query(query).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embedder.embed_documents([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

    return Adapter()


def _embedder_for_langchain(embedder):
    from langchain_core.embeddings import Embeddings

    class Adapter(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_query(text).tolist()

    return Adapter()


def _place(piece: str, hit: Hit, after: int = 0) -> Place | None:
    """Where a piece of a chunk's text lies in its document (None if it is not there)."""
    c = hit.chunk
    text = piece.strip()
    at = c.text.find(text, after) if text else -1
    if at < 0:
        at = c.text.find(text) if text else -1
    return (c.doc_id, c.start + at, c.start + at + len(text)) if at >= 0 else None


def cut(pieces: list[tuple[Place, str]], budget: int, tokenizer) -> tuple[list[Place], int]:
    used, out = 0, []
    for place, text in pieces:
        n = tokenizer.count(text)
        if used + n <= budget:
            out.append(place)
            used += n
            continue
        rest = budget - used
        if rest > 0:
            bounds = tokenizer.boundaries(text)
            end = int(bounds[min(rest, len(bounds) - 1)])
            out.append((place[0], place[1], place[1] + end))
            used += rest
        break
    return out, used


class LlamaIndexOptimizer:
    name = "LlamaIndex SentenceEmbeddingOptimizer"

    def __init__(self, embedder, percentile: float) -> None:
        from llama_index.core.postprocessor import SentenceEmbeddingOptimizer

        self.optimizer = SentenceEmbeddingOptimizer(embed_model=_embedder_for_llama(embedder),
                                                    percentile_cutoff=percentile)
        self.split = self.optimizer._tokenizer_fn  # noqa: SLF001 (its own splitter, to map back)
        self.label = f"{self.name} (top {int(percentile * 100)}%)"

    def pieces(self, query: str, hits: list[Hit]) -> list[tuple[Place, str]]:
        from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

        nodes = [NodeWithScore(node=TextNode(text=h.chunk.text), score=h.score) for h in hits]
        try:
            kept = self.optimizer.postprocess_nodes(nodes, QueryBundle(query))
        except ValueError:  # "Optimizer returned zero sentences."
            return []
        out = []
        for hit, node in zip(hits, kept):
            text = hit.chunk.text
            sentences = self.split(text)
            spans, pos = [], 0  # each sentence's place in the chunk
            for sentence in sentences:
                at = text.find(sentence.strip(), pos)
                spans.append((at, at + len(sentence.strip())) if at >= 0 else None)
                pos = at + len(sentence.strip()) if at >= 0 else pos
            for i in self._kept(sentences, node.node.get_content()):
                window = [sp for sp in spans[max(i - 1, 0):i + 2] if sp]
                if window:
                    s, e = window[0][0], window[-1][1]
                    c = hit.chunk
                    out.append(((c.doc_id, c.start + s, c.start + e), text[s:e]))
        return out

    @staticmethod
    def _kept(sentences: list[str], joined: str) -> list[int]:
        """The sentences whose windows (one sentence of context either side) the
        optimizer kept, in the order it kept them (it joins the windows with spaces)."""
        windows = {" ".join(sentences[max(i - 1, 0):i + 2]): i for i in range(len(sentences))}
        out, pos = [], 0
        while pos < len(joined):
            found = next((w for w in sorted(windows, key=len, reverse=True) if joined.startswith(w, pos)), None)
            if found is None:
                break
            out.append(windows[found])
            pos += len(found) + 1
        return out


class LangChainFilter:
    name = "LangChain EmbeddingsFilter"
    label = name

    def __init__(self, embedder) -> None:
        from langchain_classic.retrievers.document_compressors import EmbeddingsFilter

        # its default cosine lives in langchain-community; the same function, written out
        self.filter = EmbeddingsFilter(embeddings=_embedder_for_langchain(embedder), k=10_000, similarity_fn=_cosine)

    def pieces(self, query: str, hits: list[Hit]) -> list[tuple[Place, str]]:
        from langchain_core.documents import Document
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=0,
                                                  separators=["\n\n", "\n", ". ", "? ", "! ", " "],
                                                  keep_separator="end")
        docs: list[Any] = []
        for i, hit in enumerate(hits):
            for piece in splitter.split_text(hit.chunk.text):
                docs.append(Document(page_content=piece, metadata={"hit": i}))
        kept = self.filter.compress_documents(docs, query) if docs else []
        out = []
        for doc in kept:
            hit = hits[doc.metadata["hit"]]
            place = _place(doc.page_content, hit)
            if place:
                out.append((place, doc.page_content.strip()))
        return out


def _cosine(x, y) -> np.ndarray:
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def peers(embedder) -> list[Any]:
    return [*(LlamaIndexOptimizer(embedder, p) for p in PERCENTILES), LangChainFilter(embedder)]


def peer_context(peer, query: str, hits: list[Hit], budget: int, tokenizer) -> tuple[list[Place], int]:
    return cut(peer.pieces(query, hits), budget, tokenizer)


__all__ = ["LangChainFilter", "LlamaIndexOptimizer", "Memo", "cut", "peer_context", "peers"]
