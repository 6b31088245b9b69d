"""The MCP server's tools as plain methods over one index (dicts in, dicts out), usable
without MCP: `search` (hybrid, embedding or BM25; with `max_tokens`, answer-sized context),
`compare_strategies`, `list_collections`, `get_chunk` and `get_document_span`. `server`
wraps them with the official `mcp` SDK."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CollectionNotFound, IndexerError, UsageError
from ..paths import hide_folder, hide_folders, shown_path
from ..retrieval.collections import RULE
from ..retrieval.options import encodable
from ..settings import Settings, settings_for
from .results import chunk_dict, cut_lines, document_lines, fit, hit_dict, locations

if TYPE_CHECKING:
    from ..retrieval import Chosen, Index, SearchOptions
    from ..store import Entry, Store

DEFAULT_K = 5
DEFAULT_MAX_TOKENS = 4000
MAX_K = 50
# the CLI's and the web API's rule too (`retrieval.collections`)
DEFAULT_RULE = (
    f"the server's --strategy if it was started with one, else {RULE} "
    "(list_collections names it as default_strategy)"
)


class Tools:
    """The server's tools over one index (read-only). Index handles are opened once per
    collection and follow rebuilds (an `indexer watch` running beside the server)."""

    def __init__(
        self,
        settings: Settings | None = None,
        strategy: str | None = None,
        *,
        built_with: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.settings = settings_for(settings)
        self.strategy = strategy
        self.built_with = built_with
        self.max_tokens = max_tokens
        # source folders are shown relative to it (never as absolute server paths)
        self.base = Path.cwd()
        self._store: Store | None = None
        self._indexes: dict[str, Index] = {}

    @property
    def store(self) -> Store:
        if self._store is None:
            from ..store import Store

            self._store = Store(self.settings)
        return self._store

    def shown(self, message: str) -> str:
        """An error message as an agent may see it: the index folder relative to the
        server's folder (else its name), never its absolute path on the server."""
        db = self.settings.db
        message = hide_folder(message, db, shown_path(db, self.base))
        try:
            sources = self.store.catalogue.sources()
        except IndexerError:  # no index to open: the message is about that
            sources = set()
        return hide_folders(message, sources, self.base)

    def budget(self, max_tokens: int | None) -> int:
        if max_tokens is not None and max_tokens < 1:
            raise UsageError(f"max_tokens must be at least 1, not {max_tokens}")
        return max_tokens or self.max_tokens

    # -- collections ------------------------------------------------------------------------
    def default_strategy(self) -> str:
        """The collection a call that names none searches: the server's --strategy, else
        the one `retrieval.choose` picks (the only one built, else the one the last
        evaluation ranked best, else `auto`, else by a fixed order of kinds). With
        --embedder, only that embedder's
        collections count. Named as list_collections names it (`strategy@embedder` when
        the strategy is built with several embedders), as the web API does."""
        from ..retrieval import collection_label

        return collection_label(self._entry(None), self.store.catalogue.entries())

    def _entry(self, strategy: str | None) -> Entry:
        return self._chosen(strategy).entry

    def _chosen(self, strategy: str | None) -> Chosen:
        from ..retrieval import chosen

        return chosen(self.store, strategy or self.strategy, self.built_with)

    def index(self, strategy: str | None = None) -> Index:
        """The kept handle of the collection named (else the default), opened on first use."""
        key = strategy or self.strategy
        key = encodable(key) if key else None
        if key is not None and key in self._indexes:
            return self._indexes[key]
        # none named: chosen on every call (what is built may change)
        return self._handle(key, self._entry(key))

    def _handle(self, key: str | None, entry: Entry) -> Index:
        """The kept handle of `entry` (under `key`, else its own key)."""
        from ..retrieval import Index

        key = key or entry.key
        if key not in self._indexes:
            self._indexes[key] = Index(self.store, entry)
        return self._indexes[key]

    def list_collections(self) -> dict[str, Any]:
        from ..retrieval import describe

        entries = self.store.catalogue.entries()
        out = [
            describe(self.store, e, entries, lambda p: shown_path(p, self.base)) for e in entries
        ]
        try:
            default = self.default_strategy()
        except IndexerError:
            default = None
        return {"collections": out, "default_strategy": default, "default_rule": DEFAULT_RULE}

    # -- searching --------------------------------------------------------------------------
    def search(
        self,
        query: str,
        strategy: str | None = None,
        *,
        mode: str | None = None,
        k: int = DEFAULT_K,
        max_tokens: int | None = None,
        paths: list[str] | str | None = None,
    ) -> dict[str, Any]:
        from ..retrieval import SearchOptions

        if not 1 <= k <= MAX_K:
            raise UsageError(f"k must be between 1 and {MAX_K}, not {k}")
        # none named over several strategies: which one, and why (`chosen_by`)
        choice = None if strategy or self.strategy else self._chosen(None)
        index = self._handle(None, choice.entry) if choice else self.index(strategy)
        wanted = SearchOptions(mode=mode, k=k, paths=_globs(paths))
        if max_tokens is not None:
            out = self.context(index, query, wanted, max_tokens)
        else:
            found = index.lookup(query, wanted)
            hits, options = found.hits, found.options
            results, omitted, tokens = fit([hit_dict(h) for h in hits], self.budget(max_tokens))
            out = {
                "strategy": index.entry.strategy,
                "embedder": index.entry.embedder,
                "mode": options.mode,
                "results": results,
                "omitted": omitted,
                "tokens": tokens,
            }
        if choice is not None and choice.why:
            out["chosen_by"] = choice.why
        return out

    def context(
        self, index: Index, query: str, wanted: SearchOptions, budget: int
    ) -> dict[str, Any]:
        """Answer-sized context in `budget` tokens: `context` is the text to read (a label
        line per document section, its spans, `…` between spans that are not adjacent)."""
        from ..retrieval.context.answer import MIN_BUDGET

        if budget < MIN_BUDGET:
            raise UsageError(
                f"max_tokens must be at least {MIN_BUDGET} for a packed context, not {budget}"
            )
        packed = index.context(query, budget, wanted)
        spans = [
            {
                "doc_id": s.doc_id,
                "start_line": s.start_line,
                "end_line": s.end_line,
                "header": s.label,
                "score": round(s.score, 4),
                "n_tokens": s.n_tokens,
                "text": s.text,
            }
            for s in packed.spans
        ]
        out = {
            "strategy": index.entry.strategy,
            "embedder": index.entry.embedder,
            "mode": index.options(wanted).mode,
            "context": packed.text(),
            "spans": spans,
            "tokens": packed.tokens,
            "budget": budget,
            "label_tokens": packed.label_tokens,
            "whole_chunks_tokens": packed.whole_tokens,
        }
        if not spans:  # say why, so an agent knows to raise max_tokens
            out["note"] = packed.empty_note("max_tokens")
        return out

    def compare_strategies(
        self,
        query: str,
        strategies: list[str] | None = None,
        *,
        mode: str | None = None,
        k: int = 3,
        max_tokens: int | None = None,
        paths: list[str] | str | None = None,
    ) -> dict[str, Any]:
        names = strategies or sorted({e.strategy for e in self.store.catalogue.entries()})
        return {
            "query": encodable(query),
            "strategies": [
                self.search(query, name, mode=mode, k=k, max_tokens=max_tokens, paths=paths)
                for name in names
            ],
        }

    # -- reading ----------------------------------------------------------------------------
    def get_chunk(self, chunk_id: str, strategy: str | None = None) -> dict[str, Any]:
        chunk_id = encodable(chunk_id)  # a lone surrogate: no id, and no store reads it
        index = self.index(strategy)
        # not a superseded record
        found = {i: c for i, c in index.fetch([chunk_id]).items() if i in index.live}
        found = found or index.fetch_parents([chunk_id])
        if chunk_id not in found:
            raise CollectionNotFound(
                f"no chunk {chunk_id!r} in {index.entry.strategy}; ids come from search results"
            )
        return {"strategy": index.entry.strategy, **chunk_dict(found[chunk_id])}

    def get_document_span(
        self,
        doc_id: str,
        start_line: int,
        end_line: int,
        strategy: str | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        if start_line < 1 or end_line < start_line:
            raise UsageError(f"lines {start_line}-{end_line}: need 1 <= start_line <= end_line")
        index = self.index(strategy)
        doc_id = encodable(doc_id)  # a lone surrogate: no document, and no store reads it
        lines, inexact = document_lines(index.chunks(doc_id))
        last = len(lines)
        if start_line > last:
            raise UsageError(
                f"{doc_id} has {last} lines in {index.entry.strategy}; start_line {start_line} is past them"
            )
        wanted = lines[start_line - 1 : min(end_line, last)]
        wanted, cut = cut_lines(wanted, self.budget(max_tokens))
        shown_end = start_line + len(wanted) - 1
        places = locations(index.chunks(doc_id), start_line, shown_end)
        return {
            "strategy": index.entry.strategy,
            "doc_id": doc_id,
            "start_line": start_line,
            "end_line": shown_end,
            "lines_in_document": last,
            "text": "\n".join(wanted),
            "truncated": cut,
            "inexact_lines": [[a, b] for a, b in inexact if a <= shown_end and b >= start_line],
            **({"locations": places} if places else {}),
        }


def _globs(paths: list[str] | str | None) -> tuple[str, ...] | None:
    """An agent's path globs, lone surrogates replaced (a usage error names a bad one)."""
    from ..retrieval.options import checked_paths

    if not paths:
        return None
    given = [paths] if isinstance(paths, str) else paths
    return checked_paths([encodable(p) if isinstance(p, str) else p for p in given])
