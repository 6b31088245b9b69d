"""The Chroma client (embedded in the index folder, or a server by URL), the one place
where Chroma's exceptions become our one-line errors, and the name of the catalogue
collection every role of the store reads or writes through it."""

from __future__ import annotations

import contextlib
import errno
import shutil
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

from ..errors import CollectionNotFound, DiskFull, IndexerError, ReadOnlyIndex, StoreError
from ..settings import build_command

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import PyEmbedding
    from chromadb.config import Settings as ChromaSettings

    from .entries import Entry

T = TypeVar("T")

CATALOG = "indexer-catalog"  # the catalogue: live entries, build leases, delta-writing marks
# "Missing metadata segment": a read of a collection that a full rebuild deleted meanwhile
_MISSING = ("does not exist", "not found", "missing metadata segment", "missing vector segment")
_DISK_FULL = ("database or disk is full", "no space left", "disk full", "disk quota exceeded")
_READ_ONLY = ("readonly database", "read-only", "read only file system", "permission denied")
_CONNECTION = (
    "connection refused",
    "connecterror",
    "connection reset",
    "remoteprotocolerror",
    "timed out",
    "server disconnected",
    "could not connect",
    "readerror",
    "connection aborted",
)
# Below this much free space, a Chroma or SQLite failure nothing else explains is taken for
# a full disk: Chroma reports a failed write as "Failed to apply logs to the metadata
# segment", and the write that failed needed more than what is left.
DISK_LOW = 64 * 1024 * 1024


def placeholders(n: int, value: float = 0.0) -> list[PyEmbedding]:
    """`n` one-number vectors, for records that are fetched by id and never searched
    (catalogue records, parent chunks)."""
    return [[value]] * n


class ChromaFailure(StoreError):
    """A Chroma failure that none of the known causes explains."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else exc.__class__.__name__


def free_bytes(folder: Path) -> int | None:
    """Free space on the file system holding `folder` (or its nearest existing parent)."""
    for path in (folder, *folder.parents):
        if path.exists():
            try:
                return shutil.disk_usage(path).free
            except OSError:
                return None
    return None


def disk_full(where: str, folder: Path | None) -> DiskFull:
    """The one-line message for a full disk: the index's own (with what is left), or a
    Chroma server's (`folder` None)."""
    free = free_bytes(folder) if folder is not None else None
    if free is None:
        return DiskFull(
            f"the Chroma server at {where} reports a full disk; free space on its machine and retry "
            "— nothing was lost"
        )
    return DiskFull(
        f"the disk holding {where} is full ({free / 2**20:.1f} MB free); free space and retry "
        "— nothing was lost"
    )


def is_disk_full(exc: BaseException) -> bool:
    """Did a write fail for want of space (an OSError, SQLite's SQLITE_FULL, or their text
    inside a Chroma error)? Our own errors are already translated."""
    if isinstance(exc, IndexerError):
        return False
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if getattr(exc, "sqlite_errorcode", None) == 13:  # SQLITE_FULL
        return True
    return any(s in str(exc).lower() for s in _DISK_FULL)


def translate(
    exc: BaseException, where: str, what: str = "", folder: Path | None = None
) -> IndexerError:
    """The IndexerError that says what a Chroma (or file system) failure means to a user.
    `folder`: the local index folder (None with a server), whose free space tells a full
    disk from other failures."""
    if isinstance(exc, IndexerError):
        return exc
    name = exc.__class__.__name__.lower()
    text = f"{name} {exc}".lower()
    doing = f" while {what}" if what else ""
    if is_disk_full(exc):
        return disk_full(where, folder)
    if _is_read_only(exc, text):
        return ReadOnlyIndex(
            f"{where} is read-only{doing}: building needs write access (querying does not)"
        )
    if _is_missing(name, text):
        return CollectionNotFound(
            f"{what or 'a collection'} is missing from {where}; rebuild the strategy"
        )
    if _is_lost_connection(name, text):
        return StoreError(
            f"lost the Chroma server at {where}{doing} ({first_line(exc)}); check that it is "
            "running and run the command again (the previous version of the index is untouched)"
        )
    if _is_low_on_space(exc, folder):
        return disk_full(where, folder)
    return ChromaFailure(f"Chroma at {where} failed{doing}: {first_line(exc)}")


def _is_read_only(exc: BaseException, text: str) -> bool:
    """A write refused by a read-only file system or database, or by permissions."""
    refused = isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES)
    return refused or any(s in text for s in _READ_ONLY)


def _is_missing(name: str, text: str) -> bool:
    """A collection (or its segments) gone: deleted by a drop or a full rebuild meanwhile."""
    return "notfound" in name or any(s in text for s in _MISSING)


