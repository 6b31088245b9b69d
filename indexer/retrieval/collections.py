"""Which collection a front door reads, and how it shows one: the CLI, the web API and
MCP all choose and describe collections here.

The one rule (`choose`), for a call that names a strategy or not:

- a named strategy is that one, in any spelling of its spec (`fixed:size=64,overlap=16`
  is `fixed64`); `strategy@embedder` (the name serve and MCP list when one strategy is
  built with several embedders) names one embedder's;
- none named, one strategy built: that one;
- none named, several built: the one the last `indexer eval` ranked best (`evaluated`: its
  ranking is kept in the catalogue), else the default strategy (`auto`) if it is built,
  else the first built in `PREFERENCE`, an order of chunker kinds: the kinds that keep a
  document's structure before those that cut by size or similarity (blocks, then headers,
  then fixed-size chunks, on the bundled corpus and the PDF set: docs/results.md). `chosen`
  says which rule picked it, and every front door says so.

`built_with` (the CLI's `--embedder` on read-side commands) keeps only the collections
built with that embedder; without it, a strategy built with several embedders is read
through the settings' embedder (`Catalogue.find`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..chunkers.registry import DEFAULT_STRATEGY, collection_names
from ..embeddings import canonical_name
from ..errors import CollectionNotFound, IndexerError, UsageError
from ..store import Disk, Entry, Store
from .evaluated import last_best
from .fusion import calibrated, current
from .options import resolve

# of several strategies built, none evaluated and no `auto`: the first built of these kinds
# (code keeps functions whole; blocks and headers keep sections; the rest cut by size or
# by similarity), then any other kind, each kind's strategies by name
PREFERENCE = ("code", "blocks", "headers", "contextual", "parent", "semantic", "fixed")
# what a call naming no strategy reads (help texts and MCP's tool descriptions say it)
RULE = (
    "the only strategy built; of several, the one the last `indexer eval` ranked best, "
    f"else {DEFAULT_STRATEGY} if it is built, else the first built of "
    f"{' > '.join(PREFERENCE)}"
)


@dataclass(frozen=True)
class Chosen:
    """The collection a call reads, and why, when no strategy was named and several are
    built (`why` is None when the call named one, or one strategy is built)."""

    entry: Entry
    why: str | None = None


def split_name(name: str) -> tuple[str, str | None]:
    """(strategy, embedder) of a collection name: `headers`, or `headers@e5-small`."""
    strategy, at, embedder = name.strip().rpartition("@")
    return (strategy, embedder or None) if at and strategy else (name.strip(), None)


def collection_label(entry: Entry, entries: Sequence[Entry]) -> str:
    """How serve and MCP name a collection: its strategy, or `strategy@embedder` when the
    strategy is built with several embedders (`choose` takes either)."""
    several = sum(1 for e in entries if e.strategy == entry.strategy) > 1
    return f"{entry.strategy}@{entry.embedder}" if several else entry.strategy


def other_embedders(store: Store, entry: Entry) -> list[str]:
    """The embedders the entry's strategy is also built with (a read that names none
    gets the settings' one: the CLI says which, and how to pick another)."""
    return sorted(
        {e.embedder for e in store.catalogue.entries() if e.strategy == entry.strategy}
        - {entry.embedder}
    )


def choose(store: Store, strategy: str | None = None, built_with: str | None = None) -> Entry:
    """The live collection a call reads (the module's rule)."""
    return chosen(store, strategy, built_with).entry


def chosen(store: Store, strategy: str | None = None, built_with: str | None = None) -> Chosen:
    """`choose`, with why when no strategy was named and several are built."""
    if strategy and strategy.strip():
        name, embedder = split_name(strategy)
        wanted = embedder or built_with
        try:
            entry = store.catalogue.find(
                collection_names(name), canonical_name(wanted) if wanted else None
            )
        except CollectionNotFound as exc:
            raise _not_found(store, name, exc) from None
        return Chosen(entry)
    return _default(store, canonical_name(built_with) if built_with else None)


def _not_found(store: Store, name: str, exc: CollectionNotFound) -> IndexerError:
    """The error when no collection has strategy `name` (`exc`): `exc` itself when the
    name is a strategy (its advice, build it, holds), else the strategy parser's `unknown
    strategy ...` with what is built, never pasted into a build command (`indexer build
    --strategy nope` would fail too)."""
    from ..chunkers import parse_strategy

    try:
        parse_strategy(name)
    except UsageError as unknown:
        entries = store.catalogue.entries()
        built = sorted({collection_label(e, entries) for e in entries})
        have = f"built: {', '.join(built)}" if built else "nothing is built yet"
        return type(unknown)(f"{unknown}; {have}")
    return exc


