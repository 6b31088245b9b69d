"""The layout holds, as the architecture page (docs/architecture.md) draws it.

The package is a stack of layers; a module imports only from its own layer or the ones
below, never up, and there is no import circle between packages or between modules
(imports inside functions count: a lazy import that holds a circle open is still a
circle). Chroma is reached only through store/, and only the store builds paths inside
the index folder. The environment is read only by settings.py and written by nobody;
settings are resolved only where the library is entered. Modules stay small enough to
have one job, classes stay small (no more than 20 public methods, no mixins in the
store), and the CLI reads its choices from the library."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import indexer

PACKAGE = Path(__file__).resolve().parent.parent / "indexer"
SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))

# lowest first; a package (or top-level module) imports only from its layer or below
LAYERS = [
    ("foundation", {"errors", "settings", "version", "types", "text", "tables", "paths"}),
    ("store", {"store"}),
    ("plug-ins: files and models", {"loaders", "embeddings", "llm"}),
    ("plug-ins: strategies", {"chunkers"}),
    ("retrieval", {"retrieval"}),
    ("use case: indexing", {"indexing"}),
    ("use case: question making", {"questions"}),
    ("use case: evaluation", {"evaluation"}),
    ("front doors", {"cli", "serve", "agents", "__main__", "indexer"}),
]
# what only the store may join to an index folder (see store/layout.py)
INDEX_FOLDER_NAMES = {"indexer.json", "chroma", "indexes", "locks", "cache", "manifest.json", "gc.json", "bm25", "rows",
                      "questions"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


MODULES = {_name(p): p for p in SOURCES}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "indexer"


def modules_of(root: Path) -> dict[str, Path]:
    """{dotted module name: its file} for every module under a top-level folder (hidden
    folders left out: bench/.cache holds the public sets' third-party source code)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def graph_of(modules: dict[str, Path]) -> dict[str, set[str]]:
    """{module: the modules of the same tree it imports}, from every import statement, at
    the top or inside a function."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        found: set[str] = set()
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(_tree(path)):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    origin = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names]
            for target in targets:
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != module:
                    found.add(target)
        graph[module] = found
    return graph


@cache
def import_graph() -> dict[str, set[str]]:
    """The package's import graph (imports inside functions included)."""
    return graph_of(MODULES)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _layer(package: str) -> int:
    return next(i for i, (_, members) in enumerate(LAYERS) if package in members)


def package_graph() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        out.setdefault(_package(module), set()).update(_package(t) for t in targets if _package(t) != _package(module))
    return out


def test_every_package_has_a_layer():
    placed = [p for _, members in LAYERS for p in members]
    assert len(placed) == len(set(placed))
    assert sorted({_package(m) for m in MODULES} - set(placed)) == []


def test_no_import_runs_up_a_layer():
    upward = sorted(f"{module} -> {target} ({LAYERS[_layer(_package(module))][0]} -> {LAYERS[_layer(_package(target))][0]})"
                    for module, targets in import_graph().items() for target in targets
                    if _layer(_package(target)) > _layer(_package(module)))
    assert upward == []


def test_no_import_circle_between_packages_or_modules():
    assert circles(package_graph()) == []
    assert circles(import_graph()) == []


def test_the_graph_sees_lazy_imports():
    """A check that cannot fail is no check: the graph holds imports made inside functions."""
    graph = import_graph()
    assert "indexer.indexing.watching" in graph["indexer.cli.live"]  # imported inside the `watch` command
    assert "indexer.store" in graph["indexer.indexing.building"] and len(graph) > 90


def test_only_the_store_imports_chromadb():
    outside = sorted(_rel(p) for p in SOURCES if _package(_name(p)) != "store" and any(
        (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "chromadb" for a in n.names))
        or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "chromadb")
        for n in ast.walk(_tree(p))))
    assert outside == []


