"""The OpenAPI 3.1 description of the JSON API (served at GET /api/openapi.json)."""

from __future__ import annotations

from ..questions.on_demand import QUESTIONS, SEEDS
from ..retrieval.collections import RULE
from .guard import MAX_BODY
from .params import MAX_BUDGET, MAX_COLLECTIONS, MAX_GENERATE, MAX_K, MIN_BUDGET, VIEW_MODES


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _param(name: str, description: str, required: bool = False, repeat: bool = False) -> dict:
    schema = {"type": "array", "items": {"type": "string"}} if repeat else {"type": "string"}
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema,
        **({"style": "form", "explode": True} if repeat else {}),
    }


ERRORS = {
    "400": _json(_ref("Error"), "the request is malformed (the message names the field)"),
    "401": _json(_ref("Error"), "missing or wrong bearer token (only when the server has a token)"),
    "404": _json(_ref("Error"), "no such collection, document or question set"),
    "413": _json(_ref("Error"), f"the body is over {MAX_BODY:,} bytes"),
}
POST_ERRORS = {
    "403": _json(
        _ref("Error"), "an Origin header naming another site (not this server, not --cors)"
    ),
    "415": _json(_ref("Error"), "the body is not sent as Content-Type: application/json"),
}

PATHS = {
    "anyOf": [
        {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 64},
        {"type": "string", "minLength": 1},
    ],
    "description": "only documents whose path matches one of these globs (git's rules: "
    "*.pptx, docs/api/, src/**/*.py); a list, or one glob as a string",
}
BUDGET = {
    "type": "integer",
    "minimum": MIN_BUDGET,
    "maximum": MAX_BUDGET,
    "description": "answer-sized context: the spans that answer in at most this many tokens",
}
STRATEGY = "a collection name from GET /api/collections (`headers`, or `headers@e5-small`)"

