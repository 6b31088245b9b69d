"""Paths as a client of `serve` or `mcp` may see them: never an absolute path of the
server's file system (it tells a remote caller how the server's disk is laid out and
helps it nothing), only what names the folder for a person."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

# a test file's path: in a tests/, testing/, testdata/, spec(s)/ or __tests__/ folder, or
# named test_x, x_test.ext, x.test.ext or x.spec.ext (any case)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|testdata|specs?|__tests__)/|(^|/)test_[^/]*$|_test\.\w+$"
    r"|\.(test|spec)\.\w+$"
)


def is_test_file(doc_id: str) -> bool:
    """`tests/…`, `testing/…`, `test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`,
    `__tests__/…`: the one rule the exact-match tiers (a definition in a test ranks below
    the real one) and the question maker (no question about a test) share."""
    return bool(_TEST_PATH.search(doc_id.lower()))


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


def hide_folders(
    message: str, folders: Iterable[str | os.PathLike[str]], base: str | os.PathLike[str] | None
) -> str:
    """`message` with each of `folders` in its shown form (`shown_path` from `base`), the
    longer first (one may hold another)."""
    for folder in sorted({str(f) for f in folders}, key=len, reverse=True):
        message = hide_folder(message, folder, shown_path(folder, base))
    return message
