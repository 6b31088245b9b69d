"""Paths as a client of `serve` or `mcp` may see them: never an absolute path of the
server's file system (it tells a remote caller how the server's disk is laid out and
helps it nothing), only what names the folder for a person."""

from __future__ import annotations

import os
from pathlib import Path


def shown_path(
    path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None, keep: int = 1
) -> str:
    """`path` relative to `base` (where the server was started; default the current
    folder) when inside it, POSIX separators; else, or when it is `base` itself, only
    its last `keep` names: `corpus/code`, `corpus`, `docs` (`code/questions.jsonl` with
    keep=2, which tells two question files apart)."""
    full = Path(path).expanduser().resolve()
    try:
        inside = full.relative_to(Path(base if base is not None else Path.cwd()).resolve())
    except ValueError:
        inside = None
    if inside is not None and inside.parts:
        return inside.as_posix()
    names = [part for part in full.parts if part != full.anchor][-keep:]
    return "/".join(names) or "."


def hide_folder(message: str, folder: str | os.PathLike[str], shown: str) -> str:
    """`message` with the absolute spellings of `folder` (as given, and resolved) replaced
    by `shown`: an error for a client that must not learn the server's disk layout."""
    given = Path(folder).expanduser()
    spellings = {str(given.resolve())} | ({str(given)} if given.is_absolute() else set())
    for path in sorted(spellings, key=len, reverse=True):  # the longer first: it may hold the other
        message = message.replace(path, shown)
    return message
