"""Side files: what sits beside each collection in the index folder (the BM25 index, the
rows, the exact-match index, the file manifest), in `<db>/indexes/<collection>/g<N>/`,
named by the collection and generation they belong to; a machine that lacks them rebuilds
them from the stored records. What goes into a side folder is not the store's business:
a side is a `SideFile` (its name, and how it saves itself at the path the store gives
it), which a build hands to `Staging.save_sides`."""

from __future__ import annotations

import json
import shutil
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from .entries import Entry, name_prefix
from .layout import MANIFEST
from .manifest import Manifest


class SideFile(ABC):
    """A side file or folder of a version (the BM25 index, the rows, the exact-match
    index): its name in the version's side folder, and how it writes itself there."""

    SIDE: ClassVar[str]

    @abstractmethod
    def save(self, path: Path) -> None:
        """Write this side file or folder at `path` (the store's choice)."""


class SideFiles:
    """The side folders of one index folder (`root`: `<db>/indexes`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, collection: str, generation: int | None = None) -> Path:
        """A collection's side folder (of one generation, when given)."""
        base = self.root / collection
        return base if generation is None else base / f"g{generation}"

    def path(self, entry: Entry, name: str) -> Path:
        """Where the side file or folder `name` of a live version is (it may not exist: a
        machine that did not build the version)."""
        return self.folder(entry.collection, entry.generation) / name

    def manifest(self, entry: Entry) -> Manifest | None:
        """The file manifest a version's build saved with `Staging.write_manifest` (None
        when it is missing or unreadable; of any format: `Manifest.format` says which)."""
        try:
            data = json.loads(self.path(entry, MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return Manifest.from_json(data)

    def remove(self, collection: str) -> None:
        """Remove a collection's side folder (every generation)."""
        shutil.rmtree(self.folder(collection), ignore_errors=True)

    def remove_stale(self, strategy: str, embedder: str, live: Entry | None) -> list[str]:
        """This machine's side folders of a key's versions that are no longer live (with a
        server, another machine may have dropped or replaced them)."""
        prefix = name_prefix(strategy, embedder)
        keep = {live.collection, live.parents} if live else set()
        here = list(self.root.iterdir()) if self.root.is_dir() else []
        stale = [p for p in here if p.name.startswith(prefix) and p.name not in keep]
        for folder in stale:
            shutil.rmtree(folder, ignore_errors=True)
        return [f"side files of {folder.name} (not live)" for folder in stale]

    def retired_since(self, entry: Entry, generation: int) -> set[str] | None:
        """The ids the generations after `generation` up to the entry's retired, or None
        when the catalogue no longer says for each of them (their grace period is over)."""
        said = {p.get("gen"): p for p in entry.pending}
        since = range(generation + 1, entry.generation + 1)
        if any(g not in said for g in since):
            return None
        return {i for g in since for i in said[g].get("ids", ())}

    def earlier_paths(self, entry: Entry, name: str) -> list[tuple[int, Path]]:
        """(generation, path) of the side file or folder `name` of each generation of the
        entry's collection before the live one that this machine has, newest first."""
        earlier = sorted(
            (g for g in self._generations(entry) if g < entry.generation), reverse=True
        )
        return [(g, self.folder(entry.collection, g) / name) for g in earlier]

    def prune(self, entry: Entry) -> None:
        """Keep the live generation's side files and the one before (a reader may still be
        on it); older ones go."""
        for g in self._generations(entry):
            if g < entry.generation - 1:
                shutil.rmtree(self.folder(entry.collection, g), ignore_errors=True)

    def _generations(self, entry: Entry) -> list[int]:
        """The generations of the entry's collection whose side folders this machine has."""
        base = self.folder(entry.collection)
        names = [p.name for p in base.iterdir()] if base.is_dir() else []
        return [int(n[1:]) for n in names if n.startswith("g") and n[1:].isdigit()]
