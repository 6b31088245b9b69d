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

import contextlib
import json
import logging
import os
import sys
from typing import Any, Literal

from pathlib import Path

from ..errors import CollectionNotFound, IndexerError, UsageError
from ..paths import hide_folder, shown_path
from ..retrieval.collections import RULE
from .results import chunk_dict, cut_lines, document_lines, fit, hit_dict
from ..settings import Settings, settings_for
from .arguments import check_arguments

DEFAULT_K = 5
DEFAULT_MAX_TOKENS = 4000
MAX_K = 50
Mode = Literal["hybrid", "embedding", "bm25"] | None  # tool parameters' schema
# the CLI's and the web API's rule too (`retrieval.collections`)
DEFAULT_RULE = (f"the server's --strategy if it was started with one, else {RULE} "
                "(list_collections names it as default_strategy)")

INSTRUCTIONS = f"""Search the documents and code indexed by `indexer` (chunked, embedded and BM25-indexed).
Start with `search` (hybrid by default); each result gives doc_id, lines, header (where the chunk lives) and
the exact text. Use `get_document_span` to read more lines around a hit, `get_chunk` to fetch a chunk or
a parent section by id, `list_collections` to see the chunking strategies built. A call that names no
strategy uses {DEFAULT_RULE}; every answer says which strategy it used."""