def _index_folder_paths(path: Path) -> list[str]:
    """`<db> / name` joins and index-folder names outside the store."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = node.left, node.right
            names_db = (isinstance(left, ast.Attribute) and (left.attr in ("db", "side") or (
                left.attr == "cache_dir" and "store" in ast.dump(left.value)))) or (
                isinstance(left, ast.Name) and left.id == "db")
            names_layout = isinstance(right, ast.Constant) and right.value in INDEX_FOLDER_NAMES
            if names_db or names_layout:
                found.append(f"{_rel(path)}:{node.lineno}")
        elif isinstance(node, ast.Constant) and node.value in ("indexer.json", "manifest.json", "gc.json"):
            found.append(f"{_rel(path)}:{node.lineno}")
        elif isinstance(node, ast.Attribute) and node.attr == "folder" and (
                isinstance(node.value, ast.Attribute) and node.value.attr == "side"):
            found.append(f"{_rel(path)}:{node.lineno}")  # `store.side.folder(...)`: only the store's
    return found


def test_only_the_store_builds_paths_inside_the_index_folder():
    outside = [hit for p in SOURCES if _package(_name(p)) != "store" for hit in _index_folder_paths(p)]
    assert outside == []
    # the check sees such a path where one is written
    probe = PACKAGE / "store" / "store.py"
    assert _index_folder_paths(probe)


def _environment_uses(path: Path) -> tuple[list[int], list[int]]:
    """(lines reading, lines writing) the process environment."""
    reads, writes = [], []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv", "environb"):
            reads.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                a.name in ("environ", "getenv", "putenv") for a in node.names):
            reads.append(node.lineno)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(t, ast.Subscript) and "environ" in ast.dump(t.value) for t in targets):
                writes.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in ("putenv", "unsetenv") or (
                node.func.attr in ("update", "setdefault", "pop", "clear") and "environ" in ast.dump(node.func.value))):
            writes.append(node.lineno)
    return reads, writes


def test_only_settings_reads_the_environment_and_nobody_writes_it():
    readers = sorted(_rel(p) for p in SOURCES if _environment_uses(p)[0])
    assert readers == ["settings.py"]
    assert [(_rel(p), w) for p in SOURCES for w in _environment_uses(p)[1]] == []


def test_settings_are_resolved_only_where_the_library_is_entered():
    """`Settings.load` / `settings_for` (which read the environment) are called by the
    public entry points (`indexer.API`), the front doors and the watcher; inner modules
    receive the settings."""
    entry_modules = {getattr(importlib.import_module(m), a).__module__ for m, a in indexer.API.values()}
    allowed = entry_modules | {"indexer.settings", "indexer.indexing.watching"}
    callers = set()
    for module, path in MODULES.items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "settings_for" or (name == "load" and isinstance(func, ast.Attribute)
                                              and getattr(func.value, "id", "") == "Settings"):
                    callers.add(module)
    inner = sorted(m for m in callers if m not in allowed and _package(m) not in LAYERS[-1][1])
    assert inner == []
    assert "indexer.indexing.building" in callers  # the check sees the calls


# --- configuration has one way in ---------------------------------------------------------
# A library function takes its configuration as one `settings: Settings | None = None`;
# nothing beside it says again where the index is or what it is built or searched with.
LOOSE = {"db", "chroma_url", "embedder", "embedders", "ollama_host", "cache_dir", "tiktoken_cache",
         "lease_ttl", "store"}


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, function) of every function and method under `tree`, nested
    ones included (a closure or a method of a class inside a function is code too)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def _loose_beside_settings(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """What `fn` takes beside a `settings`: loose store/embedder arguments and a `**`
    catch-all that could carry them."""
    args = fn.args
    params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    if "settings" not in params:
        return []
    return sorted(params & LOOSE) + ([f"**{args.kwarg.arg}"] if args.kwarg else [])


def test_no_function_takes_settings_and_something_loose_beside_it():
    """No function or method in indexer/ (front doors included) takes both `settings`
    and a loose store/embedder argument (db=, chroma_url=, embedder=, ollama_host=,
    store=...) or a `**` catch-all: a read chooses its collection with `built_with`, a
    build embeds with `settings.embedder`, and an open Store carries its own settings."""
    found = {f"{_rel(path)}:{name}": loose for path in SOURCES
             for name, fn in _functions(_tree(path)) if (loose := _loose_beside_settings(fn))}
    assert found == {}
    probe = ast.parse("def open(strategy, *, settings: Settings | None = None, db=None, **kw): ...\n"
                      "def fine(strategy, *, settings: Settings | None = None, built_with=None): ...\n"
                      "class Tools:\n"
                      "    def __init__(self, settings=None, embedder=None): ...\n"
                      "def outer():\n"
                      "    def inner(settings, ollama_host): ...\n")
    got = {name: _loose_beside_settings(fn) for name, fn in _functions(probe)}
    assert got == {"open": ["db", "**kw"], "fine": [], "Tools.__init__": ["embedder"], "outer": [],
                   "outer.inner": ["ollama_host"]}  # the check can fail, methods and closures too
    assert len(list(_functions(_tree(PACKAGE / "retrieval" / "index.py")))) > 10  # it sees the code


def _embedder_calls_without_settings(path: Path) -> list[int]:
    """Lines calling `get_embedder` without settings (which then reads the environment)."""
    lines = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "get_embedder":
            if len(node.args) < 2 and not any(k.arg == "settings" for k in node.keywords):
                lines.append(node.lineno)
    return lines


def test_nothing_below_the_front_doors_loads_an_embedder_from_the_environment():
    """An embedder is made with the settings a caller passed down (the semantic chunker
    gets its own from the build or `chunk`), never with the environment's."""
    found = [f"{_rel(p)}:{line}" for module, p in MODULES.items() if _package(module) not in LAYERS[-1][1]
             for line in _embedder_calls_without_settings(p) if module != "indexer.embeddings"]
    assert found == []
    assert _embedder_calls_without_settings(PACKAGE / "indexing" / "building.py") == []
    assert "get_embedder(" in (PACKAGE / "indexing" / "building.py").read_text(encoding="utf-8")


