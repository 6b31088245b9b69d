"""`indexer mcp` answers every line it reads and exits at the end of its input (issue 51,
G2 and G3): a lone surrogate is replaced by U+FFFD and the call answered as usual; a line
the SDK would drop without a word (not UTF-8, not JSON, nested too deep, too long, no
JSON-RPC message) gets JSON-RPC's error under its id when the line shows it."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from indexer.agents.lines import MAX_LINE, check_line, read_line
from indexer.agents.server import Tools
from indexer.errors import CollectionNotFound
from indexer.settings import Settings
from tests.conftest import ROOT
from tests.test_mcp import child_env, rebuilt_db  # noqa: F401 (a fixture)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "sh", "version": "0"}}}


def call(request_id, name: str, arguments) -> bytes:
    """A tools/call line as a client writes it (json.dumps escapes a lone surrogate)."""
    params = {"name": name, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def nested(request_id, depth: int) -> bytes:
    """A tools/call whose arguments are `depth` nested arrays (unclosed past 1,000)."""
    head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":' % request_id
    closing = b"]" * depth + b"}}" if depth < 1000 else b"}}"
    return head + b"[" * depth + closing


def checked(raw: bytes):
    got = check_line(raw + b"\n")
    return got.reply["id"], got.reply["error"]["code"], got.reply["error"]["message"]


# -- one line checked -----------------------------------------------------------------------------
def test_a_lone_surrogate_is_replaced_and_a_pair_kept():
    got = check_line(call(7, "get_chunk", {"chunk_id": "\ud83d\ude00 \ud800"}) + b"\n")
    assert got.reply is None
    assert got.message["params"]["arguments"]["chunk_id"] == "\U0001F600 \ufffd"
    assert json.loads(got.line) == got.message  # the line handed on says the same
    assert got.line.encode("utf-8")  # and can be written


@pytest.mark.parametrize("raw, request_id, code, says", [
    (nested(3, 3000), 3, -32700, "too deeply"),  # deeper than Python's parser goes
    (nested(4, 500), 4, -32700, "too deeply"),  # deeper than the SDK's parser goes
    (b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":"\xff"}}', 5, -32700, "not UTF-8"),
    (b'{"jsonrpc":"2.0","id":"six","method":"tools/call","params":{"na', "six", -32700, "not JSON"),
    (b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"x"}', 8, -32600, "not a JSON-RPC 2.0 message"),
    (b'{"jsonrpc":"1.0","id":9,"method":"ping"}', 9, -32600, "not a JSON-RPC 2.0 message"),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, -32600, "id a string or an integer"),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, -32600, "id a string or an integer"),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, -32600, "id a string or an integer"),
    (b'{"params":{"id":10},"jsonrpc":"2.0","id":11,"meth', None, -32700, "not JSON"),  # id not read from params
    (b"[1, 2]", None, -32600, "one JSON object"),
])
def test_a_line_the_sdk_would_drop_is_answered_under_its_id(raw, request_id, code, says):
    got_id, got_code, message = checked(raw)
    assert (got_id, got_code) == (request_id, code) and says in message, message
    assert "\n" not in message


def test_a_line_over_the_limit_is_read_to_its_end_and_refused():
    big = call(12, "search", {"query": "a" * MAX_LINE})
    stream = io.BytesIO(big + b"\n" + call(13, "search", {"query": "kargo"}) + b"\n")
    first = read_line(stream)
    assert len(first) == MAX_LINE + 1  # only what shows the line is too long is kept
    assert checked(first)[:2] == (12, -32600) and "over 1,048,576 bytes" in checked(first)[2]
    assert check_line(read_line(stream)).message["id"] == 13  # the next line, whole
    assert read_line(stream) == b""


def test_the_tools_in_process_take_a_lone_surrogate_in_any_text_argument(rebuilt_db):  # noqa: F811
    tools = Tools(Settings.load(db=rebuilt_db), strategy="headers")
    with pytest.raises(CollectionNotFound, match="no chunk '\ufffd' in headers"):
        tools.get_chunk("\ud800")
    with pytest.raises(CollectionNotFound, match="no chunks of '\ufffd' in headers"):
        tools.get_document_span("\ud800", 1, 2)
    compared = tools.compare_strategies("\ud800 kargo", ["headers"], k=2)
    assert compared["query"] == "\ufffd kargo" and len(compared["strategies"][0]["results"]) == 2


# -- a real server ------------------------------------------------------------------------------
def test_every_line_piped_in_is_answered_and_the_server_exits(rebuilt_db):  # noqa: F811
    """Good and bad lines mixed, stdin closed after the last: each id gets its answer, the
    bad lines JSON-RPC's error, and the server exits by itself, no traceback."""
    good = [
        call(2, "search", {"query": "\ud800 kargo", "strategy": "headers", "k": 2}),
        call(3, "get_document_span", {"doc_id": "\ud800", "start_line": 1, "end_line": 2, "strategy": "headers"}),
        call(4, "get_chunk", {"chunk_id": "\ud83d\ude00\ud800", "strategy": "headers"}),
        call(5, "compare_strategies", {"query": "\ud800 kargo", "strategies": ["headers"], "k": 1}),
        call(6, "search", {"query": "kargo", "\ud800": 1}),
        call(7, "search", {"query": "kargo", "strategy": "\udc00"}),
    ]
    bad = [
        nested(20, 3000), nested(21, 500),
        call(22, "search", {"query": "kargo"}).replace(b"kargo", b"\xff\xfe kargo"),
        call(23, "search", {"query": "kargo"})[:-9],
        call(24, "search", {"query": "a" * (2 * MAX_LINE)}),
        b'{"jsonrpc":"2.0","id":25,"method":"tools/call","params":"search"}',
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    ]
    last = [call(30, "search", {"query": "iade süresi", "strategy": "headers", "k": 1}),
            b'{"jsonrpc":"2.0","id":31,"method":"ping"}']
    lines = [json.dumps(INIT).encode(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
             *good, *bad, *last]
    done = subprocess.run([sys.executable, "-m", "indexer", "mcp", "--db", str(rebuilt_db)],
                          input=b"\n".join(lines) + b"\n", capture_output=True, timeout=180,
                          env=child_env(), cwd=str(ROOT))
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    answers = {m["id"]: m for m in replies if m.get("id") is not None}
    assert set(answers) == {1, *range(2, 8), *range(20, 26), 30, 31}
    assert [m["error"]["code"] for m in replies if m.get("id") is None] == [-32600]  # id true

    def text(request_id) -> str:
        return answers[request_id]["result"]["content"][0]["text"]

    assert len(json.loads(text(2))["results"]) == 2  # answered as if U+FFFD had been sent
    assert "no chunks of '\ufffd'" in text(3)
    assert "'\U0001F600\ufffd'" in text(4)  # the pair kept, the lone half replaced
    assert json.loads(text(5))["query"] == "\ufffd kargo"
    assert "unknown argument '\ufffd'" in text(6)
    assert "unknown strategy '\ufffd'" in text(7)
    codes = {i: answers[i]["error"]["code"] for i in range(20, 26)}
    assert codes == {20: -32700, 21: -32700, 22: -32700, 23: -32700, 24: -32600, 25: -32600}
    assert json.loads(text(30))["results"][0]["doc_id"] == "iade-ve-geri-odeme.md"
    assert answers[31]["result"] == {}
