"""The stdio transport, run so that a request read before stdin closes is still answered.

The SDK's stdio transport ends the session when stdin reaches its end and cancels the
requests still being handled: `indexer mcp < requests.jsonl` (or `printf ... | indexer
mcp`) answered `initialize` and dropped the `tools/call` behind it. Here stdin's end is
held back until every request read has its response written, then the session ends as
before. A client that keeps stdin open (every agent does) sees no difference.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import IO, Any, cast

import anyio

from .lines import check_line, read_line


class _Pending:
    """Requests read (a JSON-RPC message with a method and an id) against responses written
    (a message with an id and no method); `settled` is set whenever none are open. A
    request sent again under an id still open is counted twice."""

    def __init__(self) -> None:
        self.open: Counter[str] = Counter()
        self.settled = anyio.Event()
        self.settled.set()

    def read(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            return
        if "id" in message:
            self.open[_key(message["id"])] += 1
            if self.settled.is_set():
                self.settled = anyio.Event()
        elif message["method"] == "notifications/cancelled":  # a cancelled request gets no answer
            params = message.get("params")
            self._close(params.get("requestId") if isinstance(params, dict) else None)

    def written(self, text: str) -> None:
        message = _message(text)
        if message is not None and "method" not in message and "id" in message:
            self._close(message["id"])

    def _close(self, request_id: Any) -> None:
        self.open -= Counter({_key(request_id): 1})
        if not self.open:
            self.settled.set()


def _message(line: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _key(value: Any) -> str:
    return json.dumps(value)


class _Input:
    """The protocol's stdin, line by line; at its end, waits for `pending` to settle. Each
    line is checked first (`lines.check_line`): one the SDK would drop unanswered (not
    UTF-8, not JSON, too deep, too long, no JSON-RPC message) is answered here with
    JSON-RPC's error, and a lone surrogate is replaced by U+FFFD."""

    def __init__(self, stream: IO[bytes], pending: _Pending, output: _Output) -> None:
        self._stream = stream
        self._pending = pending
        self._output = output

    async def __aiter__(self) -> AsyncIterator[str]:
        while raw := await anyio.to_thread.run_sync(read_line, self._stream):
            if not raw.strip():
                continue
            checked = check_line(raw)
            if checked.reply is not None:
                await self._output.write(json.dumps(checked.reply) + "\n")
                await self._output.flush()
                continue
            self._pending.read(checked.message or {})
            yield checked.line
        while not self._pending.settled.is_set():
            await self._pending.settled.wait()


class _Output:
    """The protocol's stdout: what the transport writes, counted against the requests."""

    def __init__(self, stream: IO[bytes], pending: _Pending) -> None:
        self._stream = stream
        self._pending = pending
        self._lock = anyio.Lock()  # the transport and `_Input`'s error answers write here

    async def write(self, text: str) -> int:
        data = text.encode("utf-8", "replace")  # never a lone surrogate on the wire
        async with self._lock:
            await anyio.to_thread.run_sync(self._stream.write, data)
        self._pending.written(text)
        return len(text)

    async def flush(self) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._stream.flush)


@contextlib.contextmanager
def protocol_stdin() -> Iterator[IO[bytes]]:
    """The protocol's stdin pipe; file descriptor 0 reads nothing while serving, so no
    handler or child process takes the client's bytes."""
    wire = os.fdopen(os.dup(0), "rb")
    saved = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield wire
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        wire.close()


def run_stdio(server: Any) -> None:
    """Serve an MCP server (MCPServer in mcp 2, FastMCP in mcp 1) over stdin and the
    protocol stdout (`stdio.protocol_stdout` must be in force) until stdin ends and every
    request read has been answered."""
    from mcp.server.stdio import stdio_server

    lowlevel = getattr(server, "_lowlevel_server", None) or server._mcp_server

    async def main() -> None:
        pending = _Pending()
        with protocol_stdin() as wire_in:
            output = _Output(sys.stdout.buffer, pending)
            reader = cast(Any, _Input(wire_in, pending, output))
            writer = cast(Any, output)
            async with stdio_server(stdin=reader, stdout=writer) as (read, write):
                await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(main)
