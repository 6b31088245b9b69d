"""What a loader says of a file it does not index: `SkipFile` while reading it (the
message is the reason), `Skipped` in the report. Every loader raises it; the loaders
share it from here, below them all."""

from __future__ import annotations

from dataclasses import dataclass


class SkipFile(Exception):
    """Raised while reading a file that cannot be indexed; the message is the reason."""


@dataclass(frozen=True, slots=True)
class Skipped:
    doc_id: str
    reason: str
