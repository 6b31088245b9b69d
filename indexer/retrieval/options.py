"""Search options: the mode, the fusion and its settings, and the defaults they fall back
on (a collection's saved choice first, then its calibrated fusion, then the library's,
per embedder), filled in one place: `resolve`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from ..errors import UsageError
from .fusion import ADAPTIVE_ALPHA, ADAPTIVE_COVERAGE, adaptive_defaults

MODES = ("embedding", "bm25", "hybrid")
FUSIONS = ("adaptive", "weighted", "rrf")
MAX_QUERY_CHARS = 20_000
MAX_PATHS = 64  # path globs a search may be narrowed by
MAX_GLOB = 1000
# what no encoder can write: lone surrogates (JSON's "\ud800", undecodable bytes in argv)
UNENCODABLE = re.compile("[\ud800-\udfff]")
T = TypeVar("T")


def _bad(value: T | None, test: Callable[[T], bool]) -> bool:
    """Whether a setting is set and fails its test."""
    return value is not None and not test(value)


@dataclass
class SearchOptions:
    """How a caller asks to search. A setting left None is filled by `resolve`, which
    makes the `ResolvedOptions` a search runs with: the collection's saved choice
    (`indexer tune --save`), its calibrated fusion, else the library default
    (`DEFAULTS`)."""

    mode: str | None = None  # embedding | bm25 | hybrid
    k: int = 5
    fusion: str | None = None  # hybrid: adaptive | weighted | rrf
    alpha: float | None = None  # weighted: the embedding side's share
    alpha_range: tuple[float, float] | None = (
        None  # adaptive: embedding share when BM25 covers well / poorly
    )
    coverage_range: tuple[float, float] | None = None  # adaptive: coverage counted as poor / good
    rrf_k: int | None = None  # rrf: the k in 1 / (k + rank)
    weights: tuple[float, float] | None = None  # rrf: (embedding, bm25)
    candidates: int | None = None  # depth each side is searched to
    children_k: int | None = None  # parent-child: children taken before mapping to parents
    paths: tuple[str, ...] | None = None  # only documents a glob matches (`retrieval.scope`)

    SAVED = ("mode", "fusion", "alpha", "alpha_range", "coverage_range", "rrf_k", "weights")

    def __post_init__(self) -> None:
        if self.paths is not None:
            self.paths = checked_paths(self.paths)

    def settings(self) -> dict[str, Any]:
        """The saveable settings it names (everything but k and depths)."""
        return {name: getattr(self, name) for name in self.SAVED if getattr(self, name) is not None}

    def check(self) -> None:
        """Raise a usage error naming the first bad setting; unset (None) settings pass."""
        self._check_choices()
        self._check_counts()
        self._check_shares()

    def _check_choices(self) -> None:
        if _bad(self.mode, lambda v: v in MODES):
            raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if _bad(self.fusion, lambda v: v in FUSIONS):
            raise UsageError(f"--fusion must be one of {', '.join(FUSIONS)}, not {self.fusion!r}")

    def _check_counts(self) -> None:
        for name, value in (
            ("-k", self.k),
            ("--candidates", self.candidates),
            ("--children-k", self.children_k),
            ("--rrf-k", self.rrf_k),
        ):
            if _bad(value, lambda v: v >= 1):
                raise UsageError(f"{name} must be at least 1, not {value}")

    def _check_shares(self) -> None:
        if _bad(self.alpha, lambda v: 0.0 <= v <= 1.0):
            raise UsageError(f"--alpha must be between 0 and 1, not {self.alpha}")
        if _bad(self.weights, lambda w: len(w) == 2 and min(w) >= 0 and sum(w) > 0):
            raise UsageError(
                f"--rrf-weights must be two non-negative numbers, not both zero: {self.weights}"
            )
        for name, pair in (
            ("alpha range", self.alpha_range),
            ("coverage range", self.coverage_range),
        ):
            if _bad(pair, lambda p: len(p) == 2 and 0.0 <= p[0] <= p[1] <= 1.0):
                raise UsageError(f"the {name} must be two numbers 0 <= a <= b <= 1, not {pair}")


@dataclass(frozen=True, kw_only=True)
class ResolvedOptions:
    """The settings a search runs with: every one named (`resolve` fills a request's
    unset ones and checks them)."""

    mode: str
    k: int
    fusion: str
    alpha: float
    alpha_range: tuple[float, float]
    coverage_range: tuple[float, float]
    rrf_k: int
    weights: tuple[float, float]
    candidates: int
    children_k: int
    paths: tuple[str, ...] = ()

    def settings(self) -> dict[str, Any]:
        """The search settings a collection can save (everything but k and depths)."""
        return {name: getattr(self, name) for name in SearchOptions.SAVED}

    def request(self, **changes: Any) -> SearchOptions:
        """These settings as a request (every one named), with `changes`."""
        return SearchOptions(**{**self.__dict__, **changes})

    def describe(self) -> str:
        """`hybrid adaptive 0.1-0.8 by coverage 0.3-0.6`, `hybrid weighted 0.3`, `bm25`...:
        the embedding side's share (adaptive: from BM25 covering the query well to
        poorly, across those coverage bounds), or RRF's k and weights."""
        if self.mode != "hybrid":
            return str(self.mode)
        if self.fusion == "adaptive":
            (a, b), (c, d) = self.alpha_range, self.coverage_range
            return f"hybrid adaptive {a:g}-{b:g} by coverage {c:g}-{d:g}"
        if self.fusion == "weighted":
            return f"hybrid weighted {self.alpha:g}"
        return f"hybrid rrf k={self.rrf_k} {self.weights[0]:g}:{self.weights[1]:g}"


