"""The modules a source file imports, and the names each import binds (so a chunk's
header can name the imports that chunk uses)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .syntax import Source, children

if TYPE_CHECKING:
    from tree_sitter import Node

_IMPORT_WORDS = re.compile(r"[A-Za-z_$][\w$]*")
_NOT_NAMES = frozenset(
    "import from as use const let var require extern crate self super static type typeof default package * mod pub".split()
)


def module_imports(
    src: Source, language: str, root: Node
) -> tuple[list[str], dict[str, frozenset[str]]]:
    """Names of the modules a file imports, in order, without repeats; and per module the
    identifiers its import statements mention (`from typing import Any` -> typing, Any;
    `import numpy as np` -> numpy, np), by which a chunk that uses it can be told."""
    names: list[str] = []
    words: dict[str, set[str]] = {}
    for node in children(root):
        found = _imports_of(src, language, node)
        if not found:
            continue
        mentioned = {w for w in _IMPORT_WORDS.findall(src.node_text(node)) if w not in _NOT_NAMES}
        for name in found:
            if not name:
                continue
            if name not in names:
                names.append(name)
            words.setdefault(name, set()).update(mentioned)
    return names, {k: frozenset(v) for k, v in words.items()}


def _imports_of(src: Source, language: str, node: Node) -> list[str]:
    """The modules one top-level statement imports (none for other statements)."""
    reader = _READERS.get(language)
    return reader(src, node) if reader is not None else []


def _python(src: Source, node: Node) -> list[str]:
    if node.type == "import_statement":
        names = node.children_by_field_name("name")
        return [
            src.node_text(c if c.type == "dotted_name" else c.child_by_field_name("name"))
            for c in names
        ]
    if node.type == "import_from_statement":
        module = src.node_text(node.child_by_field_name("module_name"))
        return [] if module == "__future__" else [module]
    return []


def _javascript(src: Source, node: Node) -> list[str]:
    if node.type in ("import_statement", "export_statement"):
        source = node.child_by_field_name("source")
        if source is None:  # TS `import x = require("y")`
            source = _required_in_clause(node)
        return [_string(src, source)] if source is not None else []
    if node.type in ("lexical_declaration", "variable_declaration"):
        return [_string(src, s) for s in _required(node)]
    return []


def _required_in_clause(node: Node) -> Node | None:
    """The string of a TypeScript `import x = require("y")`."""
    clause = next((c for c in node.named_children if c.type == "import_require_clause"), None)
    return next((c for c in clause.named_children if c.type == "string"), None) if clause else None


def _go(src: Source, node: Node) -> list[str]:
    if node.type != "import_declaration":
        return []
    specs = [c for c in node.named_children if c.type == "import_spec"]
    for group in node.named_children:
        if group.type == "import_spec_list":
            specs.extend(c for c in group.named_children if c.type == "import_spec")
    return [_string(src, s.child_by_field_name("path")) for s in specs]


def _rust(src: Source, node: Node) -> list[str]:
    if node.type == "use_declaration":
        return [_rust_root(src, node.child_by_field_name("argument"))]
    if node.type == "extern_crate_declaration":
        return [src.node_text(node.child_by_field_name("name"))]
    return []


def _java(src: Source, node: Node) -> list[str]:
    if node.type != "import_declaration":
        return []
    path = next(
        (c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None
    )
    if path is None:
        return []
    wildcard = any(c.type == "asterisk" for c in node.named_children)
    package = path if wildcard or path.type == "identifier" else path.child_by_field_name("scope")
    return [src.node_text(package or path)]


_READERS: dict[str, Callable[[Source, Node], list[str]]] = {
    "python": _python,
    "javascript": _javascript,
    "typescript": _javascript,
    "tsx": _javascript,
    "go": _go,
    "rust": _rust,
    "java": _java,
}


def _required(node: Node) -> list[Node]:
    """String arguments of `require("x")` initialisers in a declaration."""
    out: list[Node] = []
    for declarator in node.named_children:
        args = _require_arguments(declarator)
        if args is not None:
            out.extend(c for c in args.named_children[:1] if c.type == "string")
    return out


def _require_arguments(declarator: Node) -> Node | None:
    """The arguments of a declarator's `require(...)` initialiser, if it has one."""
    value = (
        declarator.child_by_field_name("value")
        if declarator.type == "variable_declarator"
        else None
    )
    if value is None or value.type != "call_expression":
        return None
    function, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
    if (
        function is not None
        and function.type == "identifier"
        and function.text == b"require"
        and args
    ):
        return args
    return None


def _string(src: Source, node: Node | None) -> str:
    return src.node_text(node).strip("\"'`") if node is not None else ""


def _rust_root(src: Source, node: Node | None) -> str:
    """The first path segment of a `use` argument: `std::io::{self, Write}` -> std."""
    while node is not None and node.type in (
        "scoped_identifier",
        "scoped_use_list",
        "use_as_clause",
        "use_wildcard",
    ):
        nxt = node.child_by_field_name("path")
        node = nxt if nxt is not None else (node.named_children[0] if node.named_children else None)
    return src.node_text(node) if node is not None and node.type != "use_list" else ""