SCHEMAS = {
    "Error": {
        "type": "object",
        "required": ["error", "status"],
        "properties": {"error": {"type": "string"}, "status": {"type": "integer"}},
    },
    "SearchRequest": {
        "type": "object",
        "required": ["query"],
        "additionalProperties": False,
        "properties": {
            "query": {"type": "string", "maxLength": 20000},
            "strategy": {"type": "string", "description": f"{STRATEGY}; default: {RULE}"},
            "mode": {
                "type": "string",
                "enum": list(VIEW_MODES),
                "description": "default: the collection's saved search (indexer tune --save), else hybrid",
            },
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
            "doc": {"type": "string", "description": "only hits of this document (a doc_id)"},
            "budget": BUDGET,
            "paths": PATHS,
        },
    },
    "CompareRequest": {
        "type": "object",
        "required": ["query", "strategies"],
        "additionalProperties": False,
        "properties": {
            "query": {"type": "string", "maxLength": 20000},
            "strategies": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": MAX_COLLECTIONS,
            },
            "modes": {"type": "array", "items": {"type": "string", "enum": list(VIEW_MODES)}},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
            "question_set": {"type": "string", "description": "a set id from GET /api/questions"},
            "question": {
                "type": "string",
                "description": "a question id of that set: hits get hit/strict/miss marks",
            },
            "budget": BUDGET,
            "paths": PATHS,
        },
    },
    "GenerateRequest": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "n": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_GENERATE,
                "default": QUESTIONS,
                "description": f"questions to make a set, {SEEDS} sets pooled (fewer when the documents hold "
                "fewer passages worth one)",
            },
            "strategies": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": MAX_COLLECTIONS,
                "description": "collections to evaluate (of one source folder); default all",
            },
            "modes": {
                "type": "array",
                "items": {"type": "string", "enum": ["embedding", "bm25", "hybrid"]},
            },
        },
    },
    "Chunk": {
        "type": "object",
        "properties": {
            name: {"type": kind}
            for name, kind in (
                ("id", "string"),
                ("doc_id", "string"),
                ("start", "integer"),
                ("end", "integer"),
                ("start_line", "integer"),
                ("end_line", "integer"),
                ("kind", "string"),
                ("header", "string"),
                ("heading_path", "string"),
                ("location", "string"),
                ("n_tokens", "integer"),
                ("text", "string"),
                ("indexed_text", "string"),
                ("parent_id", "string"),
            )
        },
    },
    "Hit": {
        "type": "object",
        "properties": {
            "rank": {"type": "integer"},
            "score": {"type": "number"},
            "collection_rank": {
                "type": "integer",
                "description": "with a doc filter: the rank in the whole collection",
            },
            "id": {"type": "string"},
            "doc_id": {"type": "string"},
            "start": {"type": "integer"},
            "end": {"type": "integer"},
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
            "kind": {"type": "string"},
            "header": {"type": "string"},
            "heading_path": {"type": "string"},
            "location": {
                "type": "string",
                "description": "where in a file without pages: slide 3, Sales row 2-40, cell 4",
            },
            "n_tokens": {"type": "integer"},
            "text": {"type": "string"},
            "embedding_rank": {"type": ["integer", "null"]},
            "embedding_score": {"type": ["number", "null"]},
            "bm25_rank": {"type": ["integer", "null"]},
            "bm25_score": {"type": ["number", "null"]},
            "embedding_share": {
                "type": "number",
                "description": "hybrid: the embedding side's weight",
            },
            "exact": {"type": "integer", "description": "exact-match tier (absent: 0)"},
            "match": {
                "type": "string",
                "enum": ["exact symbol", "exact code", "file name", "exact term"],
                "description": "what put the hit in its exact-match tier",
            },
            "search_score": {
                "type": "number",
                "description": "the mode's own score, when score was raised to keep rank order",
            },
            "same_text": {
                "type": "array",
                "items": {"type": "string"},
                "description": "other documents whose hits held this very text (dropped)",
            },
            "children": {
                "type": "array",
                "items": _ref("Chunk"),
                "description": "parent-child: the children this parent was found by",
            },
            "mark": {"type": "string", "enum": ["strict", "hit", "miss"]},
        },
    },
    "Span": {
        "type": "object",
        "description": "an exact slice of a document: text == document[start:end]",
        "properties": {
            "doc_id": {"type": "string"},
            "start": {"type": "integer"},
            "end": {"type": "integer"},
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
            "start_page": {"type": "integer"},
            "end_page": {"type": "integer"},
            "label": {"type": "string", "description": "the heading path above the span"},
            "text": {"type": "string"},
            "score": {"type": "number"},
            "n_tokens": {"type": "integer"},
            "kinds": {"type": "array", "items": {"type": "string"}},
        },
    },
    "Context": {
        "type": "object",
        "description": "answer-sized context (only with budget)",
        "properties": {
            "text": {
                "type": "string",
                "description": "what goes into a prompt: label lines and spans",
            },
            "spans": {"type": "array", "items": _ref("Span")},
            "tokens": {
                "type": "integer",
                "description": "tokens of text, labels included (<= budget)",
            },
            "budget": {"type": "integer"},
            "label_tokens": {"type": "integer"},
            "candidates": {"type": "integer"},
            "units": {"type": "integer"},
            "scoring": {"type": "string", "enum": ["bm25+embedding", "bm25"]},
            "whole_tokens": {"type": "integer", "description": "what the top k whole chunks cost"},
            "whole_k": {"type": "integer"},
            "query": {"type": "string"},
            "strategy": {"type": "string"},
        },
    },
    "SearchResult": {
        "type": "object",
        "properties": {
            "strategy": {"type": "string"},
            "chosen_by": {
                "type": "string",
                "description": "no strategy named, several built: why this one was read",
            },
            "embedder": {"type": "string"},
            "mode": {"type": "string"},
            "search": {
                "type": "string",
                "description": "the resolved search, e.g. hybrid adaptive 0.1-0.8 ...",
            },
            "k": {"type": "integer"},
            "doc": {"type": ["string", "null"]},
            "ctx_tokens": {
                "type": "integer",
                "description": "tokens the hits' texts put in a prompt",
            },
            "hits": {"type": "array", "items": _ref("Hit")},
            "context": _ref("Context"),
            "error": {"type": "string"},
        },
    },
}


