"""A Model Context Protocol server over stdio: coding agents search the index.

    indexer mcp --db .indexer          # what an MCP client (Claude Code, Cursor...) runs

Tools (read-only): `search` (hybrid, embedding or BM25; parent-child collections return
parent sections), `compare_strategies`, `list_collections`, `get_chunk` and
`get_document_span` (lines of a document rebuilt from the stored chunk texts, never read
from the file system). Results are sized for a model's context: every result carries its
token count; without `max_tokens` whole chunks are cut at the server's budget (the first
one shortened when it alone is over, `results.fit`); `search` given `max_tokens` answers
with answer-sized context instead: the sentences, rows and lines that answer, as exact
spans in at most that many tokens (`retrieval.context`).

The tools are plain methods of `Tools` (dicts in, dicts out), usable without MCP; `serve`
wraps them with the official `mcp` SDK. stdout is the protocol's transport: while
serving, file descriptor 1 points at stderr and `print` writes there too, so nothing but
protocol messages reaches the client; logs go to stderr.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from collections.abc import Callable
from inspect import signature
from typing import TYPE_CHECKING, Any, Literal

from ..errors import IndexerError, UsageError
from ..settings import Settings
from ..version import VERSION
from .arguments import check_arguments
from .stdio import protocol_stdout
from .tools import DEFAULT_K, DEFAULT_MAX_TOKENS, DEFAULT_RULE, Tools
from .wire import run_stdio

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

Mode = Literal["hybrid", "embedding", "bm25"] | None  # tool parameters' schema

INSTRUCTIONS = f"""Search the documents and code indexed by `indexer` (chunked, embedded and BM25-indexed).
Start with `search` (hybrid by default); each result gives doc_id, lines, header (where the chunk lives) and
the exact text. Use `get_document_span` to read more lines around a hit, `get_chunk` to fetch a chunk or
a parent section by id, `list_collections` to see the chunking strategies built. A call that names no
strategy uses {DEFAULT_RULE}; every answer says which strategy it used."""


# -- the MCP server ----------------------------------------------------------------------------
def sdk() -> tuple[type[MCPServer], type[Exception]]:
    """The SDK's high-level server class and its tool error: `MCPServer` (mcp 2) or
    `FastMCP` (mcp 1, imported by name: the types are checked against mcp 2)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        fastmcp = importlib.import_module("mcp.server.fastmcp")
        errors = importlib.import_module("mcp.server.fastmcp.exceptions")
        return fastmcp.FastMCP, errors.ToolError
    return MCPServer, ToolError


def checked_server(
    server_cls: type[MCPServer],
    tool_error: type[Exception],
    functions: dict[str, Callable[..., str]],
) -> type[MCPServer]:
    """The SDK's server class with every call's arguments checked first (`arguments`):
    unknown ones rejected with the accepted list, a wrong type in one line. `call_tool` is
    the method both SDK majors dispatch tool calls to."""

    # one SDK major's class, chosen at run time: mypy cannot subclass a variable
    base: Any = server_cls

    class Server(base):
        async def call_tool(
            self, name: str, arguments: dict[str, Any], *rest: Any, **kw: Any
        ) -> Any:
            if name in functions:
                try:
                    check_arguments(name, functions[name], arguments or {})
                except UsageError as exc:
                    raise tool_error(str(exc)) from None
            return await super().call_tool(name, arguments, *rest, **kw)

    return Server