def _is_lost_connection(name: str, text: str) -> bool:
    """A Chroma server that could not be reached or stopped answering."""
    return any(s in text for s in _CONNECTION) or "connect" in name or "timeout" in name


def _is_low_on_space(exc: BaseException, folder: Path | None) -> bool:
    """A Chroma or SQLite failure nothing else explains, on a local index whose disk has
    less than DISK_LOW left: taken for a full disk."""
    if folder is None or isinstance(exc, OSError):
        return False
    return (free_bytes(folder) or 0) < DISK_LOW


def writable(folder: Path) -> bool:
    """Can files be created in `folder`? (root ignores permissions, not read-only mounts)"""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def read_only_view(folder: Path) -> Path:
    """A private, writable view of a read-only embedded database for reading it: Chroma
    opens its catalogue database read-write, so the catalogue (chroma.sqlite3, a few MB
    per 10k chunks) is copied to a temporary folder and the vector segments are linked,
    not copied. Removed when the process ends."""
    import atexit
    import shutil
    import tempfile

    view = Path(tempfile.mkdtemp(prefix="indexer-readonly-"))
    atexit.register(shutil.rmtree, view, True)
    for item in folder.iterdir():
        if item.is_dir():
            (view / item.name).symlink_to(item.resolve(), target_is_directory=True)
        elif item.name.startswith("chroma.sqlite3"):
            # the copy is ours to write: not the read-only mode of the original
            shutil.copyfile(item, view / item.name)
            (view / item.name).chmod(0o600)
    return view


def forget_system(path: Path) -> None:
    """Make the next embedded client on `path` a fresh Chroma system (Chroma keeps one per
    path for the process); the old one stays with whoever still holds it."""
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient._identifier_to_system.pop(str(path), None)


