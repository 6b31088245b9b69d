"""Finding files under a root, without ever crashing on bad input.

Every file that is not indexed gets a one-line reason: binary, undecodable, empty, over
the size cap (a PDF: over the page cap), unreadable, a symlink loop or a symlink out of
the root. Folders such as `.git`, `node_modules`, virtual environments and the index
folder itself are skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..settings import DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_PDF_PAGES
from .formats import format_of
from .paths import IGNORE_FILE, PathFilter, hidden, read_ignore_file
from .reader import Limits, SourceFile
from .registry import reader_of
from .skips import Skipped

# folders skipped without a note: version control, virtual environments, dependencies, and
# the caches and build output of tools (they hold no documents); any other hidden folder or
# file (a name starting with ".") is skipped with a note, and an --include naming it brings it in
SKIP_DIRS = {
    "node_modules",
    "__pycache__",
    "venv",
    ".venv",
    "site-packages",
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".jj",
    ".tox",
    ".nox",
    ".eggs",
    ".cache",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
    ".idea",
    ".vscode",
    ".indexer",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".yarn",
    ".pnpm-store",
    ".npm",
    ".parcel-cache",
    ".docusaurus",
    ".gradle",
    ".terraform",
}


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    unsupported: dict[str, int] = field(default_factory=dict)
    # indexed, with a caveat (legacy encoding)
    warnings: list[Skipped] = field(default_factory=list)


def input_labels(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """What each input's doc_ids start with: nothing for a single input; with several, the
    input's name, with as many of its parent folders as tell it from the other inputs
    (`docs`, `src`; `a/docs` and `b/docs` for two folders both named docs).

    >>> input_labels(["/w/a/docs", "/w/b/docs", "/w/src", "/w/README.md"])
    ['a/docs', 'b/docs', 'src', 'README.md']
    >>> input_labels(["/w/docs"])
    ['']
    """
    if len(paths) < 2:
        return [""] * len(paths)
    names = [Path(os.path.abspath(p)).parts[1:] or ("_",) for p in paths]
    labels = []
    for mine in names:
        depth = 1
        while depth < len(mine) and any(o != mine and o[-depth:] == mine[-depth:] for o in names):
            depth += 1
        labels.append("/".join(mine[-depth:]))
    return labels


def discover(
    paths: Sequence[str | os.PathLike[str]],
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    skip_dirs: tuple[str | os.PathLike[str], ...] = (),
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES,
) -> Discovery:
    """Every indexable file under `paths` (folders are walked, files taken as they are).

    `doc_id` is the path relative to the folder given (or the file name for a file
    given directly), with `/` separators; with several inputs it starts with the input's
    name (`input_labels`): `docs/guide.md`, `src/app.py`. Symlinks are followed only while
    they stay inside the root; a loop or a link out of the root is reported, not followed,
    and a file reached twice (a symlink to a file indexed anyway, an input given twice)
    is indexed once, under the path that is not a link.
    A PDF is capped by its pages (`max_pdf_pages`), not by `max_file_size`: scans and
    embedded fonts make ordinary PDFs large, while pages are what reading costs.
    """
    _check_caps(max_file_size, max_pdf_pages)
    result = Discovery()
    walk = _Walk(
        result, Limits(max_file_size, max_pdf_pages), {os.path.realpath(p) for p in skip_dirs}
    )
    for given, label in zip(paths, input_labels(paths)):
        root = Path(given)
        if not root.exists() and not root.is_symlink():
            result.skipped.append(Skipped(str(given), "no such file or folder"))
            continue
        if root.is_file():
            walk.consider(root, label or root.name, os.path.realpath(root), root.is_symlink())
            continue
        walk.real_root = root.resolve()
        walk.prefix = f"{label}/" if label else ""
        walk.filt = PathFilter(include, tuple(exclude) + tuple(read_ignore_file(root)))
        _walk(walk, root, "", {str(walk.real_root)}, False)
    walk.once()
    return result


def _check_caps(max_file_size: int, max_pdf_pages: int) -> None:
    for cap, value in (("max_file_size", max_file_size), ("max_pdf_pages", max_pdf_pages)):
        if value < 1:
            from ..errors import UsageError

            raise UsageError(f"{cap} must be positive, not {value}")


@dataclass
class _Walk:
    """One discovery: what it found, its caps, and where it is (the root being walked,
    its doc_id prefix and patterns); each file's real path, to index a file once."""

    result: Discovery
    caps: Limits
    skip_real: set[str]
    real_root: Path = Path()
    prefix: str = ""
    filt: PathFilter | None = None
    # doc_id -> (real path, reached by a link)
    real: dict[str, tuple[str, bool]] = field(default_factory=dict)

    @property
    def patterns(self) -> PathFilter:
        """The patterns of the root being walked."""
        assert self.filt is not None  # discover sets them before it walks a folder
        return self.filt

    def skip(self, doc_id: str, reason: str) -> None:
        self.result.skipped.append(Skipped(doc_id, reason))

    def taken(self) -> int:
        """How many files were found so far, indexed or skipped."""
        return len(self.result.files) + len(self.result.skipped)

    def consider(self, path: Path, doc_id: str, real: str, linked: bool) -> None:
        """A file found: skipped with its reason, or added."""
        result = self.result
        fmt, language = format_of(path.name)
        if fmt is None:
            ext = path.suffix.lower() or _no_extension(result.unsupported, doc_id)
            result.unsupported[ext] = result.unsupported.get(ext, 0) + 1
            return
        try:
            st = path.stat()
        except OSError as exc:
            result.skipped.append(Skipped(doc_id, f"unreadable ({exc.strerror or exc})"))
            return
        if not stat.S_ISREG(st.st_mode):
            result.skipped.append(Skipped(doc_id, "not a regular file"))
            return
        over = _over_cap(path, fmt, st.st_size, self.caps)
        if over:
            result.skipped.append(Skipped(doc_id, over))
            return
        if doc_id in self.real:
            result.skipped.append(
                Skipped(doc_id, "duplicate document id (two inputs map to the same relative path)")
            )
            return
        self.real[doc_id] = (real, linked)
        result.files.append(SourceFile(path, doc_id, st.st_size, fmt, language))

    def once(self) -> None:
        """Each file indexed once: of the doc_ids that reach one real file, the first not
        reached through a symlink is kept (else the first), the others skipped."""
        kept: dict[str, str] = {}
        for doc_id, (real, linked) in self.real.items():
            if real not in kept or (self.real[kept[real]][1] and not linked):
                kept[real] = doc_id
        files = []
        for src in self.result.files:
            real, linked = self.real[src.doc_id]
            if kept[real] == src.doc_id:
                files.append(src)
            elif linked:
                self.result.skipped.append(
                    Skipped(src.doc_id, f"symlink to {kept[real]}, indexed there")
                )
            else:
                self.result.skipped.append(
                    Skipped(src.doc_id, f"the same file as {kept[real]} (the inputs overlap)")
                )
        self.result.files = files


