"""The code stays readable by someone who takes it over: few tangled functions, lines a
reader takes in at a glance, and bench/ as a package without import circles.

The bars are the ones issue 36 set against click, starlette and chromadb measured with
the same tools (radon's cyclomatic complexity: 4-7% of their functions reach 10; their
code lines average 39-44 characters)."""

from __future__ import annotations

import statistics
from pathlib import Path

from radon.complexity import cc_visit

from tests.test_architecture import SOURCES, circles, graph_of, modules_of

ROOT = Path(__file__).resolve().parent.parent
MAX_COMPLEX_SHARE = 0.06  # functions of cyclomatic complexity >= 10
MAX_AVERAGE_LINE = 46.0  # characters per code line (blank lines and comments left out)


def functions_and_complexity(source: str) -> list[tuple[str, int]]:
    """(name, cyclomatic complexity) of every function, method and closure (radon)."""
    out: list[tuple[str, int]] = []

    def walk(blocks: list) -> None:
        for block in blocks:
            if type(block).__name__ == "Class":
                continue  # radon lists a class's methods beside it
            out.append((block.name, block.complexity))
            walk(block.closures)

    walk(cc_visit(source))
    return out


def test_few_functions_are_tangled():
    measured = [(f"{path.relative_to(ROOT)}:{name}", c) for path in SOURCES
                for name, c in functions_and_complexity(path.read_text(encoding="utf-8"))]
    tangled = sorted((c, name) for name, c in measured if c >= 10)
    share = len(tangled) / len(measured)
    assert len(measured) > 1000  # the measure sees the whole package
    assert share <= MAX_COMPLEX_SHARE, f"{len(tangled)} of {len(measured)} ({share:.1%}): {tangled[-10:]}"


def test_the_complexity_measure_counts_branches():
    source = "def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(12)) + "    return 0\n"
    assert functions_and_complexity(source) == [("f", 13)]
    nested = "def g(x):\n    def h(y):\n        return 1 if y else 2\n    return h(x)\n"
    assert dict(functions_and_complexity(nested)) == {"g": 1, "h": 2}


def code_lines(text: str) -> list[int]:
    return [len(line.rstrip()) for line in text.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_code_lines_are_short():
    lengths = [n for path in SOURCES for n in code_lines(path.read_text(encoding="utf-8"))]
    assert statistics.mean(lengths) <= MAX_AVERAGE_LINE
    assert code_lines("x = 1\n\n# a comment\n    y = 22\n") == [5, 10]


def test_bench_has_no_import_circle():
    modules = modules_of(ROOT / "bench")
    graph = graph_of(modules)
    assert len(modules) > 30 and any(graph.values())  # the graph sees bench's imports
    assert circles(graph) == []
