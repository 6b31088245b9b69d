"""Which paths under a root are indexed: `--include` / `--exclude` patterns and the
lines of a folder's ignore file (gitignore's rules), and hidden names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_FILE = ".indexerignore"
# a pattern naming a hidden path: `.drafts/`, `docs/.x.md`, `.*`
_HIDDEN_PATTERN = re.compile(r"(?:^|/)\.[^/]")


def hidden(rel: str) -> bool:
    """Whether a relative path is hidden: one of its names starts with a dot."""
    return any(part.startswith(".") for part in rel.split("/"))


class PathFilter:
    """`--include` / `--exclude` patterns and `.indexerignore` lines, with gitignore's
    rules (pathspec): `*` stays in a folder, `**` crosses folders, a pattern without `/`
    matches a name at any depth, `[abc]` classes, and `!pattern` takes a file back.

    Hidden paths (a name starting with ".") are left out unless an include pattern names
    one (`.drafts/`, `docs/.notes.md`, `.*`); such a pattern brings hidden paths in
    without narrowing the rest (only the other include patterns do)."""

    def __init__(self, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> None:
        from pathspec import GitIgnoreSpec

        patterns = [p for p in include if p.strip()]
        shown = [p for p in patterns if _HIDDEN_PATTERN.search(p.strip())]
        self.include = _spec([p for p in patterns if p not in shown])
        self.unhide = _spec(shown)
        self.exclude = GitIgnoreSpec.from_lines([p for p in exclude if p.strip()])

    def excluded_dir(self, rel: str) -> bool:
        return self.exclude.match_file(rel + "/")

    def wanted(self, rel: str) -> bool:
        """Whether a file (by its path relative to the root) is indexed."""
        if self.exclude.match_file(rel):
            return False
        if self.unhide is not None and self.unhide.match_file(rel):
            return True
        return not hidden(rel) and (self.include is None or self.include.match_file(rel))

    def hidden_only(self, rel: str) -> bool:
        """Whether a hidden file is left out only for being hidden."""
        return not self.exclude.match_file(rel) and (
            self.include is None or self.include.match_file(rel)
        )


def _spec(lines: list[str]) -> GitIgnoreSpec | None:
    """Gitignore-style patterns; None for none."""
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines) if lines else None


def read_ignore_file(root: Path) -> list[str]:
    """The exclude patterns of a folder's ignore file (IGNORE_FILE; blank lines and `#`
    comments left out), none when it has no such file."""
    path = root / IGNORE_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