class Tools:
    """The server's tools over one index (read-only). Index handles are opened once per
    collection and follow rebuilds (an `indexer watch` running beside the server)."""

    def __init__(self, settings: Settings | None = None, strategy: str | None = None, *,
                 built_with: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.settings = settings_for(settings)
        self.strategy = strategy
        self.built_with = built_with
        self.max_tokens = max_tokens
        self.base = Path.cwd()  # source folders are shown relative to it (never as absolute server paths)
        self._store = None
        self._indexes: dict[str, Any] = {}

    @property
    def store(self):
        if self._store is None:
            from ..store import Store

            self._store = Store(self.settings)
        return self._store

    def shown(self, message: str) -> str:
        """An error message as an agent may see it: the index folder relative to the
        server's folder (else its name), never its absolute path on the server."""
        db = self.settings.db
        return hide_folder(message, db, shown_path(db, self.base))

    def budget(self, max_tokens: int | None) -> int:
        if max_tokens is not None and max_tokens < 1:
            raise UsageError(f"max_tokens must be at least 1, not {max_tokens}")
        return max_tokens or self.max_tokens

    # -- collections ------------------------------------------------------------------------
    def default_strategy(self) -> str:
        """The collection a call that names none searches: the server's --strategy, else
        the one `retrieval.choose` picks (`auto` if built, else the only one built, else
        an error naming what is built). With --embedder, only that embedder's
        collections count. Named as list_collections names it (`strategy@embedder` when
        the strategy is built with several embedders), as the web API does."""
        from ..retrieval import collection_label

        return collection_label(self._entry(None), self.store.catalogue.entries())

    def _entry(self, strategy: str | None):
        from ..retrieval import choose

        return choose(self.store, strategy or self.strategy, self.built_with)

    def index(self, strategy: str | None = None):
        """The kept handle of the collection named (else the default), opened on first use."""
        from ..retrieval import Index

        key = strategy or self.strategy
        if key is None or key not in self._indexes:
            entry = self._entry(key)  # none named: chosen on every call (what is built may change)
            key = key or entry.key
            if key not in self._indexes:
                self._indexes[key] = Index(self.store, entry)
        return self._indexes[key]

    def list_collections(self) -> dict:
        from ..retrieval import describe

        entries = self.store.catalogue.entries()
        out = [describe(self.store, e, entries, lambda p: shown_path(p, self.base)) for e in entries]
        try:
            default = self.default_strategy()
        except IndexerError:
            default = None
        return {"collections": out, "default_strategy": default, "default_rule": DEFAULT_RULE}

    # -- searching --------------------------------------------------------------------------
    def search(self, query: str, strategy: str | None = None, mode: str | None = None, k: int = DEFAULT_K,
               max_tokens: int | None = None) -> dict:
        from ..retrieval import SearchOptions

        if not 1 <= k <= MAX_K:
            raise UsageError(f"k must be between 1 and {MAX_K}, not {k}")
        index = self.index(strategy)
        if max_tokens is not None:
            return self.context(index, query, mode, k, max_tokens)
        hits, options = index.lookup(query, SearchOptions(mode=mode, k=k))
        results, omitted, tokens = fit([hit_dict(h) for h in hits], self.budget(max_tokens))
        return {"strategy": index.entry.strategy, "embedder": index.entry.embedder, "mode": options.mode,
                "results": results, "omitted": omitted, "tokens": tokens}

    def context(self, index, query: str, mode: str | None, k: int, budget: int) -> dict:
        """Answer-sized context in `budget` tokens: `context` is the text to read (a label
        line per document section, its spans, `…` between spans that are not adjacent)."""
        from ..retrieval import SearchOptions
        from ..retrieval.context import MIN_BUDGET

        if budget < MIN_BUDGET:
            raise UsageError(f"max_tokens must be at least {MIN_BUDGET} for a packed context, not {budget}")
        packed = index.context(query, budget, SearchOptions(mode=mode, k=k))
        spans = [{"doc_id": s.doc_id, "start_line": s.start_line, "end_line": s.end_line, "header": s.label,
                  "score": round(s.score, 4), "n_tokens": s.n_tokens, "text": s.text} for s in packed.spans]
        return {"strategy": index.entry.strategy, "embedder": index.entry.embedder,
                "mode": index.options(SearchOptions(mode=mode)).mode, "context": packed.text(), "spans": spans,
                "tokens": packed.tokens, "budget": budget, "label_tokens": packed.label_tokens,
                "whole_chunks_tokens": packed.whole_tokens}

    def compare_strategies(self, query: str, strategies: list[str] | None = None, mode: str | None = None,
                           k: int = 3, max_tokens: int | None = None) -> dict:
        names = strategies or sorted({e.strategy for e in self.store.catalogue.entries()})
        return {"query": query, "strategies": [self.search(query, name, mode, k, max_tokens) for name in names]}

    # -- reading ----------------------------------------------------------------------------
    def get_chunk(self, chunk_id: str, strategy: str | None = None) -> dict:
        index = self.index(strategy)
        found = {i: c for i, c in index.fetch([chunk_id]).items() if i in index.live}  # not a superseded record
        found = found or index.fetch_parents([chunk_id])
        if chunk_id not in found:
            raise CollectionNotFound(f"no chunk {chunk_id!r} in {index.entry.strategy}; ids come from search results")
        return {"strategy": index.entry.strategy, **chunk_dict(found[chunk_id])}

    def get_document_span(self, doc_id: str, start_line: int, end_line: int, strategy: str | None = None,
                          max_tokens: int | None = None) -> dict:
        if start_line < 1 or end_line < start_line:
            raise UsageError(f"lines {start_line}-{end_line}: need 1 <= start_line <= end_line")
        index = self.index(strategy)
        lines, inexact = document_lines(index.chunks(doc_id))
        last = len(lines)
        if start_line > last:
            raise UsageError(f"{doc_id} has {last} lines in {index.entry.strategy}; start_line {start_line} is past them")
        wanted = lines[start_line - 1 : min(end_line, last)]
        wanted, cut = cut_lines(wanted, self.budget(max_tokens))
        shown_end = start_line + len(wanted) - 1
        return {
            "strategy": index.entry.strategy, "doc_id": doc_id, "start_line": start_line, "end_line": shown_end,
            "lines_in_document": last, "text": "\n".join(wanted), "truncated": cut,
            "inexact_lines": [[a, b] for a, b in inexact if a <= shown_end and b >= start_line],
        }


# -- the MCP server ----------------------------------------------------------------------------
def sdk():
    """The SDK's high-level server class and its tool error: `MCPServer` (mcp 2) or
    `FastMCP` (mcp 1)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        from mcp.server.fastmcp import FastMCP as MCPServer
        from mcp.server.fastmcp.exceptions import ToolError
    return MCPServer, ToolError


def checked_server(server_cls, tool_error, functions: dict):
    """The SDK's server class with every call's arguments checked first (`arguments`):
    unknown ones rejected with the accepted list, a wrong type in one line. `call_tool` is
    the method both SDK majors dispatch tool calls to."""

    class Server(server_cls):
        async def call_tool(self, name, arguments, *rest, **kw):
            if name in functions:
                try:
                    check_arguments(name, functions[name], arguments or {})
                except UsageError as exc:
                    raise tool_error(str(exc)) from None
            return await super().call_tool(name, arguments, *rest, **kw)

    return Server


def create_server(tools: Tools):
    """An MCP server exposing `tools` (not started). Each tool answers compact JSON text
    (non-ASCII kept: escapes would cost a model tokens); an error a user can fix (no
    such collection, chunk or lines, a bad or unknown argument) is a tool error with its
    one-line message."""
    from mcp.types import ToolAnnotations

    server_cls, tool_error = sdk()
    functions: dict = {}
    server = checked_server(server_cls, tool_error, functions)("indexer", instructions=INSTRUCTIONS,
                                                               log_level="WARNING")
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

    def tool(fn):
        fn.__doc__ = fn.__doc__.replace("DEFAULT_RULE", DEFAULT_RULE)
        functions[fn.__name__] = fn
        server.tool(annotations=read_only, structured_output=False)(fn)
        return fn

    def answer(method, *args) -> str:
        try:
            return json.dumps(method(*args), ensure_ascii=False, separators=(",", ":"))
        except IndexerError as exc:
            raise tool_error(tools.shown(str(exc))) from None

    @tool
    def search(query: str, strategy: str | None = None, mode: Mode = None, k: int = DEFAULT_K,
               max_tokens: int | None = None) -> str:
        """Search the indexed documents. Returns the top k chunks, best first: text (the exact
        source), doc_id, start_line/end_line, header (document title and section path, or
        file · class · method for code), score, n_tokens, and match when an exact-match tier
        ranked it (exact symbol, exact code, file name, exact term). mode: hybrid (default: BM25 and
        embeddings fused), embedding (meaning), bm25 (exact words, names, identifiers).
        strategy: a collection from list_collections; when omitted, DEFAULT_RULE. Without
        max_tokens: whole chunks up to 4000 tokens, those that do not fit counted in
        `omitted`. With max_tokens (at least 16): answer-sized context instead, the
        sentences, rows and lines of the top chunks that answer, packed into at most
        max_tokens tokens: `context` (the text to read, a [doc_id] header line above each
        section's spans) and `spans` (doc_id, start_line, end_line, header, text, score)."""
        return answer(tools.search, query, strategy, mode, k, max_tokens)

    @tool
    def compare_strategies(query: str, strategies: list[str] | None = None, mode: Mode = None, k: int = 3,
                           max_tokens: int | None = None) -> str:
        """Run one query against several collections (default: all) to see which chunking
        strategy finds what; each gets its own max_tokens budget."""
        return answer(tools.compare_strategies, query, strategies, mode, k, max_tokens)

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
    def get_document_span(doc_id: str, start_line: int, end_line: int, strategy: str | None = None,
                          max_tokens: int | None = None) -> str:
        """Lines start_line..end_line (1-based, inclusive) of an indexed document, rebuilt
        from the stored chunks (the index, not the file system). Use it to read around a
        search hit. Text between chunks that the index does not hold (indentation, usually)
        comes back as spaces, its lines listed in inexact_lines; a span over max_tokens is cut
        (truncated: true, end_line says where). strategy: when omitted, as in search."""
        return answer(tools.get_document_span, doc_id, start_line, end_line, strategy, max_tokens)

    manager = getattr(server, "_tool_manager", None)  # the same in both SDK majors; absent, schemas stay as made
    for name in functions if manager else ():  # the schemas say what calls enforce: no arguments beyond these
        manager.get_tool(name).parameters["additionalProperties"] = False
    return server


class _Stdout:
    """sys.stdout while serving: `.buffer` is the protocol pipe (what the SDK transport
    writes to); text printed by anything else goes to stderr."""

    def __init__(self, wire) -> None:
        self.buffer = wire

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return sys.stderr.fileno()

    def __getattr__(self, name: str):
        return getattr(sys.stderr, name)


@contextlib.contextmanager
def protocol_stdout():
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


def serve(settings: Settings | None = None, strategy: str | None = None, *, built_with: str | None = None,
          max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
    """Serve the tools over stdio until the client closes the connection."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="indexer mcp: %(levelname)s %(message)s")
    tools = Tools(settings, strategy, built_with=built_with, max_tokens=max_tokens)
    tools.store  # fail now (no index at --db) rather than on the first call
    server = create_server(tools)
    with protocol_stdout():
        server.run("stdio")


__all__ = ["Tools", "create_server", "serve"]
