"""The file manifest of a built version: every file's content hash, size and time, and
what was skipped; and what it tells about a stale index (documents changed since)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..loaders import SourceFile
from ..loaders.files import input_labels
from ..store import MANIFEST_FORMAT, Entry, FileEntry, Manifest, Store
from .events import input_file

RACY_NS = 2_000_000_000  # a file changed this recently is not trusted by its identity next time


def file_mtime(path: Path) -> int:
    """A file's modification time in whole seconds, as the manifest keeps it (0 when it
    cannot be read)."""
    try:
        return int(path.stat().st_mtime)
    except OSError:
        return 0


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(store: Store, entry: Entry) -> Manifest | None:
    """The file manifest of a live version, of the format builds write (None when missing,
    unreadable or of another format)."""
    manifest = store.side.manifest(entry)
    if manifest is None or manifest.format != MANIFEST_FORMAT:
        return None
    return manifest


def newlines(store: Store, entry: Entry) -> dict[str, str]:
    """{doc_id: the newlines of the file as read (`lf`, `crlf`, `cr`, `mixed`)} for the
    files of a live version that recorded them; offsets index each text with `\n`."""
    manifest = read_manifest(store, entry) or Manifest()
    return {d: f.newline for d, f in manifest.files.items() if f.newline}


def identity(path: Path) -> list[int] | None:
    """A file's identity — size, modification and change times in ns, inode — recorded in
    the manifest when it is hashed; None when it changed within RACY_NS of now (it could
    change again within the clock's granularity unseen: hashed next time, as git treats
    racily clean files). The change time moves on every write and cannot be set back."""
    try:
        st = path.stat()
    except OSError:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def trusted_hashes(
    manifest: Manifest | None, changed: set[str] | None
) -> dict[str, tuple[str, int | list | None]]:
    """{doc_id: (hash, what must still hold)} a manifest records. With `changed` (doc_ids
    named by file-system events) the files not in it are taken as unchanged while their
    size matches; with `changed` None any file may have changed, and a file is taken as
    unchanged, without reading it, only while its identity (`identity`) is the one
    recorded when it was hashed — so a build over an untouched folder of 10,000 files
    costs a `stat` each, not reading them all."""
    if manifest is None:
        return {}
    if changed is None:
        return {d: (f.hash, f.stat) for d, f in manifest.files.items() if isinstance(f.stat, list)}
    out: dict[str, tuple[str, int | list | None]] = {
        d: (s.hash, None) for d, s in manifest.skipped.items() if d not in changed
    }
    out.update((d, (f.hash, f.size)) for d, f in manifest.files.items() if d not in changed)
    return out


def with_identities(
    files: dict[str, FileEntry], stats: dict[str, list[int] | None]
) -> dict[str, FileEntry]:
    """The manifest's file entries with each file's identity as this build found it before
    reading it (`identity`): for the files it hashed and for those it trusted alike, so
    files a build had to read though unchanged (touched, or recorded by a version of the
    tool that kept no identities) are trusted again from the next version it writes."""
    return {d: replace(f, stat=stats.get(d)) for d, f in files.items()}


def content_hash(
    src: SourceFile,
    trusted: dict[str, tuple[str, int | list | None]],
    stat: list[int] | None = None,
) -> str:
    """A file's content hash: the trusted one while what it was trusted on holds (its size,
    or its identity `stat`, taken before this call), else read from the file ("" when it
    cannot be read: loading it will say why)."""
    known, check = trusted.get(src.doc_id, ("", None))
    if known and (
        check is None or (check == stat if isinstance(check, list) else check == src.size)
    ):
        return known
    try:
        return file_hash(src.path)
    except OSError:
        return ""


def built_from(entry: Entry, manifest: Manifest) -> list[BuiltInput]:
    """The inputs (folders and files given) `entry` was built from that are still there,
    each with the label its doc_ids start with: as the build recorded them, else as
    discovery names several inputs (`input_labels`)."""
    labels = manifest.labels
    if labels is None or len(labels) != len(entry.source):
        labels = input_labels(entry.source)
    inputs = [BuiltInput(Path(s), str(label)) for s, label in zip(entry.source, labels)]
    return [i for i in inputs if i.root.exists()]


@dataclass(frozen=True)
class BuiltInput:
    """One input of a build and the label its doc_ids start with ("" for a lone input)."""

    root: Path
    label: str

    def file(self, doc_id: str) -> Path | None:
        """The file `doc_id` names under this input, if it is there."""
        return input_file(self.root, self.root.is_dir(), self.label, doc_id)


def _located(inputs: list[BuiltInput], doc_id: str) -> Path | None:
    return next((p for i in inputs if (p := i.file(doc_id)) is not None), None)


def stale_files(store: Store, entry: Entry, files: list[SourceFile], root: Path) -> list[str]:
    """Files that differ from what `entry` was built from — changed (by content hash) or
    gone — among the files it holds, when its doc_ids name the same files under `root` as
    `files` (found under `root`) do: it was built from `root`, or from folders of `root`
    under their own names (`indexer build a b`, doc_ids `a/...`, `b/...`). Empty without
    a manifest or when built from elsewhere."""
    manifest = read_manifest(store, entry)
    if manifest is None or not _named_under(built_from(entry, manifest), entry, root):
        return []
    present = {src.doc_id: src for src in files}
    out = []
    for doc_id, known in manifest.files.items():
        src = present.get(doc_id)
        if src is None:
            out.append(doc_id)
            continue
        try:
            if known.hash != file_hash(src.path):
                out.append(doc_id)
        except OSError:
            pass  # unreadable now: nothing to compare
    return sorted(out)


def _named_under(inputs: list[BuiltInput], entry: Entry, root: Path) -> bool:
    """Whether every input of `entry` is `root`'s own folder its label names."""
    top = root.resolve()
    return len(inputs) == len(entry.source) and all(
        (top / i.label).resolve() == i.root for i in inputs
    )


def quick_stale(store: Store, entry: Entry, limit: int = 20_000) -> list[str]:
    """Files changed or gone since the build, when an input it was built from is at hand
    (several folders included): sizes and modification times first, content hashes only
    for files whose size or time moved (so an untouched corpus costs one `stat` a file)."""
    manifest = read_manifest(store, entry)
    if manifest is None or len(manifest.files) > limit:
        return []
    inputs = built_from(entry, manifest)
    if not inputs:
        return []
    return sorted(d for d, known in manifest.files.items() if _moved(_located(inputs, d), known))


def _moved(path: Path | None, known: FileEntry) -> bool:
    """Whether a built file is gone or its content changed (unreadable: not known)."""
    if path is None:
        return True
    try:
        stat = path.stat()
        if (stat.st_size, int(stat.st_mtime)) == (known.size, known.mtime):
            return False
        return file_hash(path) != known.hash
    except OSError:
        return False


def why_full(old: dict, new: dict) -> str:
    """Why a build must be a full one: the build settings that changed since the manifest's."""
    changed = []
    for key in new:
        if old.get(key) != new.get(key):
            if key == "params":
                diffs = [
                    f"{k} {old['params'].get(k)}->{v}"
                    for k, v in new["params"].items()
                    if old["params"].get(k) != v
                ]
                changed.append("parameters changed (" + ", ".join(diffs) + ")")
            else:
                changed.append(f"{key} changed ({old.get(key)} -> {new.get(key)})")
    return "; ".join(changed) or "settings changed"
