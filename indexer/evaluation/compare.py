"""What `indexer eval --compare A B` pairs: two rows, two modes across every strategy, or
two strategies across every mode; checked against what is evaluated before any work."""

from __future__ import annotations

from ..chunkers import collection_name
from ..errors import UsageError
from ..retrieval import MODES


def _operand(name: str) -> str:
    """A --compare operand in canonical spelling: a mode, a strategy (any spelling of a
    spec: `fixed:size=64,overlap=16` is `fixed64`) or `strategy/mode`."""
    if name in MODES:
        return name
    strategy, slash, mode = name.rpartition("/")
    if slash and mode in MODES:
        return f"{collection_name(strategy)}/{mode}"
    return collection_name(name)


def compare_pairs(a: str, b: str, strategies: list[str], modes: list[str]) -> list[tuple[str, str]]:
    """The rows (`strategy/mode` labels) that `--compare a b` pairs, given the strategies
    (collection names) and modes evaluated: two rows; two modes, across every strategy;
    or two strategies, across every mode. Raises UsageError naming what does not fit —
    checkable before any evaluation runs."""
    a, b = _operand(a), _operand(b)
    rows = [f"{s}/{m}" for s in strategies for m in modes]
    if _both(a, b, rows):
        return [(a, b)]
    if _both(a, b, modes):
        return [(f"{s}/{a}", f"{s}/{b}") for s in strategies]
    if _both(a, b, strategies):
        return [(f"{a}/{m}", f"{b}/{m}") for m in modes]
    raise _compare_error(a, b, rows, strategies, modes)


def _both(a: str, b: str, names: list[str]) -> bool:
    return a in names and b in names


def _compare_error(
    a: str, b: str, rows: list[str], strategies: list[str], modes: list[str]
) -> UsageError:
    """Why `--compare a b` pairs no rows: an operand names nothing evaluated, or the two
    are not of one kind."""
    known = set(rows) | set(modes) | set(strategies)
    unknown = [x for x in (a, b) if x not in known]
    verb = "names" if len(unknown) == 1 else "name"
    what = (
        f"{' and '.join(unknown)} {verb} no strategy, mode or row of this evaluation"
        if unknown
        else "they are not of one kind"
    )
    return UsageError(
        f"--compare {a} {b}: {what}; compare two modes ({', '.join(modes)}), "
        f"two strategies ({', '.join(strategies)}) or two rows as strategy/mode"
    )
