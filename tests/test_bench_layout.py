"""bench/ is a package with a layout, as tests/test_architecture.py holds the library to one.

No import circle among its modules (imports inside functions count); no private name
imported from another module (bench's own helpers and the library's are public; the two
private `Index` methods the labs still call are marked `# private: see report` and
excepted in tests/test_architecture.py until the library makes them public); the
benchmarks a user runs never import a tuning lab; modules stay small enough to have one
job; every program is in bench/README.md with its command, and its
docstring shows that command."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from tests.test_architecture import circles

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
# bench's own modules: not what a benchmark run downloads into hidden folders (bench/.cache
# holds more_itertools, toolz, ... with their relative imports)
SOURCES = sorted(
    p for p in BENCH.rglob("*.py") if not any(part.startswith(".") for part in p.relative_to(BENCH).parts)
)


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in SOURCES}


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, imported name or None, line) of every import, at the top or in a function."""
    out = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{path.relative_to(ROOT)}:{node.lineno}: a relative import"
            out += [(node.module or "", a.name, node.lineno) for a in node.names]
    return out


def _bench_targets(module: str, name: str | None) -> str | None:
    """The bench module an import reaches (`from bench import scale_kit` reaches bench.scale_kit)."""
    for target in (f"{module}.{name}" if name else None, module):
        if target and target in MODULES:
            return target
    return None


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        found = {_bench_targets(m, n) for m, n, _ in _imports(path)}
        graph[module] = {t for t in found if t and t != module and t != "bench"}
    return graph


def programs() -> list[str]:
    """Modules with a command line (`if __name__ == "__main__"`)."""
    return [m for m, p in MODULES.items() if '\nif __name__ == "__main__":' in p.read_text(encoding="utf-8")]


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "bench.common" in graph["bench.run"]  # from bench.common import ...
    assert "bench.scale_kit" in graph["bench.scale_report"]  # from bench import scale_kit
    assert "bench.scale_kit" in graph["bench.scale_steps"]  # inside a function


def test_no_import_circle_among_bench_modules():
    assert circles(import_graph()) == []


def test_no_private_name_is_imported_from_another_module():
    found = [f"{path.relative_to(ROOT)}:{line}: from {origin} import {name}"
             for path in MODULES.values() for origin, name, line in _imports(path)
             if name and name.startswith("_") and not name.startswith("__")]
    assert not found, "\n".join(found)


def test_benchmarks_never_import_a_lab():
    found = [f"{m} imports {t}" for m, targets in import_graph().items() if not m.startswith("bench.labs")
             for t in targets if t.startswith("bench.labs")]
    assert not found


def test_modules_stay_small():
    """As the package's (tests/test_architecture.py): a module past 450 lines is two modules."""
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    assert not {m: n for m, n in sizes.items() if n > 450}


def test_every_program_is_in_the_readme_with_the_command_its_docstring_shows():
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    for module in programs():
        command = f"python -m {module}"
        doc = ast.get_docstring(_tree(MODULES[module])) or ""
        assert command in doc, f"{module}: its docstring does not show `{command}`"
        assert re.search(rf"`{re.escape(command)}\b", readme), f"bench/README.md does not list `{command}`"
    for command in re.findall(r"python -m (bench[\w.]*)", readme):
        assert command in MODULES, f"bench/README.md names {command}, which does not exist"
