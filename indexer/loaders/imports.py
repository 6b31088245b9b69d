"""The modules a source file imports, and the names each import binds (so a chunk's
header can name the imports that chunk uses)."""

from __future__ import annotations

import re

from .syntax import Source, children

_IMPORT_WORDS = re.compile(r"[A-Za-z_$][\w$]*")
_NOT_NAMES = frozenset(
    "import from as use const let var require extern crate self super static type typeof default package * mod pub"
    .split()
)


def module_imports(src: Source, language: str, root) -> tuple[list[str], dict[str, frozenset[str]]]:
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
            if name and name not in names:
                names.append(name)
            if name:
                words.setdefault(name, set()).update(mentioned)
    return names, {k: frozenset(v) for k, v in words.items()}


def _imports_of(src: Source, language: str, node) -> list[str]:
    t = node.type
    if language == "python":
        if t == "import_statement":
            names = node.children_by_field_name("name")
            return [src.node_text(c if c.type == "dotted_name" else c.child_by_field_name("name")) for c in names]
        if t == "import_from_statement":
            module = src.node_text(node.child_by_field_name("module_name"))
            return [] if module == "__future__" else [module]
    elif language in ("javascript", "typescript", "tsx"):
        if t in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
            if source is None:  # TS `import x = require("y")`
                clause = next((c for c in node.named_children if c.type == "import_require_clause"), None)
                source = next((c for c in clause.named_children if c.type == "string"), None) if clause else None
            return [_string(src, source)] if source is not None else []
        if t in ("lexical_declaration", "variable_declaration"):
            return [_string(src, s) for s in _required(node)]
    elif language == "go" and t == "import_declaration":
        specs = [c for c in node.named_children if c.type == "import_spec"]
        for group in node.named_children:
            if group.type == "import_spec_list":
                specs.extend(c for c in group.named_children if c.type == "import_spec")
        return [_string(src, s.child_by_field_name("path")) for s in specs]
    elif language == "rust":
        if t == "use_declaration":
            return [_rust_root(src, node.child_by_field_name("argument"))]
        if t == "extern_crate_declaration":
            return [src.node_text(node.child_by_field_name("name"))]
    elif language == "java" and t == "import_declaration":
        path = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        if path is None:
            return []
        wildcard = any(c.type == "asterisk" for c in node.named_children)
        package = path if wildcard or path.type == "identifier" else path.child_by_field_name("scope")
        return [src.node_text(package or path)]
    return []


def _required(node) -> list:
    """String arguments of `require("x")` initialisers in a declaration."""
    out = []
    for declarator in node.named_children:
        value = declarator.child_by_field_name("value") if declarator.type == "variable_declarator" else None
        if value is None or value.type != "call_expression":
            continue
        function, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
        if function is not None and function.type == "identifier" and function.text == b"require" and args:
            out.extend(c for c in args.named_children[:1] if c.type == "string")
    return out


def _string(src: Source, node) -> str:
    return src.node_text(node).strip("\"'`") if node is not None else ""


def _rust_root(src: Source, node) -> str:
    """The first path segment of a `use` argument: `std::io::{self, Write}` -> std."""
    while node is not None and node.type in ("scoped_identifier", "scoped_use_list", "use_as_clause", "use_wildcard"):
        nxt = node.child_by_field_name("path")
        node = nxt if nxt is not None else (node.named_children[0] if node.named_children else None)
    return src.node_text(node) if node is not None and node.type != "use_list" else ""
