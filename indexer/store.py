"""Chroma as the store: one collection per (strategy, embedder), swapped in atomically.

Each build writes a new *physical* collection (`ix-<strategy>--<embedder>--<stamp>`).
A catalogue — a small collection in the same Chroma — maps the logical name
(strategy @ embedder) to the live physical collection and is updated last, in one
upsert. Readers resolve names through the catalogue, so they only ever see complete
builds. Files that live beside a collection (BM25 index, file manifest) sit in
`<db>/indexes/<physical name>/`, named by the collection they belong to, so a rebuilt
collection never pairs with stale side files.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import time
import uuid
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from . import __version__
from .config import ENV_CHROMA_URL, db_dir
from .errors import CollectionNotFound, IndexerError, LockTimeout, StoreError
from .types import Chunk

CATALOG = "indexer-catalog"
PREFIX = "ix-"
MARKER = "indexer.json"
STORE_FORMAT = 1

_META_FIELDS = (
    "doc_id", "start", "end", "start_line", "end_line", "kind", "header", "heading_path", "n_tokens",
    "parent_id", "context", "symbol", "parent_symbol", "language", "strategy", "hash",
)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-._") or "x"


@dataclass
class Entry:
    """A live collection as the catalogue records it."""

    strategy: str
    embedder: str
    collection: str
    dimension: int
    kind: str
    params: dict[str, Any]
    tokenizer: str
    version: str
    built_at: str
    source: list[str]
    files: int = 0
    chunks: int = 0
    avg_tokens: float = 0.0
    max_tokens: int = 0
    parents: str = ""  # companion collection holding parent chunks (parent-child strategies)
    build_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return entry_key(self.strategy, self.embedder)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Entry:
        data = json.loads(text)
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


def collection_name(strategy: str) -> str:
    """The collection name a strategy spec builds (`fixed:size=100` -> `fixed-100`); a
    name that is not a spec (a custom `--name`) is returned as it is."""
    if ":" not in strategy:
        return strategy.strip()
    from .chunkers import parse_strategy
    from .errors import UsageError

    try:
        return parse_strategy(strategy).name
    except UsageError:
        return strategy.strip()


def entry_key(strategy: str, embedder: str) -> str:
    return f"{strategy}@{embedder}"


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    meta = {name: getattr(chunk, name) for name in _META_FIELDS}
    meta["indexed_text"] = chunk.indexed_text
    return meta


def chunk_from_record(chunk_id: str, document: str, meta: dict[str, Any]) -> Chunk:
    values = {name: meta.get(name, "") for name in _META_FIELDS}
    for name in ("start", "end", "start_line", "end_line", "n_tokens"):
        values[name] = int(values[name] or 0)
    return Chunk(id=chunk_id, text=document or "", **values)


class Store:
    """The index: a Chroma client (embedded or server) plus the side-file folder."""

    def __init__(self, db: str | os.PathLike | None = None, chroma_url: str | None = None, create: bool = False):
        self.db = db_dir(db)
        self.url = chroma_url if chroma_url is not None else os.environ.get(ENV_CHROMA_URL) or None
        self._check_folder(create)

    # -- opening -------------------------------------------------------------------------
    def _check_folder(self, create: bool) -> None:
        marker = self.db / MARKER
        if self.db.exists() and not self.db.is_dir():
            raise StoreError(f"{self.db} is a file, not an index folder; pass another --db")
        if self.db.is_dir() and not marker.exists() and any(self.db.iterdir()):
            raise StoreError(f"{self.db} is not an indexer database (no {MARKER} in it); pass another --db")
        if not marker.exists():
            if not create and self.url is None:
                raise CollectionNotFound(
                    f"no index at {self.db}; build one first: indexer build PATH --strategy headers"
                )
            if create or self.url is not None:
                self.db.mkdir(parents=True, exist_ok=True)
                marker.write_text(json.dumps({"format": STORE_FORMAT, "tool": "indexer"}) + "\n")
        else:
            try:
                fmt = json.loads(marker.read_text()).get("format")
            except (OSError, ValueError):
                raise StoreError(f"{marker} is unreadable; the index folder looks damaged") from None
            if fmt != STORE_FORMAT:
                raise StoreError(f"{self.db} was written by an incompatible indexer (format {fmt}); rebuild it")

    @cached_property
    def client(self):
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False)
        if self.url:
            import chromadb

            parsed = urlparse(self.url if "://" in self.url else f"http://{self.url}")
            host = parsed.hostname or "127.0.0.1"
            port = parsed.port or (443 if parsed.scheme == "https" else 8000)
            try:
                client = chromadb.HttpClient(host=host, port=port, ssl=parsed.scheme == "https", settings=settings)
                client.heartbeat()
            except Exception:
                raise StoreError(
                    f"cannot reach the Chroma server at {self.url}: start one with "
                    "`chroma run --path DIR --port PORT`, or fix --chroma-url / INDEXER_CHROMA_URL"
                ) from None
            return client
        import chromadb

        path = self.db / "chroma"
        try:
            client = chromadb.PersistentClient(path=str(path), settings=settings)
            client.list_collections(limit=1)
        except Exception as exc:  # chroma raises many kinds here
            raise StoreError(
                f"cannot open the Chroma database in {path} ({_first_line(exc)}); "
                "if it is corrupt, move the folder away and rebuild"
            ) from None
        return client

    @property
    def where(self) -> str:
        return self.url or str(self.db)

    # -- catalogue -----------------------------------------------------------------------
    @cached_property
    def _catalog(self):
        return self._call(
            lambda: self.client.get_or_create_collection(CATALOG, embedding_function=None, metadata={"indexer": "catalog"})
        )

    def entries(self) -> list[Entry]:
        got = self._call(lambda: self._catalog.get(include=["documents"]))
        out = [Entry.from_json(doc) for doc in got["documents"] or []]
        return sorted(out, key=lambda e: (e.strategy, e.embedder))

    def find(self, strategy: str, embedder: str | None = None) -> Entry:
        """The live entry for a strategy — its collection name, or the spec it was built
        with (`fixed:size=100` finds `fixed-100`); with no embedder given, the only one
        there is (or the default embedder's when several exist)."""
        strategy = collection_name(strategy)
        matches = [e for e in self.entries() if e.strategy == strategy]
        if embedder is not None:
            exact = [e for e in matches if e.embedder == embedder]
            if exact:
                return exact[0]
            if matches:
                built = ", ".join(e.embedder for e in matches)
                raise CollectionNotFound(
                    f"strategy {strategy!r} was built with {built}, not {embedder}; query with --embedder "
                    f"{matches[0].embedder}, or build it: indexer build PATH --strategy {strategy} --embedder {embedder}"
                )
        elif len(matches) == 1:
            return matches[0]
        elif matches:
            from .embeddings import canonical_name

            default = canonical_name(None)
            for e in matches:
                if e.embedder == default:
                    return e
            built = ", ".join(e.embedder for e in matches)
            raise CollectionNotFound(f"strategy {strategy!r} exists for several embedders ({built}); pass --embedder")
        known = sorted({e.strategy for e in self.entries()})
        have = f"built: {', '.join(known)}" if known else "nothing is built yet"
        raise CollectionNotFound(
            f"no collection for strategy {strategy!r} in {self.where} ({have}); "
            f"build it: indexer build PATH --strategy {strategy}"
        )

    def find_or_none(self, strategy: str, embedder: str) -> Entry | None:
        for e in self.entries():
            if e.strategy == strategy and e.embedder == embedder:
                return e
        return None

    def publish(self, entry: Entry) -> None:
        """Make `entry` the live collection for its key: one upsert, the switch point."""
        self._call(
            lambda: self._catalog.upsert(
                ids=[entry.key],
                embeddings=[[0.0]],
                documents=[entry.to_json()],
                metadatas=[{"strategy": entry.strategy, "embedder": entry.embedder, "collection": entry.collection}],
            )
        )

    def save_search(self, strategy: str, embedder: str, settings: dict[str, Any] | None) -> Entry:
        """Store (or, with None, forget) a collection's default search settings: under the
        build lock, on the live entry, so a build running now keeps them."""
        with self.lock(strategy, embedder):
            entry = self.find_or_none(strategy, embedder)
            if entry is None:
                raise CollectionNotFound(f"no collection for strategy {strategy!r} ({embedder}) in {self.where}")
            if settings:
                entry.extra["search"] = settings
            else:
                entry.extra.pop("search", None)
            self.publish(entry)
        return entry

    def unpublish(self, entry: Entry) -> None:
        self._call(lambda: self._catalog.delete(ids=[entry.key]))

    # -- collections ---------------------------------------------------------------------
    def new_collection(self, strategy: str, embedder: str, metadata: dict[str, Any], suffix: str = ""):
        stamp = time.strftime("%Y%m%d%H%M%S") + uuid.uuid4().hex[:6]
        name = f"{PREFIX}{slug(strategy)}--{slug(embedder)}--{stamp}{suffix}"[:500]
        meta = {"indexer_key": entry_key(strategy, embedder), "indexer_version": __version__, **metadata}
        collection = self._call(
            lambda: self.client.create_collection(
                name, embedding_function=None, metadata=meta, configuration={"hnsw": {"space": "cosine"}}
            )
        )
        return collection

    def collection(self, name: str):
        def get():
            return self.client.get_collection(name, embedding_function=None)

        try:
            return get()
        except IndexerError:
            raise
        except Exception as exc:
            if "does not exist" in str(exc) or exc.__class__.__name__ == "NotFoundError":
                raise CollectionNotFound(
                    f"collection {name} is missing from {self.where}; rebuild the strategy"
                ) from None
            raise StoreError(f"cannot open collection {name} in {self.where}: {_first_line(exc)}") from None

    def delete_collection(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self.client.delete_collection(name)
        shutil.rmtree(self.side_dir(name), ignore_errors=True)

    def side_dir(self, collection: str) -> Path:
        return self.db / "indexes" / collection

    def leftovers(self, strategy: str, embedder: str) -> list[str]:
        """Physical collections of this key that are not live: what a killed build left."""
        key = entry_key(strategy, embedder)
        live = self.find_or_none(strategy, embedder)
        keep = {live.collection, live.parents} if live else set()
        names = []
        for col in self._call(self.client.list_collections):
            name = col if isinstance(col, str) else col.name
            if not name.startswith(PREFIX) or name in keep:
                continue
            meta = col.metadata if not isinstance(col, str) else self.collection(name).metadata
            if (meta or {}).get("indexer_key") == key:
                names.append(name)
        side = self.db / "indexes"
        if side.is_dir():
            live_names = {e.collection for e in self.entries()} | {e.parents for e in self.entries()}
            prefix = f"{PREFIX}{slug(strategy)}--{slug(embedder)}--"
            names += [p.name for p in side.iterdir() if p.name.startswith(prefix) and p.name not in live_names]
        return sorted(set(names))

    def cleanup(self, strategy: str, embedder: str) -> list[str]:
        removed = self.leftovers(strategy, embedder)
        for name in removed:
            self.delete_collection(name)
        return removed

    # -- locking -------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, strategy: str, embedder: str, wait: bool = True, on_wait=None):
        """An exclusive per-(strategy, embedder) build lock (a file lock in the db folder)."""
        folder = self.db / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{slug(strategy)}--{slug(embedder)}.lock"
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not wait:
                    raise LockTimeout(
                        f"another build of {strategy} ({embedder}) is running on {self.where}; "
                        "wait for it, or drop --no-wait to queue behind it"
                    ) from None
                if on_wait:
                    on_wait(f"waiting for another build of {strategy} ({embedder}) to finish...")
                fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # -- helpers -------------------------------------------------------------------------
    def _call(self, fn):
        try:
            return fn()
        except IndexerError:
            raise
        except Exception as exc:
            raise StoreError(f"Chroma at {self.where} failed: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else exc.__class__.__name__


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temporary file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