def test_the_cli_has_no_hard_coded_choice_list():
    """Choices come from the library's registries and constants (MODES, FUSIONS, ENGINES,
    PRESETS...), never from a literal list in a command."""
    literal = []
    for path in (PACKAGE / "cli").rglob("*.py"):
        for node in ast.walk(_tree(path)):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Choice"
                    and node.args and isinstance(node.args[0], (ast.List, ast.Tuple))):
                literal.append(f"{_rel(path)}:{node.lineno}")
    assert literal == []


def test_the_cli_writes_no_library_default_in_its_help():
    """Help naming a default the library owns (a number, a mode, a fusion, an engine, a
    strategy, an embedder) reads it from the library (`cli/library.py`), so the two
    cannot drift apart."""
    written = re.compile(r"default:? (\d|rank-bm25|bm25s|hybrid|embedding|adaptive|weighted|rrf|auto\b|use-m3|e5-small)")
    literal = []
    for path in (PACKAGE / "cli").rglob("*.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and written.search(node.value):
                literal.append(f"{_rel(path)}:{node.lineno}")
            if isinstance(node, ast.keyword) and node.arg == "show_default" and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str):
                literal.append(f"{_rel(path)}:{node.lineno}")
    assert literal == []
    assert written.search("[default: 50]") and written.search("(default: hybrid)")  # the check can fail


def test_modules_stay_small():
    sizes = {_rel(p): len(p.read_text(encoding="utf-8").splitlines()) for p in SOURCES}
    assert {name: n for name, n in sizes.items() if n > 450} == {}


MAX_PUBLIC_METHODS = 20


def _public_methods(cls: ast.ClassDef) -> list[str]:
    """The methods defined in a class's body that are not `_private` (properties and
    static methods count: each is a name a caller can use)."""
    return [n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not n.name.startswith("_")]


def _classes(path: Path) -> list[ast.ClassDef]:
    return [n for n in ast.walk(_tree(path)) if isinstance(n, ast.ClassDef)]


def test_no_class_has_more_than_20_public_methods():
    """Small objects with one job: a class users or other modules hold has a handful of
    methods; one that passes 20 is two objects."""
    sizes = {f"{_rel(p)}:{c.name}": len(_public_methods(c)) for p in SOURCES for c in _classes(p)}
    assert {name: n for name, n in sizes.items() if n > MAX_PUBLIC_METHODS} == {}
    probe = ast.parse("class Big:\n" + "".join(f"    def m{i}(self): ...\n" for i in range(21))
                      + "    @property\n    def p(self): ...\n    def _hidden(self): ...\n")
    assert len(_public_methods(probe.body[0])) == 22  # the count can pass the limit
    assert sizes["store/store.py:Store"] >= 4  # ...and sees the classes of the package


