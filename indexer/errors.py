"""Typed errors raised by the library; the CLI turns them into one-line messages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class IndexerError(Exception):
    """Base class for every error a user can cause or fix (bad input, missing index...).

    The message is one line that says what went wrong and what to do next.
    """

    exit_code = 1


class UsageError(IndexerError):
    """The request itself is malformed (unknown strategy, bad parameter)."""

    exit_code = 2


class UnknownStrategy(UsageError):
    pass


class InvalidParameter(UsageError):
    pass


class SkippedFile(Protocol):
    """A file left out, as a loader reports it (`loaders.skips.Skipped`)."""

    @property
    def doc_id(self) -> str: ...

    @property
    def reason(self) -> str: ...


class NothingToIndex(IndexerError):
    """No file could be indexed. `skipped` holds every file left out (items with
    `doc_id` and `reason`), which the message cannot list: a caller shows them."""

    def __init__(self, message: str, skipped: Iterable[SkippedFile] = ()) -> None:
        super().__init__(message)
        self.skipped: list[SkippedFile] = list(skipped)


class CollectionNotFound(IndexerError):
    pass


class EmbedderMismatch(IndexerError):
    pass


class StoreError(IndexerError):
    """The Chroma store cannot be opened or written (unreachable server, corrupt folder)."""


class DiskFull(StoreError):
    """The disk holding the index (or a Chroma server's) has no room left; nothing was lost."""


class ReadOnlyIndex(StoreError):
    """A command that writes into the index was given a read-only one."""


class EmbedderError(IndexerError):
    """The embedding backend failed (unreachable Ollama server, missing model)."""


class LockTimeout(IndexerError):
    pass


class QuestionSetError(IndexerError):
    """A question set is malformed or does not match the corpus."""


class StaleIndex(IndexerError):
    """The documents changed since the collection was built (`--require-fresh`)."""
