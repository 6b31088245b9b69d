"""The index: Chroma (embedded in the index folder, or a server) plus local side files,
behind one small front object opened one way, `Store(settings)` (`create=True` for a
build, which may make the folder).

Each (strategy, embedder) has one live physical collection (`ix-<strategy>--<embedder>--
<stamp>`) and a generation number, both recorded in a catalogue — a small collection in
the same Chroma — which readers resolve names through, so they only ever see published
versions. Side files (BM25 index, file manifest) sit in `<db>/indexes/<collection>/g<N>/`,
named by the collection and generation they belong to; a machine that lacks them rebuilds
them from the stored records.

The front holds the settings, the folder's checks and four roles, each a class of its
own module: `catalogue` (the live entries: `catalogue.py`), `builds` (the writer: leases,
`begin` -> `Staging`, clean-up, drop: `builds.py`), `records` (reads of a version's
records: `reading.py`) and `side` (side-file paths and the manifest: `side.py`). The
store owns every path in the index folder: the marker, Chroma's folder, the side folders,
the lock files, the caches. Use cases ask it for them (`side.path`, `side.manifest`,
`cache_dir`, `Staging.save_sides`, `Staging.write_manifest`) and never join a name to the
folder themselves; what goes into a side folder (the BM25 format) is not the store's
business: a side is a `SideFile` (`side.py`) that saves itself at the path it is handed. The folder's layout is in `layout.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import IndexerError
from ..settings import Settings, build_command, indexer_command
from .builds import Builds
from .catalogue import Catalogue
from .chroma import Chroma, translate
from .disk import Disk
from .entries import Entry
from .folder import check_folder
from .layout import CACHE, CHROMA, LOCKS, MARKER, SIDE
from .leases import Leases
from .reading import Records
from .side import SideFiles


class Store:
    """The index: a Chroma client (embedded or server) plus the side-file folder."""

    def __init__(self, settings: Settings, *, create: bool = False) -> None:
        if not isinstance(settings, Settings):
            raise TypeError(
                f"Store takes a Settings, not {type(settings).__name__}: "
                "Store(Settings.load(db=...)) or Store(settings.with_(db=...))"
            )
        self.settings = settings
        self.db = settings.db
        self.url = settings.chroma_url
        check_folder(self.db, self.url, create)
        self._chroma = Chroma(self.db / CHROMA, self.url, read_only_ok=not create)
        leases = Leases(self._chroma, self.db / LOCKS, settings.lease_ttl)
        self.side = SideFiles(self.db / SIDE)
        self.catalogue = Catalogue(self._chroma, leases, settings.embedder)
        self.records = Records(self._chroma)
        self.builds = Builds(self._chroma, self.catalogue, self.side, leases)

    @staticmethod
    def holds_index(db: str | os.PathLike[str]) -> bool:
        """Whether `db` is an index folder already (its marker is there)."""
        return (Path(db) / MARKER).exists()

    @property
    def where(self) -> str:
        """The index as messages name it: the server's URL, or the folder."""
        return self.url or str(self.db)

    def build_command(self, *args: str) -> str:
        """`indexer build ARGS` as messages advise it, naming this index unless it is the
        one the command reaches without options."""
        return build_command(*args, db=self.db, url=self.url)

    def command(self, verb: str, *args: str) -> str:
        """`indexer VERB ARGS` as messages advise it, naming this index when needed."""
        return indexer_command(verb, *args, db=self.db, url=self.url)

    def rebuild_command(self, entry: Entry, *args: str) -> str:
        """The build that rebuilds `entry`'s collection (`Chroma.rebuild_command`)."""
        return self._chroma.rebuild_command(entry, *args)

    @property
    def cache_dir(self) -> Path:
        """Where caches of this index live (the embedding cache, the LLM context cache):
        each names its own file in it."""
        return self.db / CACHE

    def disk(self) -> Disk:
        """What the index folder holds on disk, per collection and shared (`disk.py`)."""
        return Disk(self.db, local=self.url is None)

    def fault(self, exc: BaseException, what: str = "") -> IndexerError:
        """The one-line error for a failure writing into this index (a full disk...)."""
        return translate(exc, str(self.db), what, self.db)

    def close(self) -> None:
        """Drop the Chroma client (a later call opens it again)."""
        self._chroma.close()
