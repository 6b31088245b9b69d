"""Contextualizers for Contextual Retrieval: an LLM (through Ollama) that writes one or two
sentences placing a chunk in its document, or a deterministic extractive stand-in.

Contexts are cached by (model, prompt version, document hash, chunk hash), so rebuilding
costs nothing. Every call is accounted for: wall time, calls, cache hits, input and
output tokens, and fallbacks (an empty reply, or one that merely repeats the chunk,
falls back to the extractive context).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..text.sentences import split_sentences
from ..types import Chunk, Document

PROMPT_VERSION = 1
MAX_CONTEXT_TOKENS = 120

SYSTEM = ("You write short retrieval context for document chunks. Reply in {language} with one or two "
          "sentences and nothing else.")
USER = """<document>
{document}
</document>
<chunk>
{chunk}
</chunk>
Write one or two sentences that place this chunk within the document (which document, which topic, what it
applies to), so that the chunk can be found by search. Reply with the sentences only."""

LANGUAGE_NAMES = {"tr": "Turkish", "en": "English"}


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
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items() if k != "notes"}

    def summary(self) -> str:
        return (f"contextualized {self.chunks} chunks with {self.backend} in {self.seconds:.1f} s: "
                f"{self.calls} LLM calls, {self.cache_hits} cached, {self.input_tokens:,} input tokens, "
                f"{self.output_tokens:,} output tokens, {self.fallbacks} fallbacks to extractive")


class ContextCache:
    def __init__(self, path: Path | None) -> None:
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path) if path else ":memory:", timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS contexts (model TEXT, prompt INTEGER, doc TEXT, chunk TEXT, context TEXT, "
            "input_tokens INTEGER, output_tokens INTEGER, PRIMARY KEY (model, prompt, doc, chunk)) WITHOUT ROWID"
        )
        self._db.commit()

    def get(self, model: str, doc_hash: str, chunk_hash: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT context FROM contexts WHERE model=? AND prompt=? AND doc=? AND chunk=?",
                (model, PROMPT_VERSION, doc_hash, chunk_hash),
            ).fetchone()
        return row[0] if row else None

    def put(self, model: str, doc_hash: str, chunk_hash: str, context: str, tokens_in: int, tokens_out: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO contexts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (model, PROMPT_VERSION, doc_hash, chunk_hash, context, tokens_in, tokens_out),
            )
            self._db.commit()


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

    def __init__(self, cache: ContextCache | None = None, tokenizer=None) -> None:
        self.cache = cache or ContextCache(None)
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

    def __init__(self, model: str, host: str | None = None, cache: ContextCache | None = None, tokenizer=None):
        from .ollama import resolve_host

        if not model:
            raise UsageError("give the Ollama model: contextual:llm=ollama:gemma3:4b")
        self.backend = f"ollama:{model}"
        super().__init__(cache, tokenizer)
        self.model = model
        self.host = resolve_host(host)
        self._client = None

    def _chat(self, system: str, user: str):
        import ollama

        from .ollama import ollama_errors

        if self._client is None:
            self._client = ollama.Client(host=self.host)
        with ollama_errors(self.host, self.model, " for contextual retrieval", ", or use contextual:llm=extractive"):
            return self._client.chat(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                options={"temperature": 0, "seed": 42, "num_predict": MAX_CONTEXT_TOKENS * 2},
            )

    def _context(self, doc: Document, chunk: Chunk, language: str) -> str:
        chunk_hash = hashlib.sha256(chunk.text.encode()).hexdigest()
        cached = self.cache.get(self.backend, doc.hash, chunk_hash)
        if cached is not None:
            self.stats.cache_hits += 1
            return cached
        response = self._chat(
            SYSTEM.format(language=LANGUAGE_NAMES.get(language, "the document's language")),
            USER.format(document=doc.text, chunk=chunk.text),
        )
        self.stats.calls += 1
        tokens_in = int(getattr(response, "prompt_eval_count", 0) or 0)
        tokens_out = int(getattr(response, "eval_count", 0) or 0)
        self.stats.input_tokens += tokens_in
        self.stats.output_tokens += tokens_out
        reply = _one_paragraph(response.message.content or "")
        if self.tokenizer is not None and reply:
            tokens = self.tokenizer.encode(reply)
            if len(tokens) > MAX_CONTEXT_TOKENS:
                reply = self.tokenizer.decode(tokens[:MAX_CONTEXT_TOKENS]).rstrip() + "…"
        if _repeats_chunk(reply, chunk.text):
            self.stats.fallbacks += 1
            reply = extractive_context(doc, chunk)
        self.cache.put(self.backend, doc.hash, chunk_hash, reply, tokens_in, tokens_out)
        return reply


def make_contextualizer(spec: str, cache_dir: Path | None, ollama_host: str | None = None, tokenizer=None):
    cache = ContextCache(cache_dir / "contexts.sqlite" if cache_dir else None)
    if spec == "extractive":
        return Contextualizer(cache, tokenizer)
    if spec.startswith("ollama:"):
        return OllamaContextualizer(spec.split(":", 1)[1], ollama_host, cache, tokenizer)
    raise UsageError(f"llm must be extractive or ollama:<model>, not {spec!r}")
