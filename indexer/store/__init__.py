"""The only door to Chroma. `Store(settings)` opens an index; its four roles, each a class
of its own module, do the rest:

    store.catalogue   the live entries: find, publish, forget, saved search settings   catalogue.py
    store.builds      the writer: leases, begin -> Staging, clean-up, drop             builds.py
                      (its parts: delta collections, delta.py; physical ones, physical.py)
    store.records     reads of a version: nearest, get, scan, indexed texts            reading.py
    store.side        side files beside each collection: paths, the manifest           side.py
                      (the manifest's records: manifest.py)

Below them: the Chroma client and the translation of every Chroma error into a one-line
message (chroma.py), build leases (leases.py), the catalogue's records (entries.py),
chunks as records (records.py), the folder's layout (layout.py), garbage collection
(gc.py, and collect.py for `indexer gc`), what the folder holds on disk (disk.py)."""

from .builds import Builds
from .catalogue import Catalogue
from .disk import Disk, DiskUse
from .entries import GRACE, Entry, entry_key
from .layout import cache_folder, questions_folder, write_json
from .manifest import MANIFEST_FORMAT, FileEntry, Manifest, SkippedEntry
from .reading import Records
from .records import chunk_from_record, chunk_metadata
from .side import SideFile, SideFiles
from .staging import Staging
from .store import Store

__all__ = [
    "GRACE",
    "MANIFEST_FORMAT",
    "Builds",
    "Catalogue",
    "Disk",
    "DiskUse",
    "Entry",
    "FileEntry",
    "Manifest",
    "Records",
    "SideFile",
    "SideFiles",
    "SkippedEntry",
    "Staging",
    "Store",
    "cache_folder",
    "chunk_from_record",
    "chunk_metadata",
    "entry_key",
    "questions_folder",
    "write_json",
]