class Chroma:
    """A Chroma client whose every call goes through `call`, so that no Chroma exception
    reaches the user as a traceback."""

    def __init__(self, path: Path, url: str | None, read_only_ok: bool = False) -> None:
        self.path = path  # the embedded database folder (unused with a server)
        self.url = url
        # a reader may open a read-only folder through a private copy
        self.read_only_ok = read_only_ok
        self.full_disk_copy = False  # ...or one on a full disk (Chroma writes when it opens one)
        self._handles: dict[str, Collection] = {}

    @property
    def where(self) -> str:
        return self.url or str(self.path.parent)

    def build_command(self, *args: str) -> str:
        """`indexer build ARGS` naming this index (see `settings.build_command`)."""
        return build_command(*args, db=self.path.parent, url=self.url)

    def rebuild_command(self, entry: Entry, *args: str) -> str:
        """The build that rebuilds `entry`'s collection: its folders, its strategy and, unless
        the rule chose it (a plain build chooses the same way), its embedder."""
        choice = entry.extra.get("embedder_choice")
        by_rule = isinstance(choice, dict) and choice.get("by") == "rule"
        named = [] if by_rule else ["--embedder", entry.embedder]
        return self.build_command(*entry.source, *args, "-s", entry.strategy, *named)

    @property
    def folder(self) -> Path | None:
        """The local index folder whose disk holds the database (None with a server)."""
        return None if self.url else self.path.parent

    @cached_property
    def client(self) -> ClientAPI:
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False)
        import chromadb

        if self.url:
            return self._server(chromadb, self.url, settings)
        return self._embedded(chromadb, settings)

    def _server(self, chromadb: ModuleType, url: str, settings: ChromaSettings) -> ClientAPI:
        """A client of the Chroma server at `url`, which answered a heartbeat."""
        parsed = urlparse(url if "://" in url else f"http://{url}")
        host = parsed.hostname or "127.0.0.1"
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
        try:
            client: ClientAPI = chromadb.HttpClient(
                host=host, port=port, ssl=parsed.scheme == "https", settings=settings
            )
            client.heartbeat()
        except Exception:
            raise StoreError(
                f"cannot reach the Chroma server at {url}: start one with "
                "`chroma run --path DIR --port PORT`, or fix --chroma-url / INDEXER_CHROMA_URL"
            ) from None
        return client

    def _embedded(self, chromadb: ModuleType, settings: ChromaSettings) -> ClientAPI:
        """A client of the embedded database (a reader's private view of a read-only one)."""
        path = self.path
        self.full_disk_copy = False
        if self.read_only_ok and path.is_dir() and not writable(path):
            path = read_only_view(path)
        try:
            return self._open(chromadb, path, settings)
        except Exception as exc:  # chroma raises many kinds here
            return self._open_failed(exc, chromadb, path, settings)

    def _open_failed(
        self, exc: Exception, chromadb: ModuleType, path: Path, settings: ChromaSettings
    ) -> ClientAPI:
        """After a failed open: a reader on a full disk reads a private copy (Chroma writes
        when it opens a database); anything else is its one-line error."""
        error = translate(exc, self.where, folder=self.folder)
        if isinstance(error, DiskFull) and self.read_only_ok and path == self.path:
            forget_system(path)  # the next open, once there is room, starts afresh
            with contextlib.suppress(Exception):  # read as from a read-only folder
                client = self._open(chromadb, read_only_view(path), settings)
                self.full_disk_copy = True
                return client
        # a full disk, a read-only folder...: nothing is damaged
        if not isinstance(error, ChromaFailure):
            raise error from None
        raise StoreError(
            f"cannot open the Chroma database in {self.path} ({first_line(exc)}); "
            "if it is corrupt, move the folder away and rebuild"
        ) from None

    def _open(self, chromadb: ModuleType, path: Path, settings: ChromaSettings) -> ClientAPI:
        """An embedded client on `path` (Chroma writes into its database when it opens it)."""
        self._opened = str(path)
        client: ClientAPI = chromadb.PersistentClient(path=str(path), settings=settings)
        client.list_collections(limit=1)
        return client

    def reopen(self) -> None:
        """See what other processes wrote since this client opened the embedded database.

        An embedded Chroma keeps a collection's vector index in memory once loaded and
        does not notice vectors another process adds to it (an incremental build writes
        into the live collection), so a long-lived reader reopens when a new version is
        published. A server needs nothing: it serves every client the same data."""
        if self.url or "client" not in self.__dict__:
            return
        self._handles.clear()
        del self.__dict__["client"]
        forget_system(Path(getattr(self, "_opened", self.path)))

    def close(self) -> None:
        """Drop the client (so its folder can be removed)."""
        self._handles.clear()
        client = self.__dict__.pop("client", None)
        if client is not None:
            with contextlib.suppress(Exception):
                client._system.stop()

    def require_writable(self, doing: str) -> None:
        """Refuse, in one line, to write into a read-only index folder (before any write)."""
        folder = self.folder
        if folder is None:
            return
        if folder.is_dir() and not writable(folder):
            raise ReadOnlyIndex(
                f"{folder} is read-only: {doing} needs write access (query, eval and list do not); "
                "run it where the index is writable, or remount it read-write"
            )
        if self.read_only_ok:
            self.client  # opened now: on a full disk, a reader's is a private copy
            if self.full_disk_copy:
                raise disk_full(self.where, folder)  # what is written into the copy would be lost

    def call(self, fn: Callable[[], T], what: str = "") -> T:
        try:
            return fn()
        except IndexerError:
            raise
        except Exception as exc:
            raise translate(exc, self.where, what, self.folder) from None

    # -- collections -----------------------------------------------------------------------
    def collection(self, name: str) -> Collection:
        """A handle on a collection (cached); CollectionNotFound when it is gone."""
        handle = self._handles.get(name)
        if handle is None:
            handle = self.call(
                lambda: self.client.get_collection(name, embedding_function=None),
                f"collection {name}",
            )
            self._handles[name] = handle
        return handle

    def exists(self, name: str) -> bool:
        """Is the collection there now? (Asked of the database, not of the handle cache:
        another process may have deleted it.)"""
        try:
            self.call(
                lambda: self.client.get_collection(name, embedding_function=None),
                f"collection {name}",
            )
        except CollectionNotFound:
            self.forget(name)
            return False
        return True

    def forget(self, name: str) -> None:
        self._handles.pop(name, None)

    def create(self, name: str, metadata: dict[str, Any]) -> Collection:
        handle = self.call(
            lambda: self.client.create_collection(
                name,
                embedding_function=None,
                metadata=metadata,
                configuration={"hnsw": {"space": "cosine"}},
            ),
            f"creating collection {name}",
        )
        self._handles[name] = handle
        return handle

    def catalogue(self) -> Collection:
        """The catalogue collection (created on first use)."""
        return self.get_or_create(CATALOG, {"indexer": "catalog"})

    def get_or_create(self, name: str, metadata: dict[str, Any]) -> Collection:
        handle = self._handles.get(name)
        if handle is None:
            handle = self.call(
                lambda: self.client.get_or_create_collection(
                    name, embedding_function=None, metadata=metadata
                )
            )
            self._handles[name] = handle
        return handle

    def delete(self, name: str) -> None:
        self.forget(name)
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)

    def listing(self) -> list[tuple[str, dict[str, Any]]]:
        """(name, metadata) of every collection."""
        out = []
        for col in self.call(self.client.list_collections, "listing collections"):
            if isinstance(col, str):
                out.append((col, self.collection(col).metadata or {}))
            else:
                out.append((col.name, col.metadata or {}))
        return out