def _get(summary: str, response: dict, params: list | None = None, public: bool = False) -> dict:
    op = {"summary": summary, "parameters": params or [], "responses": {"200": response, **ERRORS}}
    if public:
        op["security"] = []
    return {"get": op}


def _post(summary: str, request: str, response: dict) -> dict:
    return {
        "post": {
            "summary": summary,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref(request)}},
            },
            "responses": {"200": response, **ERRORS, **POST_ERRORS},
        }
    }


def schema(version: str) -> dict:
    obj = {"type": "object"}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "indexer serve",
            "version": version,
            "description": "Hybrid search (embedding, BM25, fused) over the collections of an indexer "
            "database, and the data of the browser views. Read-only: it changes no collection (made-up "
            "question sets are kept in the index folder).",
        },
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/health": _get(
                "liveness: {status, version}", _json(obj, "the server is up"), public=True
            ),
            "/api/openapi.json": _get("this document", _json(obj, "OpenAPI 3.1"), public=True),
            "/api/collections": _get(
                "the built collections: strategy, embedder, sizes, default search; and "
                "default_strategy, the one a search naming none reads (default_rule)",
                _json(obj, "{collections: [...], default_strategy, default_rule}"),
            ),
            "/api/documents": _get(
                "doc_ids and their chunk counts per collection",
                _json(obj, "{documents: [...]}"),
                [_param("strategy", STRATEGY + "; default all", repeat=True)],
            ),
            "/api/chunks": _get(
                "one document's stored chunks in one collection, in document order (with "
                "their parents for parent-child collections)",
                _json(obj, "{strategy, doc_id, chunks: [Chunk], parents: [Chunk]}"),
                [
                    _param("strategy", STRATEGY, required=True),
                    _param("doc", "a doc_id", required=True),
                ],
            ),
            "/api/view": _get(
                "the documents view: the document rebuilt from stored chunks, each collection's "
                "chunks and boundary-quality marks",
                _json(obj, "{text, lanes: [...]}"),
                [
                    _param("doc", "a doc_id", required=True),
                    _param("strategy", STRATEGY + "; default all", repeat=True),
                ],
            ),
            "/api/search": _post(
                "search one collection", "SearchRequest", _json(_ref("SearchResult"), "the hits")
            ),
            "/api/compare": _post(
                "one query over several collections × modes (the query view)",
                "CompareRequest",
                _json(obj, "{query, question, results: [SearchResult]}"),
            ),
            "/api/questions": _get(
                "question sets: --questions files, questions*.jsonl next to the corpora about "
                "documents a collection holds, and sets made by POST /api/evaluation/generate",
                _json(obj, "{sets: [{id, name, explicit, generated, matches, collections}]}"),
            ),
            "/api/questions/{set}": {
                "get": {
                    "summary": "the questions of a set",
                    "responses": {"200": _json(obj, "{questions: [...]}"), **ERRORS},
                    "parameters": [
                        {
                            "name": "set",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                }
            },
            "/api/evaluation": _get(
                "indexer eval of a question set: rows with 95% intervals, and the CLI's tables",
                _json(obj, "{rows: [...], table, intervals}"),
                [
                    _param("set", "a set id from GET /api/questions", required=True),
                    _param("strategy", STRATEGY + "; default all", repeat=True),
                    _param("mode", "embedding, bm25, hybrid; default all three", repeat=True),
                ],
            ),
            "/api/evaluation/generate": _post(
                "no question file? make questions from the collections' documents (offline, as `indexer questions`; "
                "kept in the index folder, reused while the documents are unchanged), then evaluate them",
                "GenerateRequest",
                _json(
                    obj,
                    "the evaluation, its set id, {generated: {questions, reused, "
                    "shortfall, message}}, and {advice: {winner, tied, rows, "
                    "bm25_minus_embedding, lexical_bias, caveat, ...}, advice_text}: "
                    "which rows the made-up questions can tell apart",
                ),
            ),
        },
    }