def _base_names(cls: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ast.dump(b)
            for b in cls.bases]


def _mixed_in(classes: list[tuple[str, ast.ClassDef]]) -> list[str]:
    """The (where, class) pairs with several bases, or with a base among the classes."""
    own = {c.name for _, c in classes}
    return sorted(f"{where}:{c.name}" for where, c in classes if len(c.bases) > 1 or set(_base_names(c)) & own)


def test_the_store_is_made_of_roles_not_mixins():
    """`Store` is a small front holding role objects (catalogue, builds, records, side),
    each a class of its own module: no class of the store inherits from another of its
    classes, and none has several bases."""
    store = [(_rel(p), c) for p in SOURCES if _package(_name(p)) == "store" for c in _classes(p)]
    assert _mixed_in(store) == []
    old = ast.parse("class Deltas: ...\nclass Reads: ...\nclass Store(Deltas, Reads): ...\n"
                    "class Catalogue(Reads): ...\nclass Fine(Exception): ...\n")
    probe = [("old.py", c) for c in old.body if isinstance(c, ast.ClassDef)]
    assert _mixed_in(probe) == ["old.py:Catalogue", "old.py:Store"]  # the check can fail


def test_the_architecture_page_draws_every_package():
    """The architecture page's layer table names every package of the code, in its layer."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## The layers", 1)[1].split("\n## ", 1)[0]
    packages = {_package(m) for m in MODULES} - {"__main__", "indexer"}
    missing = sorted(p for p in packages if not re.search(rf"`(indexer/)?{re.escape(p)}(/|\.py)?`", section))
    assert missing == []


# --- private names stay private ------------------------------------------------------
# A `_name` is its module's own: no module of indexer/, tests/ or bench/ imports one from
# another module (`from m import _x`), reads one through another module (`m._x`,
# `setattr(m, "_x", ...)`), or reaches inside an object for a private attribute that a
# module it imports defines (`index._dense`). A module private to its package
# (`_compat.py`) may be imported within that package.
TOP_LEVELS = ("indexer", "tests", "bench")
PRIVATE_EXCEPTIONS: set[tuple[str, str]] = set()  # none: a name another module needs is public


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_names(root: Path, tops: tuple[str, ...]) -> dict[str, Path]:
    """{dotted module name: path} of every module under root/<top> for each top."""
    out = {}
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if any(p.startswith(".") for p in parts):  # bench/.cache: downloaded corpora, not ours
                continue
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _defined_private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines: functions, classes, module or class variables, and
    attributes it assigns (`self._x = ...`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
    return {n for n in found if _private(n)}


def _origin(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    return ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))


def _reexported_from(package: str, name: str, modules: dict[str, Path]) -> str:
    """The module a package's `__init__` takes `name` from (the package itself if none)."""
    path = modules[package]
    if path.name != "__init__.py":
        return package
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            origin = _origin(package, True, node)
            return origin if origin in modules else package
    return package


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _private_module(name: str) -> str | None:
    """The package a private module (`pkg._compat`) is private to, None for a public one."""
    parts = name.split(".")
    first = next((i for i, part in enumerate(parts) if _private(part)), None)
    return None if first is None else ".".join(parts[:first])


