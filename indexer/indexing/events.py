"""Which file-system events matter to a watcher (`EventPaths`), and the doc_ids they name."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..loaders.files import SKIP_DIRS, input_labels
from ..loaders.formats import format_of
from ..loaders.paths import IGNORE_FILE, PathFilter, read_ignore_file

if TYPE_CHECKING:  # watchfiles is imported when a watch starts
    from watchfiles import Change


class EventPaths:
    """Which file-system events matter, and the doc_ids they name: the rules of discovery
    (hidden and vendored folders, include/exclude and .indexerignore patterns, file types)
    applied to single paths, and the index folder itself left out."""

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        db: Path,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        indexed_under: Callable[[str], bool] | None = None,
    ) -> None:
        given: list[str | os.PathLike] = list(paths)
        self.roots = [
            (Path(p).absolute(), Path(p).is_dir(), label)
            for p, label in zip(given, input_labels(given))
        ]
        self.db = os.path.realpath(db)
        self.include, self.exclude = tuple(include), tuple(exclude)
        self.indexed_under = indexed_under or (lambda rel: True)
        self.filters: dict[Path, PathFilter] = {}
        self.reload()

    def reload(self) -> None:
        """Re-read the roots' .indexerignore files."""
        self.filters = {
            root: PathFilter(self.include, self.exclude + tuple(read_ignore_file(root)))
            for root, is_dir, _ in self.roots
            if is_dir
        }

    def watched(self) -> list[str]:
        """What to hand the file-system watcher: folders, and a single file's folder (an
        editor replacing the file on save would end a watch on the file itself)."""
        return sorted({str(root if is_dir else root.parent) for root, is_dir, _ in self.roots})

    def located(self, path: str) -> tuple[str, str] | None:
        """(the path relative to its root, its doc_id) under one of the roots (None
        outside them); with several roots the doc_id starts with the root's label
        (`loaders.files.input_labels`), as discovery names it."""
        p = Path(path)
        for root, is_dir, label in self.roots:
            if not is_dir:
                if p == root:
                    return root.name, label or root.name
            elif p != root and root in p.parents:
                rel = p.relative_to(root).as_posix()
                return rel, f"{label}/{rel}" if label else rel
        return None

    def doc_id(self, path: str) -> str | None:
        """The doc_id a path has under one of the roots (None outside them)."""
        found = self.located(path)
        return found[1] if found else None

    def path_of(self, doc_id: str) -> Path | None:
        """The file a doc_id names (None when no root holds it)."""
        for root, is_dir, label in self.roots:
            path = input_file(root, is_dir, label, doc_id)
            if path is not None:
                return path
        return None

    def relevant(self, change: Change, path: str) -> bool:
        """Whether an event can change what is indexed (the watchfiles filter)."""
        real = os.path.realpath(path)
        if real == self.db or real.startswith(self.db + os.sep):
            return False
        found = self.located(path)
        if found is None:
            return False
        rel, doc_id = found
        *folders, name = rel.split("/")
        if any(f in SKIP_DIRS for f in folders):
            return False
        if name == IGNORE_FILE:
            return True
        return self._wanted(change, path, rel, doc_id)

    def _wanted(self, change: Change, path: str, rel: str, doc_id: str) -> bool:
        """Whether an event on a path that is not the index's, nor skipped, nor an ignore
        file names something to index: a file discovery would take, a folder moved in, or
        a folder moved away from indexed files."""
        patterns = next((f for root, f in self.filters.items() if root in Path(path).parents), None)
        # a file given as a root, or one the patterns want (hidden: if named)
        if format_of(rel.rsplit("/", 1)[-1])[0] is not None:
            return patterns is None or patterns.wanted(rel)
        if change.name == "added":  # a folder moved in: its files are new
            return os.path.isdir(path) and not (patterns is not None and patterns.excluded_dir(rel))
        # a folder moved away or deleted
        return change.name == "deleted" and self.indexed_under(doc_id)


def input_file(root: Path, is_dir: bool, label: str, doc_id: str) -> Path | None:
    """The file a doc_id names under one input of a build (a folder or a file given,
    whose doc_ids start with `label`: `loaders.files.input_labels`), if it is there."""
    if is_dir:
        return _under_folder(root, label, doc_id)
    return _given_file(root, label, doc_id)


def _given_file(root: Path, label: str, doc_id: str) -> Path | None:
    """A file given as a root, if it is the one the doc_id names."""
    return root if (label or root.name) == doc_id else None


def _under_folder(root: Path, label: str, doc_id: str) -> Path | None:
    """The file under a folder given as a root that the doc_id names, if it exists."""
    if label and not doc_id.startswith(f"{label}/"):
        return None
    rel = doc_id[len(label) + 1 :] if label else doc_id
    return root / rel if (root / rel).exists() else None