def _no_extension(unsupported: dict[str, int], doc_id: str) -> str:
    """The key files without an extension are counted under, naming the first of them
    (`(no extension, e.g. docs/Makefile)`): a bare "(no extension)" names no file to look at."""
    known = next((k for k in unsupported if k.startswith("(no extension")), None)
    return known or f"(no extension, e.g. {doc_id})"


def _walk(walk: _Walk, folder: Path, rel: str, visited: set[str], linked: bool) -> None:
    """Walk a folder of the root (`rel` from it; `linked`: entered through a symlink)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        prefix = walk.prefix
        where = prefix + rel if rel else prefix.rstrip("/") or "."
        walk.skip(where, f"folder unreadable ({exc.strerror or exc}); check its permissions")
        return
    for entry in entries:
        if entry.name != IGNORE_FILE:
            _entry(walk, entry, rel, visited, linked)


@dataclass(frozen=True, slots=True)
class _Found:
    """An entry of a folder being walked: its path, name, path from the root, doc_id, and
    whether it was reached through a symlink (itself one, or inside a linked folder)."""

    path: Path
    name: str
    rel: str
    doc_id: str
    linked: bool


def _entry(walk: _Walk, entry: os.DirEntry[str], rel: str, visited: set[str], linked: bool) -> None:
    """One entry of a folder: a folder to walk, a file to consider, or skipped with its reason."""
    name = entry.name
    child_rel = f"{rel}/{name}" if rel else name
    if not _valid_name(name):  # bytes that are not UTF-8 (os.fsdecode keeps them as surrogates)
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        walk.skip(
            walk.prefix + (f"{rel}/{shown}" if rel else shown),
            "the name is not valid UTF-8; rename it to index it",
        )
        return
    kind = _link_kind(walk, entry, walk.prefix + child_rel)
    if kind is None:
        return
    is_link, is_dir = kind
    found = _Found(Path(entry.path), name, child_rel, walk.prefix + child_rel, linked or is_link)
    if is_dir:
        _folder(walk, found, visited)
    else:
        _file(walk, found, rel)


def _link_kind(walk: _Walk, entry: os.DirEntry[str], doc_id: str) -> tuple[bool, bool] | None:
    """Whether an entry is a symlink, and whether it is (or points to) a folder; None for
    a link that is not followed (a loop, broken, or out of the root: reported)."""
    try:
        is_link = entry.is_symlink()
        is_dir = entry.is_dir(follow_symlinks=True)
    except OSError:
        is_link, is_dir = True, False
    if not is_link:
        return False, is_dir
    try:
        target = Path(entry.path).resolve(strict=True)
    except (RuntimeError, OSError) as exc:
        loop = "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40
        walk.skip(doc_id, "symlink loop (not followed)" if loop else "broken symlink")
        return None
    real_root = walk.real_root
    if target != real_root and real_root not in target.parents:
        walk.skip(doc_id, "symlink points outside the indexed folder (not followed)")
        return None
    return True, target.is_dir()


def _real(walk: _Walk, found: _Found) -> str:
    """The real path of an entry (resolved only when a symlink may lead elsewhere)."""
    return os.path.realpath(found.path) if found.linked else str(walk.real_root / found.rel)


def _folder(walk: _Walk, found: _Found, visited: set[str]) -> None:
    """A folder: walked, or skipped (said why unless it is a folder tools keep)."""
    patterns = walk.patterns
    if found.name in SKIP_DIRS or patterns.excluded_dir(found.rel):
        return
    real = _real(walk, found)
    if real in walk.skip_real:
        return
    if real in visited:
        walk.skip(found.doc_id, "folder already indexed through another path (symlink loop?)")
        return
    hidden_dir = found.name.startswith(".")
    taken = walk.taken()
    # a hidden folder only when a pattern may want it
    if not hidden_dir or patterns.unhide is not None:
        _walk(walk, found.path, found.rel, visited | {real}, found.linked)
    if hidden_dir and walk.taken() == taken:
        walk.skip(found.doc_id, f"hidden folder (index it with --include '{found.rel}/')")


def _file(walk: _Walk, found: _Found, folder_rel: str) -> None:
    """A file: considered when the patterns want it; a hidden one left out is reported."""
    patterns = walk.patterns
    if patterns.wanted(found.rel):
        walk.consider(found.path, found.doc_id, _real(walk, found), found.linked)
        return
    name = found.name
    if (
        name.startswith(".")
        and format_of(name)[0] is not None
        and patterns.hidden_only(found.rel)
        and not hidden(folder_rel)
    ):
        walk.skip(found.doc_id, f"hidden file (index it with --include '{found.rel}')")


def _valid_name(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _over_cap(path: Path, fmt: str, size: int, caps: Limits) -> str:
    """Why a file is over its cap ("" when it is not): its format's rule (bytes; a PDF's
    pages; a zipped document's text parts)."""
    return reader_of(fmt).over_cap(path, size, caps)
