"""How to search, as options: the fusion and its settings, the depths searched, the paths
searched in, answer budgets; and the `SearchOptions` they make (`SearchArgs`). Every option left out is the collection's
saved setting (`indexer tune --save`), else the library default."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .groups import grouped
from .library import LibraryChoice, LibraryOption, fusions, search_defaults

if TYPE_CHECKING:
    from ..retrieval import SearchOptions

F = TypeVar("F", bound=Callable[..., Any])


class BudgetsType(click.ParamType):
    """Token budgets: `400`, or a list `100,200,400`."""

    name = "TOKENS"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        try:
            budgets = tuple(int(x) for x in str(value).split(",") if x.strip())
        except ValueError:
            self.fail(f"{value!r} is not a number of tokens or a list like 100,200,400", param, ctx)
        if not budgets or min(budgets) < 16:
            self.fail(f"{value!r}: a budget is at least 16 tokens", param, ctx)
        return budgets


BUDGETS = BudgetsType()


def _pair(text: str, option: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not two numbers like 1,0.5", param_hint=option
        ) from None
    return (a, b)


def _search_option_list(func: F) -> F:
    """The options of `SearchArgs`."""
    d = search_defaults
    func = click.option(
        "--path",
        "paths",
        multiple=True,
        metavar="GLOB",
        help="Only search documents whose path matches (git's glob rules: *.pptx, docs/api/, "
        "src/**/*.py; repeatable: any of them).",
    )(func)
    func = click.option(
        "--children-k",
        type=int,
        default=None,
        cls=LibraryOption,
        help=lambda: (
            f"Parent-child: children taken before mapping to parents [default: {d().children_k}]."
        ),
    )(func)
    func = click.option(
        "--candidates",
        type=int,
        default=None,
        cls=LibraryOption,
        help=lambda: f"Depth each side is searched to [default: {d().candidates}].",
    )(func)
    func = click.option(
        "--rrf-k",
        type=int,
        default=None,
        cls=LibraryOption,
        help=lambda: f"RRF fusion: the k in 1/(k + rank) [default: {d().rrf_k}].",
    )(func)
    func = click.option(
        "--rrf-weights",
        default=None,
        metavar="E,B",
        cls=LibraryOption,
        help=lambda: (
            f"RRF fusion: weights of the embedding and BM25 sides [default: {default_weights()}]."
        ),
    )(func)
    func = click.option(
        "--alpha",
        type=float,
        default=None,
        cls=LibraryOption,
        help=lambda: f"Weighted fusion: the embedding side's share [default: {d().alpha:g}].",
    )(func)
    func = click.option(
        "--fusion",
        type=LibraryChoice(fusions),
        default=None,
        cls=LibraryOption,
        help=lambda: (
            "Hybrid: adaptive (the embedding's share follows how well BM25 covers the "
            "query), weighted (min-max scores, --alpha) or rrf "
            f"[default: {d().fusion}]."
        ),
    )(func)
    return func


def search_options(func: F) -> F:
    """How to search, one `SearchArgs` (`search`); every option left out is the
    collection's saved setting (`indexer tune --save`), else the library default."""
    return grouped("search", SearchArgs, _search_option_list)(func)


@dataclass(frozen=True, kw_only=True)
class SearchArgs:
    """The search options as typed (`search_options`)."""

    fusion: str | None = None
    alpha: float | None = None
    rrf_weights: str | None = None
    rrf_k: int | None = None
    candidates: int | None = None
    children_k: int | None = None
    paths: tuple[str, ...] = ()

    def options(self, k: int = 5, mode: str | None = None) -> SearchOptions:
        """The `SearchOptions` they make, with `k` and `mode`."""
        from ..retrieval import SearchOptions

        weights = _pair(self.rrf_weights, "--rrf-weights") if self.rrf_weights else None
        return SearchOptions(
            mode=mode,
            k=k,
            fusion=self.fusion,
            alpha=self.alpha,
            rrf_k=self.rrf_k,
            weights=weights,
            candidates=self.candidates,
            children_k=self.children_k,
            paths=self.paths or None,
        )


def default_weights() -> str:
    """The library's RRF weights, as --rrf-weights takes them."""
    weights = search_defaults().weights
    assert weights is not None  # the library's defaults weigh both sides
    return ",".join(f"{w:g}" for w in weights)
