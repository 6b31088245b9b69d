"""The catalogue: which physical collection and generation is live for each (strategy,
embedder), as `Entry` records in a small collection of the same Chroma. Readers resolve
names through it, so they only ever see published versions; a build's publish is one
upsert here. Server build leases (`leases.py`) and delta-writing marks (`delta.py`) are
records in it too, which the entries leave out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import CollectionNotFound, IndexerError
from ..settings import AUTO_EMBEDDER
from .chroma import Chroma, placeholders
from .entries import Entry, entry_key
from .leases import LEASE, Leases

WRITING = "writing:"  # catalogue ids marking a delta build's writes in progress


class Catalogue:
    """The live entries of one index, found by name, published, forgotten."""

    def __init__(self, chroma: Chroma, leases: Leases, embedder: str) -> None:
        self._chroma, self._leases = chroma, leases
        self._embedder = embedder  # the default one: chosen when a strategy has several

    def _read(self, **query: Any) -> Any:
        chroma = self._chroma
        return chroma.call(
            lambda: chroma.catalogue().get(include=["documents"], **query), "reading the catalogue"
        )

    def entries(self) -> list[Entry]:
        """Every live entry, by strategy then embedder."""
        got = self._read()
        out = [
            Entry.from_json(doc)
            for cid, doc in zip(got["ids"], got["documents"] or [])
            if doc and not cid.startswith((LEASE, WRITING))
        ]
        return sorted(out, key=lambda e: (e.strategy, e.embedder))

    def entry(self, key: str) -> Entry | None:
        """One live entry by key (one small read: what long-lived readers poll)."""
        docs = self._read(ids=[key]).get("documents") or []
        return Entry.from_json(docs[0]) if docs and docs[0] else None

    def find(self, names: str | Sequence[str], built_with: str | None = None) -> Entry:
        """The live entry for a collection name, or for the first of several names that has
        one (`chunkers.collection_names` resolves a strategy spec to them: `fixed:size=100`
        finds `fixed-100`); with no embedder given (`built_with`), the only one there is
        (or the default embedder's when several exist)."""
        names = [n.strip() for n in ([names] if isinstance(names, str) else names)]
        strategy, matches = _first_built(names, self.entries())
        if built_with is not None and built_with != AUTO_EMBEDDER:
            found = _built_with(strategy, matches, built_with, self._chroma)
        else:
            found = self._default(strategy, matches)
        if found is not None:
            return found
        entries = self.entries()
        known = sorted({e.strategy for e in entries})
        have = f"built: {', '.join(known)}" if known else "nothing is built yet"
        # the spelling given last: `fixed:size=7` builds, `fixed-7` does not
        command = self._chroma.build_command(*folders_of(entries), "--strategy", names[-1])
        raise CollectionNotFound(
            f"no collection for strategy {strategy!r} in {self._chroma.where} ({have}); "
            f"build it: {command}"
        )

    def sources(self) -> set[str]:
        """Every folder a collection here was built from, none when the catalogue cannot be
        read (the message being shown may be about that)."""
        try:
            return {src for entry in self.entries() for src in entry.source}
        except IndexerError:
            return set()

    def folders(self) -> list[str]:
        """What a build advised by a message reads (`folders_of`)."""
        return folders_of(self.entries())

    def _default(self, strategy: str, matches: list[Entry]) -> Entry | None:
        """With no embedder given: the only entry there is, or the default embedder's
        when there are several (None when there is none)."""
        if len(matches) <= 1:
            return matches[0] if matches else None
        preferred = _preferred(matches, self._embedder)
        if preferred is not None:
            return preferred
        built = ", ".join(e.embedder for e in matches)
        raise CollectionNotFound(
            f"strategy {strategy!r} exists for several embedders ({built}); pass --embedder"
        )

    def find_or_none(self, strategy: str, embedder: str) -> Entry | None:
        return self.entry(entry_key(strategy, embedder))

    def publish(self, entry: Entry) -> None:
        """Make `entry` the live version for its key: one upsert, the switch point."""
        self._chroma.call(
            lambda: self._chroma.catalogue().upsert(
                ids=[entry.key],
                embeddings=placeholders(1),
                documents=[entry.to_json()],
                metadatas=[
                    {"kind": "entry", "strategy": entry.strategy, "embedder": entry.embedder}
                ],
            ),
            "publishing a build",
        )

    def forget(self, entry: Entry, doing: str = "dropping a collection") -> None:
        """Delete an entry: nothing of its version is live any more."""
        self._chroma.call(lambda: self._chroma.catalogue().delete(ids=[entry.key]), doing)

    def save_search(self, strategy: str, embedder: str, search: dict[str, Any] | None) -> Entry:
        """Store (or, with None, forget) a collection's default search settings: under the
        build lease, on the live entry, so a build running now keeps them."""
        with self._leases.hold(strategy, embedder, doing="saving search settings"):
            entry = self.find_or_none(strategy, embedder)
            if entry is None:
                raise CollectionNotFound(
                    f"no collection for strategy {strategy!r} ({embedder}) in {self._chroma.where}"
                )
            if search:
                entry.extra["search"] = search
            else:
                entry.extra.pop("search", None)
            self.publish(entry)
        return entry

    def running_builds(
        self, names: Sequence[str], embedder: str | None = None
    ) -> list[tuple[str, str]]:
        """(strategy, embedder) of each build of one of `names` (of `embedder`, if given)
        holding its lease now."""
        return self._leases.running(names, embedder)


def _first_built(names: list[str], entries: list[Entry]) -> tuple[str, list[Entry]]:
    """The first of `names` that has entries, and them (the first name and none when
    none has)."""
    strategy = names[0]
    matches = [e for e in entries if e.strategy == strategy]
    for other in names[1:]:
        if matches:
            break
        matches = [e for e in entries if e.strategy == other]
        strategy = other if matches else strategy
    return strategy, matches


def _preferred(matches: list[Entry], embedder: str) -> Entry | None:
    """Of a strategy's entries, the default embedder's; with none named (auto), the one a
    build naming none chose (the newest, when a `--full` build chose again)."""
    for e in matches:
        if e.embedder == embedder:
            return e
    chosen = [e for e in matches if _chosen_by_rule(e)]
    return max(chosen, key=lambda e: e.built_at) if embedder == AUTO_EMBEDDER and chosen else None


def _chosen_by_rule(entry: Entry) -> bool:
    """Whether the build chose the entry's embedder from its documents (none was named)."""
    choice = entry.extra.get("embedder_choice")
    return isinstance(choice, dict) and choice.get("by") == "rule"


def _built_with(strategy: str, matches: list[Entry], embedder: str, chroma: Chroma) -> Entry | None:
    """The entry of `strategy` built with `embedder` (None when the strategy has none)."""
    exact = [e for e in matches if e.embedder == embedder]
    if exact:
        return exact[0]
    if matches:
        built = ", ".join(e.embedder for e in matches)
        raise CollectionNotFound(
            f"strategy {strategy!r} was built with {built}, not {embedder}; "
            f"query with --embedder {matches[0].embedder}, or build it: "
            + chroma.build_command(
                *folders_of(matches), "--strategy", strategy, "--embedder", embedder
            )
        )
    return None


def folders_of(entries: list[Entry]) -> list[str]:
    """The folders every one of `entries` was built from, when they agree: what an advised
    build reads; else `PATH`, for the user to fill in."""
    sources = {tuple(e.source) for e in entries}
    return list(next(iter(sources))) if len(sources) == 1 and next(iter(sources)) else ["PATH"]
