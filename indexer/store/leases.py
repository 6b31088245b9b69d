"""Exclusive build leases per (strategy, embedder).

With the embedded database every builder shares the index folder, so a file lock there
is enough. With a Chroma server, builders on other machines (with other --db folders)
share only the server: the lease is a record in the server's catalogue naming its owner
and an expiry that a heartbeat thread keeps pushing forward. A lease whose owner died
expires and is taken over; two builders racing for a free lease both write it, wait a
moment and read it back: the one whose name is there holds it, the other waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LockTimeout
from .chroma import Chroma, placeholders, translate
from .entries import entry_key, slug

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

TTL = 30.0  # seconds a server lease lives without a heartbeat
SETTLE = 0.4  # seconds between writing a lease and reading it back
LEASE = "lease:"  # the catalogue ids of server leases

OnWait = Callable[[str], None]
LeaseRecord = dict[str, Any]  # owner, until (epoch seconds), strategy, embedder, since


def _busy(
    strategy: str, embedder: str, where: str, owner: str = "", action: str = ""
) -> LockTimeout:
    """`action`: what the refused caller wanted to do (empty: build)."""
    by = f" ({owner})" if owner else ""
    if action:
        return LockTimeout(
            f"cannot {action} {strategy} ({embedder}) now: a build of it is running on {where}{by} "
            f"and holds its lease; {action} it when the build is done, or without --no-wait to wait"
        )
    return LockTimeout(
        f"another build of {strategy} ({embedder}) is running on {where}{by}; "
        "wait for it, or run the build without --no-wait to queue behind it"
    )


def _waiting(strategy: str, embedder: str, action: str = "") -> str:
    if action:
        return f"waiting for the build of {strategy} ({embedder}) to finish before the {action}..."
    return f"waiting for another build of {strategy} ({embedder}) to finish..."


@contextlib.contextmanager
def file_lease(
    folder: Path,
    strategy: str,
    embedder: str,
    where: str,
    wait: bool = True,
    on_wait: OnWait | None = None,
    action: str = "",
) -> Iterator[None]:
    """A lock file in the index folder (embedded database)."""
    from filelock import FileLock, Timeout

    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / f"{slug(strategy)}--{slug(embedder)}.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if not wait:
                raise _busy(strategy, embedder, where, action=action) from None
            if on_wait:
                on_wait(_waiting(strategy, embedder, action))
            lock.acquire()
    except OSError as exc:  # a lock file cannot be made: a read-only or full disk
        raise translate(exc, where, "taking a build lease", folder.parent) from None
    try:
        yield
    finally:
        lock.release()


def held_file_leases(folder: Path, strategy: str) -> list[str]:
    """The embedders (as their lock files spell them) whose build of `strategy` holds its
    lock file in `folder` now. A lock file that cannot be opened (a read-only folder) is
    taken as free: nothing builds there."""
    from filelock import FileLock, Timeout

    prefix = f"{slug(strategy)}--"  # a slug never holds "--": the split is unambiguous
    held = []
    for path in sorted(folder.glob(f"{prefix}*.lock")) if folder.is_dir() else []:
        lock = FileLock(str(path))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            held.append(path.name[len(prefix) : -len(".lock")])
        except OSError:
            continue
        else:
            lock.release()
    return held


def _record(doc: str | None) -> LeaseRecord | None:
    """A lease record from its JSON (None when there is none, or it is not one)."""
    if not doc:
        return None
    try:
        record = json.loads(doc)
    except (TypeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def held_server_leases(catalog: Collection, chroma: Chroma) -> list[LeaseRecord]:
    """The lease records in a server's catalogue that have not expired (strategy, embedder,
    owner...)."""
    got = chroma.call(
        lambda: catalog.get(where={"kind": "lease"}, include=["documents"]), "reading build leases"
    )
    records = [_record(doc) for doc in got.get("documents") or []]
    return [r for r in records if r is not None and r.get("until", 0) >= time.time()]


class ServerLease:
    """A lease record in the catalogue of a Chroma server."""

    def __init__(
        self,
        catalog: Collection,
        chroma: Chroma,
        key: str,
        strategy: str,
        embedder: str,
        ttl: float = TTL,
        action: str = "",
    ) -> None:
        self.catalog, self.chroma = catalog, chroma
        self.id = f"{LEASE}{key}"
        self.strategy, self.embedder = strategy, embedder
        self.action = action
        self.ttl = ttl
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> LeaseRecord | None:
        got = self.chroma.call(
            lambda: self.catalog.get(ids=[self.id], include=["documents"]), "reading a build lease"
        )
        docs = got.get("documents") or []
        return _record(docs[0]) if docs else None

    def _mine(self, record: LeaseRecord | None) -> bool:
        return record is not None and record.get("owner") == self.owner

    def _write(self) -> None:
        record = {
            "owner": self.owner,
            "until": time.time() + self.ttl,
            "strategy": self.strategy,
            "embedder": self.embedder,
            "since": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        self.chroma.call(
            lambda: self.catalog.upsert(
                ids=[self.id],
                embeddings=placeholders(1),
                documents=[json.dumps(record)],
                metadatas=[{"kind": "lease"}],
            ),
            "writing a build lease",
        )

    def _take(self) -> tuple[bool, LeaseRecord | None]:
        """One attempt: write the lease when it is free (expired, or ours), then read back
        who holds it. (Whether this owner holds it, the record read.)"""
        current = self._read()
        if current is None or current.get("until", 0) < time.time() or self._mine(current):
            self._write()
            time.sleep(SETTLE)
            current = self._read()
            if self._mine(current):
                return True, current
        return False, current

    def acquire(self, wait: bool = True, on_wait: OnWait | None = None) -> None:
        told = False
        while True:
            held, current = self._take()
            if held:
                break
            holder = current or {}
            if not wait:
                raise _busy(
                    self.strategy,
                    self.embedder,
                    self.chroma.where,
                    holder.get("owner", ""),
                    self.action,
                )
            if on_wait and not told:
                on_wait(
                    _waiting(self.strategy, self.embedder, self.action)[:-3]
                    + f" (held by {holder.get('owner', '?')})..."
                )
                told = True
            time.sleep(1.0)
        self._thread = threading.Thread(target=self._beat, name="indexer-lease", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                if self._mine(self._read()):
                    self._write()
            except Exception:  # the build itself will report a lost server
                pass

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            if self._mine(self._read()):
                self.chroma.call(lambda: self.catalog.delete(ids=[self.id]))


@contextlib.contextmanager
def server_lease(
    catalog: Collection,
    chroma: Chroma,
    key: str,
    strategy: str,
    embedder: str,
    wait: bool = True,
    on_wait: OnWait | None = None,
    ttl: float = TTL,
    action: str = "",
) -> Iterator[ServerLease]:
    lease = ServerLease(
        catalog, chroma, key, strategy=strategy, embedder=embedder, ttl=ttl, action=action
    )
    lease.acquire(wait, on_wait)
    try:
        yield lease
    finally:
        lease.release()


class Leases:
    """The build leases of one index: lock files in its folder (`locks`), or with a Chroma
    server records in the server's catalogue, so builders on other machines wait too."""

    def __init__(self, chroma: Chroma, locks: Path, ttl: float = TTL) -> None:
        self._chroma, self._locks, self._ttl = chroma, locks, ttl

    def hold(
        self,
        strategy: str,
        embedder: str,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        doing: str = "building",
        action: str = "",
    ) -> AbstractContextManager[object]:
        """An exclusive build lease. Whoever takes it writes into the index (`doing`, for
        the message when the folder is read-only); `action` names what a caller other
        than a build wants (`drop`), for the messages when a build holds the lease."""
        chroma = self._chroma
        if chroma.url:
            return server_lease(
                chroma.catalogue(),
                chroma,
                entry_key(strategy, embedder),
                strategy=strategy,
                embedder=embedder,
                wait=wait,
                on_wait=on_wait,
                ttl=self._ttl,
                action=action,
            )
        chroma.require_writable(doing)
        return file_lease(
            self._locks,
            strategy,
            embedder,
            where=chroma.where,
            wait=wait,
            on_wait=on_wait,
            action=action,
        )

    def running(self, names: Sequence[str], embedder: str | None = None) -> list[tuple[str, str]]:
        """(strategy, embedder) of each build of one of `names` (of `embedder`, if given)
        holding its lease now."""
        if self._chroma.url:
            return self._running_on_server(names, embedder)
        return [
            (name, embedder or held)
            for name in names
            for held in held_file_leases(self._locks, name)
            if embedder is None or slug(embedder) == held
        ]

    def _running_on_server(
        self, names: Sequence[str], embedder: str | None
    ) -> list[tuple[str, str]]:
        leases = held_server_leases(self._chroma.catalogue(), self._chroma)
        return [
            (r["strategy"], r["embedder"])
            for r in leases
            if r.get("strategy") in names and embedder in (None, r.get("embedder"))
        ]