def _default(store: Store, wanted: str | None) -> Chosen:
    """What a call naming no strategy reads: the only strategy built (of those built with
    `wanted`, when given), else one of several by the module's rule; an error when
    nothing is built."""
    entries = [e for e in store.catalogue.entries() if wanted in (None, e.embedder)]
    built = sorted({e.strategy for e in entries})
    if not built:
        with_ = f" with {wanted}" if wanted else ""
        raise CollectionNotFound(
            f"nothing is built{with_} in {store.where}; build one: "
            + store.build_command("PATH", *(["--embedder", wanted] if wanted else []))
        )
    if len(built) == 1:
        return Chosen(store.catalogue.find(built[0], wanted))
    return _among(store, entries, built, wanted)


def _among(store: Store, entries: list[Entry], built: list[str], wanted: str | None) -> Chosen:
    """Of several strategies built (`entries`, built with `wanted` when given): the last
    evaluation's best, else `auto`, else the first kind in `PREFERENCE`."""
    best = last_best(entries)
    if best is not None:
        return Chosen(best.entry, best.why)
    if DEFAULT_STRATEGY in built:
        return Chosen(store.catalogue.find(DEFAULT_STRATEGY, wanted), "the default strategy")
    first = preferred(entries)
    why = f"first in the order {' > '.join(PREFERENCE)}; no evaluation has ranked them"
    return Chosen(store.catalogue.find(first, wanted), why)


def preferred(entries: Sequence[Entry]) -> str:
    """The strategy of `entries` whose chunker kind comes first in `PREFERENCE` (kinds not
    in it after, by name; one kind's strategies by name)."""

    def place(entry: Entry) -> tuple[int, str]:
        kind = PREFERENCE.index(entry.kind) if entry.kind in PREFERENCE else len(PREFERENCE)
        return kind, entry.strategy

    return min(entries, key=place).strategy


def every_built(store: Store, built_with: Sequence[str | None] = (None,)) -> list[str]:
    """The strategies built with every embedder of `built_with` (None: with any), by name:
    what `indexer eval` naming no strategy evaluates."""
    entries = store.catalogue.entries()
    wanted = [canonical_name(e) if e else None for e in built_with] or [None]
    sets = [{e.strategy for e in entries if w in (None, e.embedder)} for w in wanted]
    return sorted(set.intersection(*sets))


def entry_fusion(store: Store, entry: Entry) -> dict[str, Any]:
    """A collection's calibrated fusion (`fusion.calibrated`): stored at build time, or
    worked out from the file manifest for a version built before calibration ({} when
    neither says). What search uses, so what `describe` shows."""
    if entry.extra.get("fusion"):
        return current(entry.embedder, entry.extra["fusion"]) or {}
    manifest = store.side.manifest(entry)
    lang = entry.extra.get("analyzer", {}).get("lang", "")
    return calibrated(entry.embedder, manifest.files, lang) if manifest is not None else {}


def describe(
    store: Store,
    entry: Entry,
    entries: Sequence[Entry] = (),
    shown: Callable[[str], str] = str,
    disk: Disk | None = None,
) -> dict[str, Any]:
    """A collection as `list --json`, serve's `/api/collections` and MCP's
    `list_collections` show it: every field of its catalogue entry, its `name` among
    `entries` (`collection_label`), whether it is parent-child, its default search
    (`search`, and `tuned` when `indexer tune --save` chose it), how its embedder was
    chosen (`embedder_choice`: `by` named or rule, a short `reason`, `why`; None for a
    collection built before the choice was recorded) and its bytes on disk (`disk`:
    `DiskUse`; pass one `store.disk()` when describing several). `shown` writes its source
    folders (serve and MCP: never as absolute server paths)."""
    summary = search_summary(store, entry)
    choice = entry.extra.get("embedder_choice")
    used = (disk or store.disk()).of(entry)
    return {
        "name": collection_label(entry, entries or [entry]),
        **entry.__dict__,
        "embedder_choice": dict(choice) if isinstance(choice, dict) else None,
        "source": [shown(s) for s in entry.source],
        "parent_child": bool(entry.parents),
        "search": summary["search"],
        "tuned": summary["tuned"],
        "measured": summary["measured"],
        "disk": used.to_dict(),
    }


def search_summary(store: Store, entry: Entry) -> dict[str, Any]:
    """A collection's default search as `describe` shows it: `search`, its description
    (when the build measured the embedder weak on this collection and no `indexer tune
    --save` chose the search, by how much its share was narrowed), `tuned`, and
    `measured`: the build's measurement of the embedder here (probe MRR@10 on each side,
    their ratio, the `factor` on the embedding share) or None."""
    saved = entry.extra.get("search")
    fusion = entry_fusion(store, entry)
    text = resolve(None, saved, entry.embedder, fusion).describe()
    measured = fusion.get("measured") or None
    if measured is not None:
        measured = {**measured, "factor": fusion.get("embedding_factor", 1.0)}
    if not saved and measured and measured["factor"] < 1:
        text += f" (embedding share x{measured['factor']:g}: measured weak here)"
    return {"search": text, "tuned": bool(saved), "measured": measured}


__all__ = [
    "PREFERENCE",
    "RULE",
    "Chosen",
    "choose",
    "chosen",
    "collection_label",
    "describe",
    "entry_fusion",
    "every_built",
    "other_embedders",
    "preferred",
    "search_summary",
    "split_name",
]
