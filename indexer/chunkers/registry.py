"""The strategy registry: chunker kinds, named presets, the `name:key=value` syntax, and
the collection name every spelling of a strategy resolves to. Strategies register
here (`chunkers/__init__.py` registers the built-in ones); a strategy that wraps another
(contextual) resolves it here without importing the package."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameter, UnknownStrategy, UsageError
from ..text.tokens import Tokenizer
from .base import Chunker, ChunkerContext, check_known, resolve_values

REGISTRY: dict[str, type[Chunker]] = {}


def register(cls: type[Chunker]) -> type[Chunker]:
    REGISTRY[cls.kind] = cls
    return cls


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

DEFAULT_STRATEGY = "auto"  # code -> code, Markdown/HTML -> blocks, other text -> headers

_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class StrategySpec:
    """A resolved strategy: its collection name, chunker kind and every parameter value."""

    name: str
    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def create(
        self,
        tokenizer: Tokenizer | None = None,
        embedder: Any = None,
        name: str | None = None,
        context: ChunkerContext | None = None,
    ) -> Chunker:
        return REGISTRY[self.kind](
            name=name or self.name,
            tokenizer=tokenizer,
            embedder=embedder,
            context=context,
            **self.params,
        )

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

    The collection name is `name` when given, else `canonical_name` of the resolved
    kind and values: every spelling of the same strategy names the same collection
    (`fixed:size=64,overlap=16` is `fixed64`).
    """
    text = text.strip()
    base, _, arg_text = text.partition(":")
    base = base.strip()
    overrides = _overrides(text, arg_text)
    if base in PRESETS:
        kind, preset_values = PRESETS[base]
    elif base in REGISTRY:
        kind, preset_values = base, {}
    else:
        raise UnknownStrategy(f"unknown strategy {base!r}; {known_strategies()}")
    cls = REGISTRY[kind]
    check_known(kind, cls.params, overrides)
    values = resolve_values(cls.params, preset_values, overrides)
    # validate the values now so a bad parameter fails before any work starts
    probe = object.__new__(cls)
    probe.set_values(values)
    probe.validate()
    return StrategySpec(
        check_name(name if name is not None else canonical_name(kind, values)), kind, values
    )


def collection_names(strategy: str) -> tuple[str, ...]:
    """The collection names a strategy as a user gives it is looked up by, in order: the
    name its spec builds, in the canonical spelling (`fixed:size=100` -> `fixed-100`,
    `fixed:size=64,overlap=16` -> `fixed64`), then the name as given when it differs (a
    custom `--name`, or a collection built before names were canonical). The store is
    asked with these: it does not know the strategy syntax. Text that is neither a
    strategy nor a possible collection name (`../../etc`) raises the parse error."""
    given = strategy.strip()
    try:
        name = parse_strategy(given).name
    except UsageError:
        if _NAME.match(given):  # a custom --name, or a name built before names were canonical
            return (given,)
        raise  # no collection can have this name: it is not a strategy (never echoed into a command)
    return (name,) if name == given else (name, given)


def collection_name(strategy: str) -> str:
    """The collection name a strategy spec builds (see `collection_names`)."""
    return collection_names(strategy)[0]


def _overrides(text: str, arg_text: str) -> dict[str, str]:
    """`key=value,key=value` -> {key: value}; a key given twice is an error, not a guess."""
    overrides: dict[str, str] = {}
    if not arg_text.strip():
        return overrides
    for pair in arg_text.split(","):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not key or not eq:
            raise InvalidParameter(
                f"strategy parameters look like key=value, not {pair.strip()!r} (in {text!r})"
            )
        if key in overrides:
            raise InvalidParameter(f"parameter {key!r} is given twice in {text!r}; give it once")
        overrides[key] = value.strip()
    return overrides


def canonical_name(kind: str, values: dict[str, Any]) -> str:
    """The collection name of a resolved strategy, whatever spelling resolved to it.

    The preset with exactly these values (`fixed:size=64,overlap=16` -> `fixed64`); else
    the nearest base (the kind or one of its presets: the fewest differing parameters,
    then the latest-differing, then the kind) followed by the values that differ from it,
    in the kind's parameter order: bare while they run from the first parameter on
    (`fixed:overlap=8,size=32` -> `fixed-32-8`), named after a gap (`fixed:overlap=16` ->
    `fixed-overlap-16`, so it is not `fixed:size=16`'s `fixed-16`)."""
    params = list(REGISTRY[kind].params)
    defaults = {k: p.default for k, p in REGISTRY[kind].params.items()}
    bases = [(name, {**defaults, **preset}) for name, (k, preset) in PRESETS.items() if k == kind]
    for name, base_values in bases:
        if base_values == values:
            return name
    if kind not in PRESETS:
        bases.insert(0, (kind, defaults))
    name, base_values = _nearest_base(kind, params, values, bases)
    return "-".join([name, *_differing_slugs(params, values, base_values)])


def _differing(params: list[str], values: dict[str, Any], base_values: dict[str, Any]) -> list[int]:
    """The positions of the parameters whose values differ from a base's."""
    return [i for i, k in enumerate(params) if values.get(k) != base_values.get(k)]


def _nearest_base(
    kind: str, params: list[str], values: dict[str, Any], bases: list[tuple[str, dict[str, Any]]]
) -> tuple[str, dict[str, Any]]:
    """The base with the fewest differing parameters, then the latest-differing, then the kind."""

    def rank(item: tuple[int, tuple[str, dict[str, Any]]]) -> tuple[int, list[int], bool, int]:
        order, (name, base_values) = item
        diff = _differing(params, values, base_values)
        return (len(diff), [-i for i in diff], name != kind, order)

    _, nearest = min(enumerate(bases), key=rank)
    return nearest


def _differing_slugs(
    params: list[str], values: dict[str, Any], base_values: dict[str, Any]
) -> list[str]:
    """The values that differ from the base: bare while they run from the first parameter
    on, named after a gap (booleans are named by their slug either way)."""
    parts = []
    for n, i in enumerate(_differing(params, values, base_values)):
        key = params[i]
        slug = _slug(key, values[key])
        parts.append(slug if n == i or isinstance(values[key], bool) else f"{key}-{slug}")
    return parts