def create_server(tools: Tools) -> MCPServer:
    """An MCP server exposing `tools` (not started). Each tool answers compact JSON text
    (non-ASCII kept: escapes would cost a model tokens); an error a user can fix (no
    such collection, chunk or lines, a bad or unknown argument) is a tool error with its
    one-line message."""
    from mcp.types import ToolAnnotations

    server_cls, tool_error = sdk()
    functions: dict[str, Callable[..., str]] = {}
    # the version a client sees in `serverInfo` (mcp 1's FastMCP takes none)
    named: dict[str, Any] = (
        {"version": VERSION} if "version" in signature(server_cls.__init__).parameters else {}
    )
    server = checked_server(server_cls, tool_error, functions)(
        "indexer", instructions=INSTRUCTIONS, log_level="WARNING", **named
    )
    # by the protocol's names: mcp 2 takes them as aliases, mcp 1 as its field names
    read_only = ToolAnnotations.model_validate({"readOnlyHint": True, "openWorldHint": False})

    def tool(fn: Callable[..., str]) -> Callable[..., str]:
        fn.__doc__ = (fn.__doc__ or "").replace("DEFAULT_RULE", DEFAULT_RULE)
        functions[fn.__name__] = fn
        server.tool(annotations=read_only, structured_output=False)(fn)
        return fn

    def answer(method: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> str:
        try:
            found = method(*args, **kwargs)
            return json.dumps(found, ensure_ascii=False, separators=(",", ":"))
        except IndexerError as exc:
            raise tool_error(tools.shown(str(exc))) from None

    @tool
    def search(
        query: str,
        strategy: str | None = None,
        mode: Mode = None,
        k: int = DEFAULT_K,
        max_tokens: int | None = None,
        paths: list[str] | str | None = None,
    ) -> str:
        """Search the indexed documents. Returns the top k chunks, best first: text (the exact
        source), doc_id, start_line/end_line, header (document title and section path, or
        file · class · method for code), score, n_tokens, and match when an exact-match tier
        ranked it (exact symbol, exact code, file name, exact term). mode: hybrid (default: BM25 and
        embeddings fused), embedding (meaning), bm25 (exact words, names, identifiers).
        strategy: a collection from list_collections; when omitted, DEFAULT_RULE
        (`chosen_by` says why when several are built). Without
        max_tokens: whole chunks up to 4000 tokens, those that do not fit counted in
        `omitted`. With max_tokens (at least 16): answer-sized context instead, the
        sentences, rows and lines of the top chunks that answer, packed into at most
        max_tokens tokens: `context` (the text to read, a [doc_id] header line above each
        section's spans) and `spans` (doc_id, start_line, end_line, header, text, score).
        paths: only documents whose doc_id matches one of these globs (git's rules: "*.md",
        "docs/api/", "src/**/*.py"; a list, or one glob as a string), searched inside each
        side so k hits come back when k exist there."""
        asked = {"mode": mode, "k": k, "max_tokens": max_tokens, "paths": paths}
        return answer(tools.search, query, strategy, **asked)

    @tool
    def compare_strategies(
        query: str,
        strategies: list[str] | None = None,
        mode: Mode = None,
        k: int = 3,
        max_tokens: int | None = None,
        paths: list[str] | str | None = None,
    ) -> str:
        """Run one query against several collections (default: all) to see which chunking
        strategy finds what; each gets its own max_tokens budget; paths as for search."""
        asked = {"mode": mode, "k": k, "max_tokens": max_tokens, "paths": paths}
        return answer(tools.compare_strategies, query, strategies, **asked)

    @tool
    def list_collections() -> str:
        """The collections built (one per chunking strategy and embedder): files, chunks,
        average tokens per chunk, build time, source folders (relative to the server's
        folder, else their names), default search; and default_strategy, the collection a
        call without strategy uses (DEFAULT_RULE)."""
        return answer(tools.list_collections)

    @tool
    def get_chunk(chunk_id: str, strategy: str | None = None) -> str:
        """One chunk (or parent section) by the id a search result gave; strategy: the
        collection it came from (when omitted, the same default as search)."""
        return answer(tools.get_chunk, chunk_id, strategy)

    @tool
    def get_document_span(
        doc_id: str,
        start_line: int,
        end_line: int,
        strategy: str | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Lines start_line..end_line (1-based, inclusive) of an indexed document, rebuilt
        from the stored chunks (the index, not the file system). Use it to read around a
        search hit. Text between chunks that the index does not hold (indentation, usually)
        comes back as spaces, its lines listed in inexact_lines; a span over max_tokens is cut
        (truncated: true, end_line says where). strategy: when omitted, as in search."""
        span = {"start_line": start_line, "end_line": end_line, "max_tokens": max_tokens}
        return answer(tools.get_document_span, doc_id, strategy=strategy, **span)

    # the same in both SDK majors; absent, schemas stay as made
    manager = getattr(server, "_tool_manager", None)
    if manager is not None:  # the schemas say what calls enforce: no arguments beyond these
        for name in functions:
            manager.get_tool(name).parameters["additionalProperties"] = False
    return server


def serve(
    settings: Settings | None = None,
    strategy: str | None = None,
    *,
    built_with: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> None:
    """Serve the tools over stdio until the client closes the connection (and every
    request it sent has its answer)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="indexer mcp: %(levelname)s %(message)s"
    )
    tools = Tools(settings, strategy, built_with=built_with, max_tokens=max_tokens)
    tools.store  # fail now (no index at --db) rather than on the first call
    server = create_server(tools)
    with protocol_stdout():
        run_stdio(server)


__all__ = ["Tools", "create_server", "serve"]
