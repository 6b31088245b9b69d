"""What the commands take from the library: choice lists, default values and the help
naming them, read when a command needs them (parsing its options, or showing its help),
so that the CLI writes none of them again and `indexer --help` imports nothing heavy.

    type=LibraryChoice(modes)                          the choices, from the library's constant
    cls=LibraryOption, default_from=lambda: ...        a default (shown in help) the library owns
    cls=LibraryOption, help=lambda: f"... {...}"       help naming library values
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..indexing.options import BuildOptions
    from ..retrieval import ResolvedOptions


class LibraryChoice(click.Choice):
    """A `click.Choice` whose list the library gives, read on first use."""

    def __init__(self, load: Callable[[], Sequence[str]], case_sensitive: bool = True) -> None:
        self._load = load
        super().__init__((), case_sensitive)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._load())

    @choices.setter
    def choices(self, _value: Sequence[str]) -> None:
        pass  # read from the library each time


class LibraryOption(click.Option):
    """An option whose help text (`help=` a function) and default (`default_from=` a
    function; shown as `[default: ...]`) are read from the library when needed."""

    def __init__(
        self,
        param_decls: Sequence[str] | None = None,
        *,
        help: str | Callable[[], str] | None = None,  # noqa: A002 (click's name)
        default_from: Callable[[], Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._help = help
        self._default_from = default_from
        if default_from is not None:
            kwargs["default"] = default_from
            kwargs["show_default"] = (
                False  # shown by get_help_record, with the value rather than "(dynamic)"
            )
        super().__init__(param_decls, help=help if isinstance(help, str) else None, **kwargs)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        text = self._help() if callable(self._help) else (self._help or "")
        if self._default_from is not None:
            value = self._default_from()
            text += f"  [default: {','.join(map(_shown, value)) if isinstance(value, tuple) else _shown(value)}]"
        self.help = text
        return super().get_help_record(ctx)


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def parameter_default(function: Callable[..., Any], name: str) -> Any:
    """The default a library function gives its parameter `name` (the CLI passes it on)."""
    import inspect

    return inspect.signature(function).parameters[name].default


# -- the library's values, imported when asked for --------------------------------------------
def search_defaults() -> ResolvedOptions:
    from ..retrieval import DEFAULTS

    return DEFAULTS


def modes() -> tuple[str, ...]:
    from ..retrieval import MODES

    return MODES


def fusions() -> tuple[str, ...]:
    from ..retrieval import FUSIONS

    return FUSIONS


def engines() -> tuple[str, ...]:
    from ..retrieval.bm25.index import ENGINES

    return ENGINES


def build_defaults() -> BuildOptions:
    from ..indexing.options import BuildOptions

    return BuildOptions()


def languages() -> tuple[str, ...]:
    from ..indexing.options import LANGUAGES

    return LANGUAGES


def default_strategy() -> str:
    from ..chunkers import DEFAULT_STRATEGY

    return DEFAULT_STRATEGY


def rule() -> str:
    """The rule choosing the collection a read-side command reads when none is named."""
    from ..retrieval.collections import RULE

    return RULE


def strategies_or_default(strategies: Iterable[str]) -> list[str]:
    """The --strategy values given, else the library's default strategy."""
    return list(strategies) or [default_strategy()]
