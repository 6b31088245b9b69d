"""Options that arrive as one object: a command function takes one record per group of
options (where the index lives, how to search, what a build takes, the output switches)
instead of a parameter per option, and `build` and `watch` share theirs.

`grouped(name, Record, *options)` adds the options to a command as usual (`--help` and the
reference pages list them one by one) and hands the function `name=Record(**values)`.
Records only hold what was typed: making the library's objects from them (`Settings`,
`BuildOptions`, `SearchOptions`) happens inside the command, where errors are turned into
one line (`handle_errors`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def grouped(
    name: str, record: Callable[..., Any], *options: Callable[[Any], Any]
) -> Callable[[F], F]:
    """A decorator adding `options` to a command, whose function takes `name`: the
    `record` made of their values."""

    def decorate(func: F) -> F:
        fields: list[str] = []

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            own = {field: kwargs.pop(field) for field in fields}
            kwargs[name] = record(**own)
            return func(*args, **kwargs)

        before = len(getattr(wrapper, "__click_params__", []))
        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        added = decorated.__click_params__[before:]
        fields.extend(param.name for param in added)
        return decorated

    return decorate


@dataclass(frozen=True, kw_only=True)
class Place:
    """Where the index lives (--db, --chroma-url), where Ollama is (--ollama-host), and
    --embedder: the model a build embeds with, or the collection a read takes."""

    db: str | None = None
    chroma_url: str | None = None
    ollama_host: str | None = None
    embedder: str | None = None

    def settings(self) -> Settings:
        """The settings a build uses (its --embedder included)."""
        from .common import settings_from

        return settings_from(self.db, self.chroma_url, self.embedder, self.ollama_host)

    def reading(self) -> Settings:
        """The settings a read uses: its --embedder names a collection (`built_with`)."""
        from .common import settings_from

        return settings_from(self.db, self.chroma_url, None, self.ollama_host)


@dataclass(frozen=True, kw_only=True)
class Output:
    """--json and --quiet."""

    as_json: bool = False
    quiet: bool = False