DEFAULTS = ResolvedOptions(
    mode="hybrid",
    k=5,
    fusion="adaptive",
    alpha=0.5,
    alpha_range=ADAPTIVE_ALPHA,
    coverage_range=ADAPTIVE_COVERAGE,
    rrf_k=10,
    weights=(1.0, 1.0),
    candidates=50,
    children_k=30,
    paths=(),
)


def resolve(
    options: SearchOptions | ResolvedOptions | None = None,
    saved: Mapping[str, Any] | None = None,
    embedder: str = "",
    fusion: Mapping[str, Any] | None = None,
) -> ResolvedOptions:
    """`options` with every unset (None) value filled, then checked (a usage error names
    the first bad setting): from `saved` (a collection's tuned settings, `indexer tune
    --save`), then its calibrated fusion (`fusion`: the adaptive ranges chosen at build
    time for its embedder and kind of chunks, `retrieval.entry_fusion`), then the defaults
    (`DEFAULTS`, the adaptive ranges per `embedder`). What every search, `list` and the
    evaluator resolve options by (`Index.options` for an open collection)."""
    if isinstance(options, ResolvedOptions):
        return options
    options = options or SearchOptions()
    defaults = _adaptive_defaults(embedder, fusion)
    values: dict[str, Any] = {}  # the settings by name (saved ones are JSON)
    for f in fields(options):
        value = getattr(options, f.name)
        if value is None and saved and saved.get(f.name) is not None:
            value = saved[f.name]
        if value is None:
            value = defaults.get(f.name, getattr(DEFAULTS, f.name))
        values[f.name] = tuple(value) if isinstance(value, list) else value
    SearchOptions(**values).check()
    return ResolvedOptions(**values)


def checked_paths(paths: Iterable[str] | str | None) -> tuple[str, ...]:
    """The globs of a request, stripped; a usage error names a bad one."""
    if paths is None:
        return ()
    given = [paths] if isinstance(paths, str) else list(paths)
    if len(given) > MAX_PATHS:
        raise UsageError(f"at most {MAX_PATHS} --path globs, not {len(given)}")
    out: list[str] = []
    for glob in given:
        if not isinstance(glob, str) or not glob.strip():
            raise UsageError("a --path glob must be a non-empty text, such as 'docs/**/*.md'")
        glob = glob.strip()
        if len(glob) > MAX_GLOB:
            raise UsageError(
                f"--path {glob[:80]!r}...: a glob of {len(glob):,} characters, over the "
                f"{MAX_GLOB:,} one may have"
            )
        if glob.startswith("!"):
            raise UsageError(
                f"--path {glob[:80]!r}: a glob names the documents to search in "
                "(several globs are alternatives; there is no negation)"
            )
        out.append(_compiled(glob))
    return tuple(dict.fromkeys(out))


def _compiled(glob: str) -> str:
    """The glob, when git's rules read it (a usage error otherwise)."""
    from pathspec import GitIgnoreSpec

    try:
        GitIgnoreSpec.from_lines([glob])
    except ValueError as exc:
        raise UsageError(f"--path {glob[:80]!r} is not a glob git reads: {exc}") from None
    return glob


def _adaptive_defaults(
    embedder: str, fusion: Mapping[str, Any] | None
) -> dict[str, tuple[float, ...]]:
    """The adaptive fusion's ranges a search falls back on: the collection's calibrated
    ones (`fusion`), else the library's for its `embedder`."""
    alpha_range, coverage_range = adaptive_defaults(embedder)
    if fusion and fusion.get("alpha_range") and fusion.get("coverage_range"):
        return {
            "alpha_range": tuple(fusion["alpha_range"]),
            "coverage_range": tuple(fusion["coverage_range"]),
        }
    return {"alpha_range": alpha_range, "coverage_range": coverage_range}


@dataclass(frozen=True)
class Query:
    """A query checked once, where it enters (`Query.checked`): its text stripped and
    within the limit, its options checked (still unresolved: `Index` fills them from the
    collection's saved settings when it searches)."""

    text: str
    options: SearchOptions

    @classmethod
    def checked(cls, text: str, options: SearchOptions | None = None) -> Query:
        options = options or SearchOptions()
        text = check_query(text)
        options.check()
        return cls(text, options)


def encodable(text: str) -> str:
    """`text` with what no encoder can write (lone surrogates) replaced by U+FFFD."""
    return UNENCODABLE.sub("\ufffd", text)


def check_query(query: str) -> str:
    """The query, stripped, what cannot be encoded replaced by U+FFFD; a usage error
    when it is not text, empty or absurdly long."""
    if not isinstance(query, str):
        raise UsageError(f"the query must be text, not {type(query).__name__}")
    query = encodable(query).strip()
    if not query:
        raise UsageError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(
            f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} (ask a question, not a document)"
        )
    return query
