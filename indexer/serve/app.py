"""The web app: routes of the JSON API and the static pages of the three views
(documents, query, evaluation), on Starlette.

    app = create_app(Settings.load(db="idx"), token=None, cors=(), questions=["q.jsonl"])

Read-only: nothing here builds, drops or writes. Requests name collections, documents
(doc_ids) and question sets (ids); the only files read are the app's own static assets
and the question sets the server was started with or found next to the corpora.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import (
    CollectionNotFound,
    EmbedderMismatch,
    IndexerError,
    QuestionSetError,
    StaleIndex,
    UsageError,
)
from ..evaluation import Question
from ..paths import hide_folder, hide_folders, shown_path
from ..retrieval import MODES, RULE, SearchOptions, chosen
from ..settings import Settings
from ..types import Chunk
from ..version import VERSION as __version__
from .guard import MAX_BODY, Guard, TooLarge
from .library import Library
from .openapi import schema
from .params import (
    DEFAULT_MODE,
    ApiError,
    CompareRequest,
    bad,
    compare_request,
    generate_request,
    parse_json,
    query_list,
    search_request,
)
from .questions import QuestionSets, judge

STATIC = Path(str(files("indexer.serve") / "static"))
log = logging.getLogger("indexer.serve")
T = TypeVar("T")

# searches running at once: one per core. Measured with 50 clients on 2 cores: 2 slots gave
# 145 requests/s and p99 0.6 s; 8 or 40 (threads fighting over the GIL) ~105/s and p99 ~2 s
SLOTS = os.cpu_count() or 1
STATUS = {
    UsageError: 400,
    CollectionNotFound: 404,
    EmbedderMismatch: 409,
    StaleIndex: 409,
    QuestionSetError: 422,
}


def status_of(exc: IndexerError) -> int:
    for kind, status in STATUS.items():
        if isinstance(exc, kind):
            return status
    return 503  # the store or the embedder cannot answer


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status)


# -- results as JSON --------------------------------------------------------------------------
def child_json(chunk: Chunk) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "start": chunk.start,
        "end": chunk.end,
        "n_tokens": chunk.n_tokens,
        "header": chunk.header,
        "text": chunk.text,
    }


def search_json(
    library: Library,
    name: str,
    query: str,
    options: SearchOptions,
    doc: str | None = None,
    question: Question | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """The hits of one collection; given a `budget`, its answer-sized context too."""
    index, resolved, hits, overall = library.search(name, query, options, doc)
    children = library.children(index, hits)
    out = []
    for hit, rank in zip(hits, overall):
        data = hit.to_dict()
        data["parent_id"] = hit.chunk.parent_id
        if rank != hit.rank:
            data["collection_rank"] = rank
        if hit.child_ids:
            data["children"] = [child_json(children[c]) for c in hit.child_ids if c in children]
        if question is not None:
            data["mark"] = judge(question, hit.chunk)
        out.append(data)
    result: dict[str, Any] = {
        "strategy": name,
        "embedder": index.entry.embedder,
        "mode": resolved.mode,
        "search": resolved.describe(),
        "k": resolved.k,
        "doc": doc,
        "parent_child": bool(index.entry.parents),
        "ctx_tokens": sum(h.chunk.n_tokens for h in hits),
        "hits": out,
    }
    if budget is not None:
        packed = index.context(query, budget, resolved)
        result["context"] = {**packed.to_dict(), "text": packed.text()}
    return result


def question_json(q: Question) -> dict[str, Any]:
    return {
        "id": q.id,
        "question": q.question,
        "doc_id": q.doc_id,
        "section": q.section,
        "answer": q.answer,
        "symbol": q.symbol,
        "tags": q.tags,
        "target": list(q.target),
        "documents": q.documents,
        "answer_span": list(q.answer_span) if q.answer_span else None,
    }


class Api:
    """The route handlers, over one Library and its question sets."""

    def __init__(self, library: Library, sets: QuestionSets) -> None:
        self.library = library
        self.sets = sets
        self.slots = asyncio.Semaphore(SLOTS)
        store = library.store
        # the index folder as a client sees it (a Chroma server's URL as is): no absolute server path
        self.where = store.url or shown_path(store.db, sets.base)

    def shown(self, message: str) -> str:
        """An error message with the absolute paths of the index folder and of the folders
        its collections were built from (an advised build names them) in their shown form."""
        store = self.library.store
        if not store.url:
            message = hide_folder(message, store.db, self.where)
        return hide_folders(message, store.catalogue.sources(), self.sets.base)

    def _names(self, request: Request) -> list[str]:
        return query_list(request.query_params, "strategy") or list(self.library.names())

    @staticmethod
    def _one(request: Request, name: str) -> str:
        value = request.query_params.get(name, "").strip()
        if not value:
            raise bad(f"the query parameter {name} is required")
        return value

    # -- GET -------------------------------------------------------------------------------
    def health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    def openapi(self, request: Request) -> JSONResponse:
        return JSONResponse(schema(__version__))

    def collections(self, request: Request) -> JSONResponse:
        try:
            default = self.library.name_of(None)
        except IndexerError:
            default = None
        return JSONResponse(
            {
                "collections": [self.library.describe(e) for e in self.library.names().values()],
                "default_strategy": default,
                "default_rule": RULE,
                "where": self.where,
                "modes": list(MODES),
            }
        )

    def documents(self, request: Request) -> JSONResponse:
        docs = self.library.documents(self._names(request))
        return JSONResponse(
            {"documents": [{"doc_id": d, "chunks": counts} for d, counts in docs.items()]}
        )

    def chunks(self, request: Request) -> JSONResponse:
        name, doc = self._one(request, "strategy"), self._one(request, "doc")
        index, chunks, parents = self.library.doc_chunks(name, doc)
        return JSONResponse(
            {
                "strategy": name,
                "embedder": index.entry.embedder,
                "doc_id": doc,
                "chunks": [c.to_dict() for c in chunks],
                "parents": [p.to_dict() for p in parents],
            }
        )

    def view(self, request: Request) -> JSONResponse:
        return JSONResponse(self.library.view(self._one(request, "doc"), self._names(request)))

    def question_sets(self, request: Request) -> JSONResponse:
        return JSONResponse({"sets": self.sets.listing()})

    def questions(self, request: Request) -> JSONResponse:
        sid = request.path_params["set"]
        return JSONResponse(
            {"id": sid, "questions": [question_json(q) for q in self.sets.questions(sid)]}
        )

    def evaluation(self, request: Request) -> JSONResponse:
        modes = tuple(query_list(request.query_params, "mode")) or MODES
        for mode in modes:
            if mode not in MODES:
                raise bad(f"mode must be one of {', '.join(MODES)}, not {mode[:40]!r}")
        return JSONResponse(
            self.sets.evaluation(self._one(request, "set"), self._names(request), modes)
        )

    # -- POST ------------------------------------------------------------------------------
    async def _work(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a search in a worker thread, at most `SLOTS` at a time: more threads than
        cores only fight over the GIL, and the waiting requests queue here in order."""
        async with self.slots:
            return await run_in_threadpool(fn, *args)

    async def search(self, request: Request) -> JSONResponse:
        req = search_request(await read_json(request))
        name = self.library.name_of(req.strategy)
        answer = await self._work(
            functools.partial(
                search_json,
                self.library,
                name,
                req.query,
                options=req.options,
                doc=req.doc,
                budget=req.budget,
            )
        )
        # none named over several strategies: why this one (`retrieval.chosen`)
        why = None if req.strategy is not None else chosen(self.library.store).why
        return JSONResponse({**answer, "chosen_by": why} if why else answer)

    async def compare(self, request: Request) -> JSONResponse:
        req = compare_request(await read_json(request))
        return JSONResponse(await self._work(self._compare, req))

    async def generate(self, request: Request) -> JSONResponse:
        req = generate_request(await read_json(request), MODES)
        names = req.strategies or list(self.library.names())
        return JSONResponse(
            await run_in_threadpool(self.sets.generate, req.n, names, tuple(req.modes))
        )

    def _compare(self, req: CompareRequest) -> dict[str, Any]:
        # compare_request gives both ids or neither
        question = (
            self.sets.question(req.question_set, req.question)
            if req.question_set and req.question
            else None
        )
        results = []
        for name in req.strategies:
            for mode in req.modes:
                try:
                    result = search_json(
                        self.library,
                        name,
                        req.query,
                        SearchOptions(mode=mode, k=req.k, paths=req.paths),
                        question=question,
                        budget=req.budget,
                    )
                except IndexerError as exc:
                    result = {
                        "strategy": name,
                        "mode": mode,
                        "error": self.shown(str(exc)),
                        "status": status_of(exc),
                    }
                result["requested_mode"] = mode or DEFAULT_MODE
                results.append(result)
        return {
            "query": req.query,
            "question": question_json(question) if question else None,
            "results": results,
        }


