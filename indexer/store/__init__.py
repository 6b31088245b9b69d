"""The only door to Chroma: the catalogue of live collections, staging and publishing
builds, reads (nearest, records, scan), build leases, garbage collection, and the
translation of every Chroma error into one-line messages."""

from .catalog import Entry, entry_key
from .records import chunk_from_record, chunk_metadata
from .staging import GRACE, Staging
from .layout import cache_folder, questions_folder, write_json
from .store import Store

__all__ = ["GRACE", "Entry", "Staging", "Store", "chunk_from_record", "chunk_metadata", "entry_key", "write_json",
           "cache_folder", "questions_folder"]
