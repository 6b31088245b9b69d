"""contextual: Anthropic's Contextual Retrieval on top of a base strategy.

For each chunk of the base strategy (headers by default), an LLM that sees the whole
document writes one or two sentences placing the chunk in it, in the document's
language. The context goes into `indexed_text` — so into the embedding and BM25 — and
never into `text`. `llm=extractive` is a deterministic offline stand-in that needs no
LLM (title, heading path and the section's first sentence); it is named as such in
every report. Ingestion cost grows with chunks × document length: the build reports
wall time, LLM calls, cache hits and tokens.
"""

from __future__ import annotations

from ..errors import InvalidParameter
from ..text.analyzer import detect_language
from ..types import PATH_SEP, Chunk, Document
from .base import Chunker, Param
from .contexts import Contextualizer, make_contextualizer
from .registry import PRESETS, REGISTRY, parse_strategy


class ContextualChunker(Chunker):
    kind = "contextual"
    description = "base strategy's chunks with an LLM-written context in indexed_text"
    params = {
        "base": Param(str, "headers", "base strategy (preset or kind) whose chunks get a context"),
        "llm": Param(
            str, "ollama:gemma3:4b", "ollama:<model>, or extractive (offline stand-in, no LLM)"
        ),
    }
    # the parameters, set from `params` by Chunker.__init__
    base: str
    llm: str

    def validate(self) -> None:
        base = self.base.split(":", 1)[0]
        self.require(
            base in PRESETS or base in REGISTRY, f"base ({self.base}) is not a known strategy"
        )
        self.require(
            base not in ("contextual", "parent", "semantic"),
            f"base ({self.base}) must be a structural strategy (headers, blocks, fixed...)",
        )
        if not (self.llm == "extractive" or self.llm.startswith("ollama:")):
            raise InvalidParameter(f"llm must be extractive or ollama:<model>, not {self.llm!r}")

    @property
    def base_chunker(self) -> Chunker:
        """The base strategy's chunker, whose chunks get a context (made on first use)."""
        if getattr(self, "_base_chunker", None) is None:
            spec = parse_strategy(self.base)
            self._base_chunker = spec.create(
                tokenizer=self.tokenizer, name=f"{self.name}.base", context=self.context
            )
        return self._base_chunker

    @property
    def contextualizer(self) -> Contextualizer:
        if getattr(self, "_contextualizer", None) is None:
            self._contextualizer = make_contextualizer(
                self.llm, self.context.cache_dir, self.context.ollama_host, self.tokenizer
            )
        return self._contextualizer

    @contextualizer.setter
    def contextualizer(self, value: Contextualizer) -> None:
        self._contextualizer = value

    def chunk(self, doc: Document) -> list[Chunk]:
        language = detect_language([doc.text])
        out = []
        for base in self.base_chunker.chunk(doc):
            context = self.contextualizer.context(doc, base, language)
            out.append(
                self.make_chunk(
                    doc,
                    base.start,
                    base.end,
                    kind=base.kind,
                    header=base.header,
                    heading_path=tuple(base.heading_path.split(PATH_SEP)),
                    n_tokens=base.n_tokens,
                    symbol=base.symbol,
                    parent_symbol=base.parent_symbol,
                    context=context,
                )
            )
        return out

    def build_report(self) -> dict:
        return self.contextualizer.stats.to_dict()

    def build_summary(self) -> str:
        return self.contextualizer.stats.summary()