def _imports_of(module: str, path: Path, tree: ast.Module, modules: dict[str, Path], tops: tuple[str, ...]):
    """(aliases: local name -> our module, modules it takes names from, private imports
    as (line, name, origin))."""
    is_package = path.name == "__init__.py"
    aliases: dict[str, str] = {}
    imported: set[str] = set()
    private: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in tops:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    imported.add(a.name)
                    owner = _private_module(a.name)
                    if owner is not None and not _inside(module, owner):
                        private.append((node.lineno, a.name, a.name))
        elif isinstance(node, ast.ImportFrom):
            origin = _origin(module, is_package, node)
            if origin not in modules:
                continue
            owner = _private_module(origin)
            if owner is not None and not _inside(module, owner):
                private += [(node.lineno, a.name, origin) for a in node.names]
                continue
            for a in node.names:
                target = f"{origin}.{a.name}"
                if target in modules:  # a module: private ones only inside their package
                    aliases[a.asname or a.name] = target
                    imported.add(target)
                    if _private(a.name) and not _inside(module, origin):
                        private.append((node.lineno, a.name, origin))
                else:
                    imported.add(_reexported_from(origin, a.name, modules))
                    if _private(a.name):
                        private.append((node.lineno, a.name, origin))
    return aliases, imported - {module}, private


def _private_reaches(tree: ast.Module):
    """(line, the expression reached into, the private name) for `x._y` and
    `getattr/setattr/delattr/hasattr(x, "_y", ...)`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            yield node.lineno, node.value, node.attr
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            func = getattr(node.func, "attr", getattr(node.func, "id", ""))
            name = node.args[1]
            if func in ("getattr", "setattr", "delattr", "hasattr") and isinstance(name, ast.Constant) \
                    and isinstance(name.value, str) and _private(name.value):
                yield node.lineno, node.args[0], name.value


def private_uses(root: Path, tops: tuple[str, ...] = TOP_LEVELS) -> list[tuple[str, str, str]]:
    """(where, the private name, the module it belongs to) for every use of another
    module's private name in the modules under root/<top>."""
    modules = _module_names(root, tops)
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in modules.items()}
    defined = {m: _defined_private_names(t) for m, t in trees.items()}
    found = []
    for module, tree in trees.items():
        where = modules[module].relative_to(root).as_posix()
        aliases, imported, private = _imports_of(module, modules[module], tree, modules, tops)
        found += [(f"{where}:{line}", name, origin) for line, name, origin in private]
        for line, target, name in _private_reaches(tree):
            dotted = ast.unparse(target).split(".")
            if dotted[0] in aliases and all(p.isidentifier() for p in dotted):
                owner = ".".join([aliases[dotted[0]], *dotted[1:]])
                if owner in modules:  # m._x, m.sub._x
                    if owner != module:
                        found.append((f"{where}:{line}", name, owner))
                    continue
            if (isinstance(target, ast.Name) and target.id in ("self", "cls")) or name in defined[module]:
                continue
            owners = sorted(m for m in imported if name in defined.get(m, ()))
            if owners:  # an object of a module it imports: obj._x
                found.append((f"{where}:{line}", name, owners[0]))
    return found


def test_no_private_name_is_used_outside_its_module():
    uses = private_uses(PACKAGE.parent)
    assert [u for u in uses if (u[2], u[1]) not in PRIVATE_EXCEPTIONS] == []


def test_the_private_name_check_sees_every_kind_of_use(tmp_path):
    """A check that cannot fail is no check: each way of reaching in is found, and a
    package's private module imported inside the package is not."""
    for rel, text in {
        "pkg/__init__.py": "from .a import Thing\n",
        "pkg/_compat.py": "VALUE = 1\n",
        "pkg/a.py": "from . import _compat\nfrom ._compat import VALUE\n_helper = 1\n\nclass Thing:\n"
                    "    def _inner(self):\n        return self._inner\n",
        "other/__init__.py": "",
        "other/b.py": "import pkg.a\nimport pkg.a as a\nfrom pkg import _compat, Thing\nfrom pkg.a import _helper\n"
                      "x = a._helper + pkg.a._helper\nThing()._inner()\nsetattr(a, '_helper', 2)\n"
                      "from pkg._compat import VALUE\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    found = sorted(private_uses(tmp_path, ("pkg", "other")))
    assert found == [("other/b.py:3", "_compat", "pkg"), ("other/b.py:4", "_helper", "pkg.a"),
                     ("other/b.py:5", "_helper", "pkg.a"), ("other/b.py:5", "_helper", "pkg.a"),
                     ("other/b.py:6", "_inner", "pkg.a"), ("other/b.py:7", "_helper", "pkg.a"),
                     ("other/b.py:8", "VALUE", "pkg._compat")]
