"""The chunker plug-in interface: named, typed parameters and one `chunk(document)` method.

Batching, token spans, ids and hashing live here so that a strategy only decides where
to cut. Every chunk a strategy makes is an exact slice of its document.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import Any, ClassVar
from zlib import crc32

import numpy as np

from ..errors import InvalidParameter
from ..text.spans import index_at, strip_span
from ..text.tokens import Tokenizer, get_tokenizer
from ..types import Chunk, Document, join_path

__all__ = [
    "Chunker",
    "ChunkerContext",
    "Param",
    "coerce",
    "header_of",
    "section_path",
    "strip_span",
]


@dataclass(frozen=True)
class ChunkerContext:
    """What a chunker may use besides the document: the tokenizer sizes are counted in,
    the embedder (semantic), a cache folder and an Ollama host (contextual's LLM)."""

    tokenizer: Tokenizer | None = None
    embedder: Any = None
    cache_dir: Path | None = None
    ollama_host: str | None = None


@dataclass(frozen=True, slots=True)
class Param:
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()


def coerce(name: str, param: Param, value: Any) -> Any:
    """Turn a command-line string (or a Python value) into the parameter's type; None
    stays None where it is the default (an optional parameter left unset)."""
    if value is None and param.default is None:
        return None
    if param.type is bool:
        return _coerce_bool(name, value)
    if param.type in (int, float):
        return _coerce_number(name, param.type, value)
    return _coerce_choice(name, param, value)


def _coerce_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", ""):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InvalidParameter(f"{name} must be true or false, not {value!r}")


def _coerce_number(name: str, kind: type, value: Any) -> int | float:
    try:
        number: int | float = kind(value)
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise InvalidParameter(f"{name} must be {what}, not {value!r}") from None
    return number


def _coerce_choice(name: str, param: Param, value: Any) -> str:
    text = str(value)
    if param.choices and text not in param.choices:
        raise InvalidParameter(
            f"{name} must be one of {', '.join(map(str, param.choices))}, not {text!r}"
        )
    return text


def check_known(kind: str, params: dict[str, Param], names: Iterable[str]) -> None:
    """Raise naming the first of `names` the strategy has no parameter for."""
    for name in names:
        if name not in params:
            known = ", ".join(params) or "none"
            raise InvalidParameter(
                f"unknown parameter {name!r} for strategy {kind} (known: {known})"
            )


def resolve_values(
    params: dict[str, Param], preset: dict[str, Any], given: dict[str, Any]
) -> dict[str, Any]:
    """Every parameter's value: its default, then the preset's, then the given ones (coerced)."""
    values = {k: p.default for k, p in params.items()}
    values.update(preset)
    values.update({k: coerce(k, params[k], v) for k, v in given.items()})
    return values


class Chunker(ABC):
    """A chunking strategy. Subclasses set `kind`, `params` and implement `chunk`."""

    kind: ClassVar[str]
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    uses_embedder: ClassVar[bool] = False

    def __init__(
        self,
        name: str | None = None,
        tokenizer: Tokenizer | None = None,
        embedder: Any = None,
        context: ChunkerContext | None = None,
        **values: Any,
    ) -> None:
        check_known(self.kind, self.params, sorted(values))
        self.set_values(resolve_values(self.params, {}, values))
        self.name = name or self.kind
        context = context or ChunkerContext()
        self.context = context
        self.tokenizer = tokenizer or context.tokenizer or get_tokenizer()
        self.embedder = embedder or context.embedder
        self.validate()

    def set_values(self, values: dict[str, Any]) -> None:
        """Keep the parameter values, each also as an attribute (declared on the strategy)."""
        self.values = values
        for key, value in values.items():
            setattr(self, key, value)

    def validate(self) -> None:
        """Check parameter values; raise InvalidParameter naming the parameter."""

    def require(self, condition: bool, message: str) -> None:
        if not condition:
            raise InvalidParameter(message)

    def chunk(self, doc: Document) -> list[Chunk]:
        """Cut one document into chunks, in document order. A strategy implements this
        or `iter_chunks`."""
        if type(self).iter_chunks is Chunker.iter_chunks:
            raise NotImplementedError(
                f"{type(self).__name__} implements neither chunk nor iter_chunks"
            )
        return list(self.iter_chunks(doc))

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        """The chunks of one document, made as they are taken: a build holds a batch of
        them, not a whole file's (the windowed and sentence-level strategies yield). A
        generator, so the work starts when the first chunk is taken (and is timed there)."""
        yield from self.chunk(doc)

    def parent_chunks(self, doc: Document) -> list[Chunk]:
        """The chunks search returns in place of this strategy's chunks (parent-child
        strategies); none for the others."""
        return []

    def iter_parent_chunks(self, doc: Document) -> Iterator[Chunk]:
        """`parent_chunks`, made as they are taken (a build writes them in batches)."""
        yield from self.parent_chunks(doc)

    def build_report(self) -> dict | None:
        """What the strategy measured while building (LLM calls and tokens...), if anything."""
        return None

    def build_summary(self) -> str | None:
        """The same as one line for people, if anything."""
        return None

    # -- helpers for strategies ----------------------------------------------------------
    def bounds(self, doc: Document) -> np.ndarray:
        """Token boundaries of the whole document (cached on it)."""
        cached = doc.derived.bounds.get(self.tokenizer.name)
        if cached is None:
            cached = doc.derived.bounds[self.tokenizer.name] = self.tokenizer.boundaries(doc.text)
        return cached

    def count(self, text: str) -> int:
        return self.tokenizer.count(text)

    def make_chunk(
        self,
        doc: Document,
        start: int,
        end: int,
        kind: str,
        header: str = "",
        heading_path: tuple[str, ...] | None = None,
        n_tokens: int | None = None,
        **extra: Any,
    ) -> Chunk:
        path = join_path(heading_path) if heading_path is not None else section_path(doc, start)
        return self.new_chunk(
            doc,
            start,
            end,
            kind=kind,
            header=header,
            path=path,
            n_tokens=n_tokens,
            start_line=doc.line_of(start),
            end_line=doc.line_of(max(start, end - 1)),
            **extra,
        )

    def new_chunk(
        self,
        doc: Document,
        start: int,
        end: int,
        kind: str,
        header: str,
        path: str,
        n_tokens: int | None,
        start_line: int,
        end_line: int,
        **extra: Any,
    ) -> Chunk:
        """A chunk from values already computed (the fast path for token windows).

        The id is the text's content hash (16 hex of sha1) plus a CRC-32 of where the
        chunk sits (strategy, document, span, kind, header): stable across runs, and two
        chunks share an id only if they have the same text and position. A child's parent is
        part of where it sits: a child whose section changed around it is a new record, not
        one left pointing at the section as it was."""
        text = doc.text[start:end]
        content_hash = sha1(text.encode("utf-8")).hexdigest()[:16]
        where = f"{self.name}\x00{doc.doc_id}\x00{start}\x00{end}\x00{kind}\x00{header}".encode(
            "utf-8"
        )
        if extra.get("parent_id"):
            where += b"\x00" + extra["parent_id"].encode("utf-8")
        chunk = Chunk(
            id=f"{content_hash}{crc32(where):08x}",
            doc_id=doc.doc_id,
            text=text,
            start=start,
            end=end,
            start_line=start_line,
            end_line=end_line,
            kind=kind,
            header=header,
            heading_path=path,
            n_tokens=self.count(text) if n_tokens is None else n_tokens,
            parent_id="",
            context="",
            symbol="",
            parent_symbol="",
            language=doc.language,
            strategy=self.name,
            hash=content_hash,
        )
        if doc.pages:
            chunk.start_page, chunk.end_page = doc.page_at(start), doc.page_at(max(start, end - 1))
        if doc.marks:
            chunk.location = doc.location(start, end)
        for key, value in extra.items():
            setattr(chunk, key, value)
        return chunk


def section_path(doc: Document, offset: int) -> str:
    """The joined heading path of the section an offset falls in (paths joined once per document)."""
    cached = doc.derived.section_index
    if cached is None:
        cached = doc.derived.section_index = (
            [s.start for s in doc.sections],
            [s.path for s in doc.sections],
        )
    starts, paths = cached
    if not starts:
        return doc.title
    return paths[index_at(starts, offset)]


def header_of(path: tuple[str, ...], *extra: str) -> str:
    return "\n".join(part for part in (join_path(path), *extra) if part)
