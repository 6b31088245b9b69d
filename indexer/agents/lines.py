"""One line of an MCP client's input, checked before the SDK sees it: the text to hand
on, or the JSON-RPC error to answer it with. Every line read gets one or the other.

The SDK drops a line its own parser refuses without a word, and the request in it is
never answered: legal JSON that pydantic's parser does not read (a lone surrogate such as
`"\\ud800"`, what a client sends after cutting an emoji in half; arrays nested past its
depth limit) and JSON that is no JSON-RPC message (an id that is neither a string nor an
integer, params that are not an object). Here a lone surrogate is replaced by U+FFFD, as
the CLI and the web API do, and the line is answered as usual; any other line the SDK
would drop is answered with JSON-RPC's error (-32700 parse error, -32600 invalid
request) under the request's id when it can be read, else null.

    check_line(b'{"jsonrpc": "2.0", "id": 7, "method": 3}\\n').reply
    {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "Invalid Request: ..."}}
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import IO, Any

from ..retrieval.options import encodable

MAX_LINE = 1024 * 1024  # bytes: a message is a request, never a document
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
NOT_A_MESSAGE = (
    'Invalid Request: not a JSON-RPC 2.0 message ("jsonrpc": "2.0"; a request\'s id a '
    "string or an integer, its method a string, its params an object)"
)
DEEP_LINE = "Parse error: the line nests arrays or objects too deeply to read"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING = r'"(?:[^"\\]|\\.)*"'
# the id among the leading members of the top-level object, when each before it is a
# string, number, true, false or null: read from a line that does not parse
_HEAD_ID = re.compile(
    rf"\s*\{{(?:\s*{_STRING}\s*:\s*(?:{_STRING}|[-+.\w]+)\s*,)*?"
    rf'\s*"id"\s*:\s*(-?\d+|{_STRING})\s*[,}}]'
)
_HEAD = 1024  # characters: where the id of a line that does not parse is looked for


@dataclass(frozen=True)
class Checked:
    """A line read: `line` and `message` to hand on, or `reply` (a whole JSON-RPC error
    response) to answer it with instead."""

    line: str = ""
    message: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None


class Refused(Exception):
    """A line answered with JSON-RPC's error `code` and `message` (under `request_id`)."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    def reply(self) -> dict[str, Any]:
        error = {"code": self.code, "message": self.message}
        return {"jsonrpc": "2.0", "id": self.request_id, "error": error}


def read_line(stream: IO[bytes], limit: int = MAX_LINE) -> bytes:
    """The next line of `stream` (b"" at its end). A line over `limit` bytes is read to
    its end but only its first `limit` + 1 bytes are kept: `check_line` refuses it."""
    line = stream.readline(limit + 1)
    rest = line
    while len(rest) > limit and not rest.endswith(b"\n"):
        rest = stream.readline(limit + 1)
    return line


def check_line(raw: bytes, limit: int = MAX_LINE) -> Checked:
    """The line to hand the SDK (lone surrogates replaced), or the error to answer."""
    try:
        return accepted(raw, limit)
    except Refused as exc:
        return Checked(reply=exc.reply())


def accepted(raw: bytes, limit: int) -> Checked:
    if len(raw.rstrip(b"\r\n")) > limit:
        raise Refused(
            INVALID_REQUEST,
            f"Invalid Request: the line is over {limit:,} bytes, the most a message may be",
            head_id(raw),
        )
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(
            PARSE_ERROR,
            f"Parse error: the line is not UTF-8 ({exc.reason} at byte {exc.start})",
            head_id(raw),
        ) from None
    message = loaded(line)
    if _SURROGATE_ESCAPE.search(line):  # written again, each lone surrogate replaced
        line = encodable(json.dumps(message, ensure_ascii=False))
        message = json.loads(line)
    problem = sdk_problem(line, message)
    if problem is not None:
        raise Refused(*problem, request_id=message_id(message))
    return Checked(line=line, message=message)


def loaded(line: str) -> dict[str, Any]:
    """The line's one JSON object, as Python reads it."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        reason = f"the line is not JSON ({exc})"
        raise Refused(PARSE_ERROR, f"Parse error: {reason}", head_id(line)) from None
    except RecursionError:
        raise Refused(PARSE_ERROR, DEEP_LINE, head_id(line)) from None
    if not isinstance(message, dict):
        raise Refused(INVALID_REQUEST, "Invalid Request: a message is one JSON object per line")
    return message


def sdk_problem(line: str, message: dict[str, Any]) -> tuple[int, str] | None:
    """Why the SDK would leave `line` unanswered (the error code and message to answer
    with instead), or None: its reader refuses the line, or reads a request (a method and
    an id) as something else, a notification with an id of `true` say."""
    try:
        read = sdk_reader()(line)
    except Exception as exc:  # whatever the SDK's reader raises, the SDK drops the line
        return sdk_refusal(exc)
    if "method" in message and "id" in message and not same_id(read, message["id"]):
        return INVALID_REQUEST, NOT_A_MESSAGE
    return None


def sdk_refusal(exc: Exception) -> tuple[int, str]:
    """The error code and message for what the SDK's reader raised (pydantic's error:
    JSON it does not read, or no JSON-RPC message)."""
    errors = getattr(exc, "errors", None)
    first = errors()[0] if callable(errors) and errors() else {}
    if first.get("type") == "json_invalid":
        return PARSE_ERROR, parse_error(str(first.get("msg")))
    return INVALID_REQUEST, NOT_A_MESSAGE


def same_id(read: Any, request_id: Any) -> bool:
    """Whether the SDK read a request under `request_id` (mcp 1 wraps it in `.root`)."""
    read = getattr(read, "root", read)
    has = hasattr(read, "id") and hasattr(read, "method")
    return has and json.dumps(read.id) == json.dumps(request_id)


def parse_error(reason: str) -> str:
    """The SDK reader's reason as a parse error's message."""
    if "recursion limit" in reason:
        return f"{DEEP_LINE} ({reason.removeprefix('Invalid JSON: ')})"
    return f"Parse error: the line is not JSON the server reads ({reason})"


@cache
def sdk_reader() -> Callable[[str], Any]:
    """How the SDK's stdio transport reads a line: mcp 2's message adapter, else mcp 1's
    `JSONRPCMessage` (imported by name: the types are checked against mcp 2)."""
    types = importlib.import_module("mcp.types")
    adapter = getattr(types, "jsonrpc_message_adapter", None)
    if adapter is not None:
        return lambda line: adapter.validate_json(line, by_name=False)
    return types.JSONRPCMessage.model_validate_json


def message_id(message: dict[str, Any]) -> str | int | None:
    """The message's id when JSON-RPC allows it (a string or an integer)."""
    value = message.get("id")
    ok = isinstance(value, str | int) and not isinstance(value, bool)
    return value if ok else None


def head_id(line: str | bytes) -> str | int | None:
    """The id of a line that does not parse, when its leading members show it."""
    if isinstance(line, bytes):
        line = line[:_HEAD].decode("utf-8", "replace")
    found = _HEAD_ID.match(line[:_HEAD])
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:  # 0123, or past Python's digit limit
        return None
    return encodable(value) if isinstance(value, str) else value
