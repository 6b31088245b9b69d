"""A tool call's arguments checked against the tool function's signature before the MCP
SDK sees them: an unknown argument is an error that lists the accepted ones (the SDK drops
it silently, so a misspelt `stratgy` searched the default collection), and a wrong type is
one line naming the argument and what it takes (the SDK returns pydantic's dump).

    check_arguments("search", search_function, {"query": "x", "k": "five"})
    UsageError: search: argument 'k' must be an integer, not "five"
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import UsageError

_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "null": "null",
}


def check_arguments(tool: str, fn: Callable[..., Any], arguments: dict[str, Any]) -> None:
    """Raise a one-line `UsageError` for the first problem with `arguments` for `fn`."""
    params = inspect.signature(fn).parameters
    accepted = ", ".join(params) or "none"
    check_known(tool, params, arguments, accepted)
    hints = typing.get_type_hints(fn)
    check_present(tool, params, hints, arguments, accepted)
    for name, value in arguments.items():
        try:
            TypeAdapter(hints[name]).validate_python(value)
        except ValidationError:
            raise UsageError(
                f"{tool}: argument {name!r} must be {expected(hints[name])}, not {_shown(value)}"
            ) from None


def check_known(
    tool: str, params: Mapping[str, inspect.Parameter], arguments: dict[str, Any], accepted: str
) -> None:
    """No argument the function does not take."""
    unknown = [name for name in arguments if name not in params]
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        raise UsageError(
            f"{tool}: unknown argument{'s' if len(unknown) > 1 else ''} {names}; accepted: {accepted}"
        )


def check_present(
    tool: str,
    params: Mapping[str, inspect.Parameter],
    hints: dict[str, Any],
    arguments: dict[str, Any],
    accepted: str,
) -> None:
    """Every argument without a default is given."""
    for name, param in params.items():
        if param.default is inspect.Parameter.empty and name not in arguments:
            raise UsageError(
                f"{tool}: missing argument {name!r} ({expected(hints[name])}); accepted: {accepted}"
            )


def expected(annotation: Any) -> str:
    """What an annotation takes, in words: `an integer or null`, `one of "hybrid", "bm25"`."""
    return _words(TypeAdapter(annotation).json_schema())


def _words(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_words(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        items = _words(schema.get("items", {}))
        return (
            f"a list of {items.removeprefix('a ').removeprefix('an ')}s"
            if items.startswith("a")
            else "a list"
        )
    return _TYPES.get(schema.get("type", ""), "a value")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
