"""The file manifest beside a version (`manifest.json`): the build settings, the labels of
its inputs, every file built (`FileEntry`) and every file skipped (`SkippedEntry`), as
typed records. `Manifest.to_json` writes the JSON the builds have always written (the same
keys in the same order), `Manifest.from_json` reads it back, older versions' included."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

MANIFEST_FORMAT = 2


@dataclass(kw_only=True)
class FileEntry:
    """One file a version was built from: its content hash, size and modification time
    (whole seconds), what its chunks hold, how its newlines were written, the warnings
    loading it gave, and its identity when hashed (`indexing.manifest.identity`)."""

    hash: str
    size: int = 0
    mtime: int = 0
    chunks: int = 0
    tokens: int = 0
    max_tokens: int = 0
    newline: str = ""  # lf | crlf | cr | mixed ("" when not recorded)
    warnings: list[str] = field(default_factory=list)
    stat: list[int] | None = None  # size, mtime and ctime in ns, inode

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileEntry:
        known = {k: data[k] for k in _FILE_FIELDS if k in data}
        return cls(**known)


@dataclass(kw_only=True)
class SkippedEntry:
    """A file a build could not read: its content hash then, and why."""

    hash: str = ""
    reason: str = "skipped"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SkippedEntry:
        return cls(hash=str(data.get("hash") or ""), reason=str(data.get("reason", "skipped")))


_FILE_FIELDS = tuple(FileEntry.__dataclass_fields__)


@dataclass(kw_only=True)
class Manifest:
    """A version's file manifest."""

    format: int = MANIFEST_FORMAT
    settings: dict[str, Any] = field(default_factory=dict)  # what, changed, rebuilds all
    labels: list[str] | None = None  # what each input's doc_ids start with
    files: dict[str, FileEntry] = field(default_factory=dict)
    skipped: dict[str, SkippedEntry] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": self.format, "settings": self.settings}
        if self.labels is not None:
            data["labels"] = list(self.labels)
        data["files"] = {d: asdict(f) for d, f in self.files.items()}
        data["skipped"] = {d: asdict(s) for d, s in self.skipped.items()}
        return data

    @classmethod
    def from_json(cls, data: Any) -> Manifest | None:
        """The manifest `data` holds; None when it is not one (not an object, a file entry
        without a hash, settings that are not an object)."""
        if not _readable(data):
            return None
        labels = data.get("labels")
        return cls(
            format=data.get("format", 0),
            settings=data.get("settings", {}),
            labels=[str(x) for x in labels] if isinstance(labels, list) else None,
            files={d: FileEntry.from_json(v) for d, v in data["files"].items()},
            skipped={d: SkippedEntry.from_json(v) for d, v in data.get("skipped", {}).items()},
        )


def _readable(data: Any) -> bool:
    """Whether `data` is a manifest: an object whose files are objects with a hash, whose
    skipped files are objects and whose settings are an object."""
    return (
        isinstance(data, dict)
        and _entries(data.get("files"), "hash")
        and _entries(data.get("skipped", {}), None)
        and isinstance(data.get("settings", {}), dict)
    )


def _entries(table: Any, key: str | None) -> bool:
    """Whether `table` is an object of objects (each with `key`, when given)."""
    return isinstance(table, dict) and all(
        isinstance(v, dict) and (key is None or key in v) for v in table.values()
    )
