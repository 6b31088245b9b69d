"""A BM25 index's folder: `.npy` arrays (memory-mapped on load, never unpickled) and
`params.json` (format, settings, statistics, the sha256 of every file and of itself).

Checking every file's sha256 on every load would read all of it, which defeats mapping (a
cold query would pay for the whole index). So a file is hashed in full when it is written
and again whenever its identity — size, modification time in ns, inode, device — is not
the one recorded when it was last found to match (`verified.json`, beside the files). A
file rewritten, truncated, replaced or copied is hashed again and, if it does not match, the
index is rebuilt; a file changed under the same identity (bytes flipped by the disk, or
written with its old time forced back) is not seen by a load — `indexer build` hashes
every file whatever the record says.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from ...errors import IndexerError
from ...store import write_json

FORMAT = 4  # 3: postings, sorted vocabulary and id tables as mapped arrays; base + delta segments;
# 4: analyzer 2 (codes, identifiers and versions kept whole and unstemmed): older indexes rebuild
RECORD = "verified.json"
Params = dict[str, Any]  # params.json: settings and statistics (JSON values of every kind)
Record = dict[str, list[Any]]  # verified.json: {file: [size, mtime_ns, inode, device, sha256]}
Scalar = TypeVar("Scalar", bound=np.generic)


BM25 = "the BM25 index"  # what a folder of these files holds, as messages name it


def damaged(folder: Path, why: str, what: str = BM25) -> IndexerError:
    """`what` (the BM25 index, the stored rows) in `folder` is damaged, and `why`."""
    verb = "are" if what.endswith("s") else "is"
    return IndexerError(f"{what} in {folder} {verb} damaged ({why})")


def params_digest(params: Params) -> str:
    """The checksum of params.json itself (everything in it but the checksums)."""
    rest = {k: v for k, v in params.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode("utf-8")).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def identity(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


def write(
    folder: Path,
    arrays: dict[str, NDArray[np.generic]],
    linked: dict[str, tuple[Path, str]],
    params: Params,
    moved: dict[str, Path] | None = None,
) -> None:
    """Write `arrays` as `<name>.npy`, hard-link (or copy) the `linked` files — {name:
    (path of an identical verified file, its sha256)}: a base segment an incremental build
    did not change — and move in the `moved` ones ({name: a file written elsewhere on the
    same file system}), then params.json with every file's sha256, then the record of what
    was verified: into a folder beside `folder` that then takes its place, so a process
    opening it (another reader of the same --db) never sees it half-written."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    final, folder = folder, folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        _write(folder, arrays, linked, params, moved or {})
        if final.exists():  # a damaged index being replaced: out of the way first
            old = final.with_name(f".{final.name}.{uuid.uuid4().hex[:8]}.old.tmp")
            os.rename(final, old)
            shutil.rmtree(old, ignore_errors=True)  # processes that mapped its files keep them
        os.rename(folder, final)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write(
    folder: Path,
    arrays: dict[str, NDArray[np.generic]],
    linked: dict[str, tuple[Path, str]],
    params: Params,
    moved: dict[str, Path],
) -> None:
    folder.mkdir()
    sums: dict[str, str] = {}
    for name, source in moved.items():
        os.replace(source, folder / name)
        sums[name] = sha256_file(folder / name)
    for name, array in arrays.items():
        path = folder / f"{name}.npy"
        with open(path, "wb") as fh:
            np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
        sums[path.name] = sha256_file(path)
    for name, (source, digest) in linked.items():
        path = folder / name
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        try:
            os.link(source, path)
        except OSError:  # another file system, or links not allowed: a copy, hashed again
            shutil.copyfile(source, path)
            digest = sha256_file(path)
        sums[name] = digest
    params = {**params, "format": FORMAT, "sha256": dict(sums)}
    params["sha256"]["params"] = params_digest(params)
    write_json(folder / "params.json", params)
    with contextlib.suppress(OSError):
        write_json(
            folder / RECORD,
            {name: [*identity(folder / name), digest] for name, digest in sums.items()},
        )


def read_params(folder: Path, what: str = BM25) -> Params:
    """A folder's params.json, checked (IndexerError naming `what` when it is not)."""
    try:
        params = json.loads((folder / "params.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise damaged(folder, f"params.json: {exc.__class__.__name__}", what) from None
    if not isinstance(params, dict) or params.get("format") != FORMAT:
        found = params.get("format") if isinstance(params, dict) else "?"
        raise IndexerError(f"{what} in {folder} has format {found}")
    sums = params.get("sha256")
    if not isinstance(sums, dict) or sums.get("params") != params_digest(params):
        raise damaged(folder, "params.json does not match its checksum", what)
    return params


def verify(folder: Path, params: Params, full: bool = False, what: str = BM25) -> None:
    """Check each file against its sha256: hashed when `full`, or when its identity is not
    the one recorded at its last check (then recorded, where the folder is writable).
    IndexerError naming `what` when one does not match."""
    sums = {k: v for k, v in params["sha256"].items() if k != "params"}
    record = _read_record(folder)
    changed = False
    for name, digest in sums.items():
        try:
            changed = _verified(folder, name, digest, record, full) or changed
        except _Mismatch as exc:
            raise damaged(folder, str(exc), what) from None
    if changed:
        with contextlib.suppress(OSError):
            write_json(folder / RECORD, {k: v for k, v in record.items() if k in sums})


def _read_record(folder: Path) -> Record:
    """What verified.json records (nothing when it is missing or unreadable)."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


class _Mismatch(Exception):
    """A file of the folder is missing or does not match its checksum."""


def _verified(folder: Path, name: str, digest: str, record: Record, full: bool) -> bool:
    """Check one file (_Mismatch when it is damaged); True when it was hashed (and
    `record` now holds its identity)."""
    path = folder / name
    try:
        now = identity(path)
    except OSError as exc:
        raise _Mismatch(f"{name}: {exc.__class__.__name__}") from None
    if not full and record.get(name) == [*now, digest]:
        return False
    if sha256_file(path) != digest:
        raise _Mismatch(f"{name} does not match its checksum")
    record[name] = [*now, digest]
    return True


def mapped(folder: Path, name: str, dtype: type[Scalar]) -> NDArray[Scalar]:
    """A `.npy` array of `dtype` mapped read-only (an empty one read, as an empty file
    cannot be mapped). The files hold the dtypes their writers give them, so the array is
    the map itself; one of another dtype would be converted in memory."""
    path = folder / f"{name}.npy"
    try:  # a plain ndarray over the map: slicing a np.memmap costs a Python call each time
        loaded = np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)
    except ValueError:
        loaded = np.load(path, allow_pickle=False)
    return np.asarray(loaded, dtype=dtype)