async def read_json(request: Request) -> dict[str, Any]:
    try:
        raw = await request.body()
    except TooLarge:
        raise ApiError(
            413, f"the request body is over {MAX_BODY:,} bytes (send a query, not a document)"
        ) from None
    return parse_json(raw)


# -- errors -----------------------------------------------------------------------------------
# Starlette calls a handler with the exceptions of the class it is registered for (`create_app`)
async def on_api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error(exc.status, exc.message)


async def on_indexer_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, IndexerError)
    return error(status_of(exc), request.app.state.api.shown(str(exc)))


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {
        404: f"no such page: {request.url.path}",
        405: f"{request.method} is not allowed on {request.url.path}",
    }
    return error(exc.status_code, messages.get(exc.status_code, str(exc.detail)))


async def on_crash(request: Request, exc: Exception) -> Response:
    log.exception("internal error on %s %s", request.method, request.url.path)
    return error(500, f"internal error ({type(exc).__name__}); the server log has the details")


PAGE_HEADERS = {
    "cache-control": "no-cache",
    # only this server's own scripts and styles; no framing, no referrer, no sniffing
    "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _index_page(request: Request) -> FileResponse:
    return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)


def create_app(
    settings: Settings,
    *,
    token: str | None = None,
    cors: tuple[str, ...] = (),
    questions: Sequence[str] = (),
    allowed_hosts: list[str] | None = None,
    library: Library | None = None,
) -> Guard:
    """The app over one index. `allowed_hosts` (for a loopback bind) refuses requests
    whose Host header names another host: the DNS-rebinding guard."""
    library = library or Library(settings)
    api = Api(library, QuestionSets(library, list(questions)))
    routes = [
        Route("/", _index_page),
        Route("/api/health", api.health),
        Route("/api/openapi.json", api.openapi),
        Route("/api/collections", api.collections),
        Route("/api/documents", api.documents),
        Route("/api/chunks", api.chunks),
        Route("/api/view", api.view),
        Route("/api/search", api.search, methods=["POST"]),
        Route("/api/compare", api.compare, methods=["POST"]),
        Route("/api/questions", api.question_sets),
        Route("/api/questions/{set}", api.questions),
        Route("/api/evaluation", api.evaluation),
        Route("/api/evaluation/generate", api.generate, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = []
    if cors:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors),
                allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"],
                max_age=600,
            )
        )
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            ApiError: on_api_error,
            IndexerError: on_indexer_error,
            HTTPException: on_http_error,
            Exception: on_crash,
        },
    )
    app.state.library = library
    app.state.api = api
    # the host check, read-only methods, POSTs only as JSON and from this origin (or --cors),
    # auth and the body cap run before Starlette (and CORS)
    # see the request; a CORS preflight (OPTIONS, which carries no token) passes to the CORS layer
    return Guard(app, token=token, hosts=allowed_hosts, origins=cors)
