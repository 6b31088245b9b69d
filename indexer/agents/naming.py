"""A collection name that finds nothing, answered the same by MCP and the web API: a
name that is no strategy is an unknown strategy, listed beside the presets, the kinds
and what is built, and never pasted into a build command (`indexer build --strategy
nope` would fail too).

    raise not_found(store, "nope", exc)
    UnknownStrategy: unknown strategy 'nope'; presets: fixed64, ...; strategies: fixed,
    ...; built: fixed64, headers
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import CollectionNotFound, IndexerError, UsageError

if TYPE_CHECKING:
    from ..store import Store


def not_found(store: Store, name: str, exc: CollectionNotFound) -> IndexerError:
    """The error for `name` when no collection has it (`exc`): `exc` itself when the
    name is a strategy (its advice, build it, holds), else the strategy parser's
    `unknown strategy` with the collections built."""
    from ..chunkers import parse_strategy
    from ..retrieval import collection_label, split_name

    try:
        parse_strategy(split_name(name)[0])
    except UsageError as unknown:
        entries = store.catalogue.entries()
        built = sorted({collection_label(e, entries) for e in entries})
        have = f"built: {', '.join(built)}" if built else "nothing is built yet"
        return type(unknown)(f"{unknown}; {have}")
    return exc
