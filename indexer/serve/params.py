"""Request bodies and query strings checked into plain values, with a 4xx message that
names the field and says what is allowed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..retrieval import MODES, SearchOptions
from ..retrieval.options import MAX_QUERY_CHARS, checked_paths, encodable

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

MAX_K = 100
MIN_BUDGET, MAX_BUDGET = 16, 100_000  # answer-sized context: tokens a request may ask for
MAX_COLLECTIONS = 12
MAX_DOC_ID = 1000
MAX_DEPTH = 32  # levels of arrays and objects in a body: a request nests two
DEEP_BODY = (
    f"the body nests arrays or objects more than {MAX_DEPTH} levels deep; "
    "a request is one flat JSON object"
)
DEFAULT_MODE = "default"  # the collection's saved search (`indexer tune --save`), else hybrid
VIEW_MODES = (*MODES, DEFAULT_MODE)


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad(message: str) -> ApiError:
    return ApiError(400, message)


def parse_json(raw: bytes) -> dict:
    if not raw.strip():
        raise bad("the body is empty; send a JSON object")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad(f"the body is not JSON ({exc})") from None
    except RecursionError:  # deeper than Python's parser goes
        raise bad(DEEP_BODY) from None
    if not isinstance(data, dict):
        raise bad(f"the body must be a JSON object, not {type(data).__name__}")
    if too_deep(data, MAX_DEPTH):
        raise bad(DEEP_BODY)
    return _encodable(data)


def too_deep(data: dict | list, limit: int) -> bool:
    """Whether `data` nests arrays and objects more than `limit` levels deep (walked a
    level at a time: no recursion to run out of)."""
    level = [data]
    for _ in range(limit):
        level = [
            child
            for value in level
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, dict | list)
        ]
        if not level:
            return False
    return True


def _encodable(value: Any) -> Any:
    """Every string of a body with lone surrogates (`"\\ud800"`) replaced: what the
    request's fields are echoed in must be writable."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {encodable(k): _encodable(v) for k, v in value.items()}
    return value


def check_fields(data: dict, known: tuple[str, ...]) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise bad(f"unknown field {unknown[0]!r}; known fields: {', '.join(known)}")


