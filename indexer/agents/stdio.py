"""stdout kept for the MCP protocol while serving: file descriptor 1 points at stderr and
`print` writes there too, so nothing but protocol messages reaches the client."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any


class _Stdout:
    """sys.stdout while serving: `.buffer` is the protocol pipe (what the SDK transport
    writes to); text printed by anything else goes to stderr."""

    def __init__(self, wire: IO[bytes]) -> None:
        self.buffer = wire

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return sys.stderr.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stderr, name)


@contextlib.contextmanager
def protocol_stdout() -> Iterator[None]:
    """Keep stdout for the protocol: file descriptor 1 (what C extensions and child
    processes write to) points at stderr, and sys.stdout writes there too; only the
    transport holds the real pipe."""
    sys.stdout.flush()
    wire_fd = os.dup(1)
    saved_fd, saved = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = _Stdout(os.fdopen(wire_fd, "wb"))
    try:
        yield
    finally:
        sys.stdout = saved
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
