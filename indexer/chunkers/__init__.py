"""The strategy registry: chunker kinds, named presets, and the `name:key=value` syntax."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameter, UnknownStrategy
from .base import Chunker, ChunkerContext, Param, coerce
from .blocks import BlocksChunker
from .code import AutoChunker, CodeChunker
from .contextual import ContextualChunker
from .fixed import FixedChunker
from .headers import HeadersChunker
from .parent import ParentChunker
from .semantic import SemanticChunker

REGISTRY: dict[str, type[Chunker]] = {}


def register(cls: type[Chunker]) -> type[Chunker]:
    REGISTRY[cls.kind] = cls
    return cls


for _cls in (
    FixedChunker, HeadersChunker, BlocksChunker, SemanticChunker, ParentChunker, ContextualChunker, CodeChunker,
    AutoChunker,
):
    register(_cls)

# preset name -> (kind, parameters); the seeds' variants and our defaults
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "fixed64": ("fixed", {"size": 64, "overlap": 16}),
    "fixed128": ("fixed", {"size": 128, "overlap": 0}),
    "fixed128o": ("fixed", {"size": 128, "overlap": 32}),
    "fixed256": ("fixed", {"size": 256, "overlap": 0}),
    "headers": ("headers", {}),
    "blocks": ("blocks", {}),
    "semantic": ("semantic", {}),
    "semantic75": ("semantic", {"threshold": 0.75}),
    "semantic70": ("semantic", {"threshold": 0.70}),
    "parent": ("parent", {"n": 2, "overlap": 1}),
    "parent1": ("parent", {"n": 1, "overlap": 0}),
    "contextual": ("contextual", {}),
    "code": ("code", {}),
    "auto": ("auto", {}),
}

_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class StrategySpec:
    """A resolved strategy: its collection name, chunker kind and every parameter value."""

    name: str
    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def create(self, tokenizer=None, embedder=None, name: str | None = None,
               context: ChunkerContext | None = None) -> Chunker:
        return REGISTRY[self.kind](name=name or self.name, tokenizer=tokenizer, embedder=embedder, context=context,
                                   **self.params)

    @property
    def uses_embedder(self) -> bool:
        return REGISTRY[self.kind].uses_embedder

    def describe(self) -> str:
        values = ",".join(f"{k}={_fmt(v)}" for k, v in self.params.items() if v is not None)
        return f"{self.kind}:{values}" if values else self.kind


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _slug(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return key if value else f"no{key}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(value)).strip("-._") or key


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise InvalidParameter(
            f"collection name {name!r} must be 1-100 characters of letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return name


def known_strategies() -> str:
    return f"presets: {', '.join(PRESETS)}; strategies: {', '.join(REGISTRY)}"


def parse_strategy(text: str, name: str | None = None) -> StrategySpec:
    """`fixed64`, `fixed:size=32,overlap=8` or `fixed64:table_header=true` -> StrategySpec.

    The collection name is the preset name, or for parameterised strategies one derived
    from the values given (`fixed-32-8`), unless `name` is passed.
    """
    text = text.strip()
    base, _, arg_text = text.partition(":")
    base = base.strip()
    overrides: dict[str, str] = {}
    if arg_text.strip():
        for pair in arg_text.split(","):
            key, eq, value = pair.partition("=")
            key = key.strip()
            if not key or not eq:
                raise InvalidParameter(f"strategy parameters look like key=value, not {pair.strip()!r} (in {text!r})")
            overrides[key] = value.strip()
    if base in PRESETS:
        kind, preset_values = PRESETS[base]
    elif base in REGISTRY:
        kind, preset_values = base, {}
    else:
        raise UnknownStrategy(f"unknown strategy {base!r}; {known_strategies()}")
    cls = REGISTRY[kind]
    params: dict[str, Param] = cls.params
    for key in overrides:
        if key not in params:
            raise InvalidParameter(
                f"unknown parameter {key!r} for strategy {kind} (known: {', '.join(params) or 'none'})"
            )
    values = {k: p.default for k, p in params.items()}
    values.update(preset_values)
    given = {k: coerce(k, params[k], v) for k, v in overrides.items()}
    values.update(given)
    if name is None:
        name = base if not given else "-".join([base] + [_slug(k, v) for k, v in given.items()])
    # validate the values now so a bad parameter fails before any work starts
    probe = object.__new__(cls)
    probe.values = values
    for key, value in values.items():
        setattr(probe, key, value)
    probe.validate()
    return StrategySpec(check_name(name), kind, values)