def text_field(
    data: dict, name: str, required: bool = False, limit: int = MAX_DOC_ID
) -> str | None:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise bad(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise bad(f"{name} must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise bad(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value


def required_text(data: dict[str, Any], name: str, limit: int = MAX_DOC_ID) -> str:
    """A string field the request must have (`text_field`, required)."""
    value = text_field(data, name, required=True, limit=limit)
    assert value is not None  # text_field raised for a missing one
    return value


def k_field(data: dict, default: int = 5) -> int:
    value = data.get("k", default)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(f"k must be a whole number from 1 to {MAX_K}, not {value!r}")
    if not 1 <= value <= MAX_K:
        raise bad(f"k must be from 1 to {MAX_K}, not {value}")
    return value


def mode_field(value: object, name: str = "mode") -> str | None:
    """A search mode; None (or "default") is the collection's saved one."""
    if value in (None, "", DEFAULT_MODE):
        return None
    if not isinstance(value, str) or value not in MODES:
        raise bad(f"{name} must be one of {', '.join(VIEW_MODES)}, not {str(value)[:40]!r}")
    return value


def list_field(data: dict, name: str, limit: int = MAX_COLLECTIONS) -> list[str]:
    value = data.get(name) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad(f"{name} must be a list of strings")
    if len(value) > limit:
        raise bad(f"{name} lists {len(value)} items; the limit is {limit}")
    return list(dict.fromkeys(value))


@dataclass
class SearchRequest:
    query: str
    strategy: str | None  # None: the one `retrieval.choose` picks
    options: SearchOptions
    doc: str | None = None
    budget: int | None = None


SEARCH_FIELDS = ("query", "strategy", "mode", "k", "doc", "budget", "paths")


def search_request(data: dict) -> SearchRequest:
    """POST /api/search: {query, strategy?, mode?, k?, doc?, budget?}."""
    check_fields(data, SEARCH_FIELDS)
    query = required_text(data, "query", MAX_QUERY_CHARS)
    strategy = text_field(data, "strategy", limit=200)
    options = SearchOptions(
        mode=mode_field(data.get("mode")), k=k_field(data), paths=paths_field(data)
    )
    doc, budget = text_field(data, "doc"), budget_field(data)
    if doc and budget:
        raise bad("budget packs context from the whole collection; leave out doc (or budget)")
    return SearchRequest(query, strategy, options, doc, budget)


def paths_field(data: dict) -> tuple[str, ...] | None:
    """`paths`: path globs a search is narrowed to (a list, or one glob as a string)."""
    value = data.get("paths")
    if value is None or value == []:
        return None
    try:
        return checked_paths(value if isinstance(value, (str, list)) else [value])
    except UsageError as exc:
        raise bad(f"paths: {exc}") from None


def budget_field(data: dict) -> int | None:
    """`budget`: answer-sized context in at most this many tokens (absent: whole chunks)."""
    value = data.get("budget")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(
            f"budget must be a whole number of tokens from {MIN_BUDGET} to {MAX_BUDGET}, not {value!r}"
        )
    if not MIN_BUDGET <= value <= MAX_BUDGET:
        raise bad(f"budget must be from {MIN_BUDGET} to {MAX_BUDGET} tokens, not {value}")
    return value


@dataclass
class CompareRequest:
    query: str
    strategies: list[str]
    modes: list[str | None]
    k: int
    question_set: str | None = None
    question: str | None = None
    budget: int | None = None
    paths: tuple[str, ...] | None = None


COMPARE_FIELDS = (
    "query",
    "strategies",
    "modes",
    "k",
    "question_set",
    "question",
    "budget",
    "paths",
)


def compare_request(data: dict) -> CompareRequest:
    """POST /api/compare: {query, strategies, modes?, k?, question_set?, question?, budget?}."""
    check_fields(data, COMPARE_FIELDS)
    query = required_text(data, "query", MAX_QUERY_CHARS)
    strategies = list_field(data, "strategies")
    if not strategies:
        raise bad("strategies must name at least one collection (GET /api/collections lists them)")
    modes = [mode_field(m, "modes") for m in list_field(data, "modes", len(VIEW_MODES))] or [None]
    question_set, question = (
        text_field(data, "question_set", limit=64),
        text_field(data, "question", limit=200),
    )
    if bool(question_set) != bool(question):
        raise bad("question_set and question go together (the set's id and the question's id)")
    return CompareRequest(
        query,
        strategies,
        list(dict.fromkeys(modes)),
        k=k_field(data),
        question_set=question_set,
        question=question,
        budget=budget_field(data),
        paths=paths_field(data),
    )


MAX_GENERATE = 2000  # made-up questions one request may ask for


@dataclass
class GenerateRequest:
    n: int
    strategies: list[str]
    modes: list[str]


GENERATE_FIELDS = ("n", "strategies", "modes")


def generate_request(data: dict, modes: tuple[str, ...]) -> GenerateRequest:
    """POST /api/evaluation/generate: {n?, strategies?, modes?} (n: questions a made-up set,
    default `eval --generate`'s)."""
    from ..questions.on_demand import QUESTIONS

    check_fields(data, GENERATE_FIELDS)
    n = data.get("n", QUESTIONS)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_GENERATE:
        raise bad(
            f"n must be a whole number of questions from 1 to {MAX_GENERATE}, not {str(n)[:40]!r}"
        )
    chosen = list_field(data, "modes", len(modes))
    for mode in chosen:
        if mode not in modes:
            raise bad(f"modes must be among {', '.join(modes)}, not {str(mode)[:40]!r}")
    return GenerateRequest(
        n, list_field(data, "strategies"), list(dict.fromkeys(chosen)) or list(modes)
    )


def query_list(params: QueryParams, name: str) -> list[str]:
    """A repeatable query-string parameter (`?strategy=a&strategy=b`)."""
    values = [v for v in params.getlist(name) if v.strip()]
    if len(values) > MAX_COLLECTIONS:
        raise bad(f"{name} is given {len(values)} times; the limit is {MAX_COLLECTIONS}")
    return list(dict.fromkeys(v.strip() for v in values))
