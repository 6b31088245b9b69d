"""Contextualizers for Contextual Retrieval: an LLM (through Ollama, `indexer.llm`) that
writes one or two sentences placing a chunk in its document, or a deterministic
extractive stand-in.

Contexts are cached by (model, prompt version, document hash, chunk hash) in
`<cache>/contexts.sqlite`, so rebuilding costs nothing. Every call is accounted for:
wall time, calls, cache hits, input and output tokens, and fallbacks (an empty reply, or
one that merely repeats the chunk, falls back to the extractive context).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..llm import LANGUAGE_NAMES, ChatClient, ReplyCache
from ..text.sentences import split_sentences
from ..types import Chunk, Document

PROMPT_VERSION = 1
MAX_CONTEXT_TOKENS = 120

SYSTEM = (
    "You write short retrieval context for document chunks. Reply in {language} with one or two "
    "sentences and nothing else."
)
USER = """<document>
{document}
</document>
<chunk>
{chunk}
</chunk>
Write one or two sentences that place this chunk within the document (which document, which topic, what it
applies to), so that the chunk can be found by search. Reply with the sentences only."""


@dataclass
class ContextStats:
    backend: str
    chunks: int = 0
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    fallbacks: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            k: (round(v, 2) if isinstance(v, float) else v)
            for k, v in self.__dict__.items()
            if k != "notes"
        }

    def summary(self) -> str:
        return (
            f"contextualized {self.chunks} chunks with {self.backend} in {self.seconds:.1f} s: "
            f"{self.calls} LLM calls, {self.cache_hits} cached, {self.input_tokens:,} input tokens, "
            f"{self.output_tokens:,} output tokens, {self.fallbacks} fallbacks to extractive"
        )


def extractive_context(doc: Document, chunk: Chunk) -> str:
    """Title, heading path and the first sentence of the chunk's section — no LLM."""
    section = doc.section_at(chunk.start)
    path = section.path if section else doc.title
    first = ""
    if section is not None:
        body = split_sentences(doc.text, section.body_start, section.end)
        if body:
            first = doc.text[body[0][0] : body[0][1]]
    first = " ".join(first.split())
    return f"{path}: {first}" if first else path


def _one_paragraph(text: str) -> str:
    text = re.sub(r"^\s*(context|bağlam)\s*:\s*", "", text.strip(), flags=re.I)
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if para:
            return para
    return ""


def _repeats_chunk(reply: str, chunk_text: str) -> bool:
    words = re.findall(r"\w+", reply.lower())
    if not words:
        return True
    norm_chunk = " ".join(re.findall(r"\w+", chunk_text.lower()))
    if " ".join(words) in norm_chunk:
        return True
    chunk_words = set(norm_chunk.split())
    return len(words) >= 8 and sum(w in chunk_words for w in words) / len(words) > 0.9


class Contextualizer:
    """Base: `context(doc, chunk)` with caching and accounting."""

    backend = "extractive"

    def __init__(self, cache: ReplyCache | None = None, tokenizer=None) -> None:
        self.cache = cache or ReplyCache(None, PROMPT_VERSION)
        self.stats = ContextStats(self.backend)
        self.tokenizer = tokenizer

    def context(self, doc: Document, chunk: Chunk, language: str) -> str:
        t0 = time.perf_counter()
        self.stats.chunks += 1
        try:
            return self._context(doc, chunk, language)
        finally:
            self.stats.seconds += time.perf_counter() - t0

    def _context(self, doc: Document, chunk: Chunk, language: str) -> str:
        return extractive_context(doc, chunk)


class OllamaContextualizer(Contextualizer):
    """An LLM on an Ollama server, through the official client's chat API
    (temperature 0, fixed seed), with the document and chunk inside delimiters."""

    def __init__(
        self, model: str, host: str | None = None, cache: ReplyCache | None = None, tokenizer=None
    ):
        self.client = ChatClient(
            model,
            host,
            purpose=" for contextual retrieval",
            fallback=", or use contextual:llm=extractive",
            missing="give the Ollama model: contextual:llm=ollama:gemma3:4b",
        )
        self.backend = self.client.backend
        super().__init__(cache, tokenizer)

    def _context(self, doc: Document, chunk: Chunk, language: str) -> str:
        chunk_hash = hashlib.sha256(chunk.text.encode()).hexdigest()
        cached = self.cache.get(self.backend, doc.hash, chunk_hash)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        response = self.client.chat(
            SYSTEM.format(language=LANGUAGE_NAMES.get(language, "the document's language")),
            USER.format(document=doc.text, chunk=chunk.text),
            max_tokens=MAX_CONTEXT_TOKENS * 2,
        )
        self.stats.calls += 1
        tokens_in, tokens_out = response.input_tokens, response.output_tokens
        self.stats.input_tokens += tokens_in
        self.stats.output_tokens += tokens_out
        reply = _one_paragraph(response.text)
        if self.tokenizer is not None and reply:
            tokens = self.tokenizer.encode(reply)
            if len(tokens) > MAX_CONTEXT_TOKENS:
                reply = self.tokenizer.decode(tokens[:MAX_CONTEXT_TOKENS]).rstrip() + "…"
        if _repeats_chunk(reply, chunk.text):
            self.stats.fallbacks += 1
            reply = extractive_context(doc, chunk)
        self.cache.put(
            self.backend,
            doc.hash,
            chunk_hash,
            reply=reply,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
        )
        return reply


def make_contextualizer(
    spec: str, cache_dir: Path | None, ollama_host: str | None = None, tokenizer=None
):
    cache = ReplyCache(cache_dir / "contexts.sqlite" if cache_dir else None, PROMPT_VERSION)
    if spec == "extractive":
        return Contextualizer(cache, tokenizer)
    if spec.startswith("ollama:"):
        return OllamaContextualizer(spec.split(":", 1)[1], ollama_host, cache, tokenizer)
    raise UsageError(f"llm must be extractive or ollama:<model>, not {spec!r}")
