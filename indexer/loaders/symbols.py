"""Source code as tree-sitter sees it: grammars, definitions with their symbols, imports.

`outline(doc)` parses a code document (grammar chosen from `doc.language`) and lists its
definitions — functions, classes and their kin (structs, interfaces, traits, enums, impl
blocks), methods — each with its symbol (`QueueWorker.drain`, Go `Limiter.Allow`, Rust
`impl X { fn y }` -> `X.y`), the words a header names it by (`class QueueWorker`,
`method drain`) and its character span, which includes the decorators, attributes and
doc comments directly above it. It also lists the module names the file imports.
`symbol_span(doc, symbol)` finds one definition by the symbol a question set names.

tree-sitter reports UTF-8 byte offsets; `Source` maps them to the character offsets of
the Python string so spans stay exact for non-ASCII text. Parse errors never raise: code
inside ERROR nodes stays in the gaps between definitions (definitions found inside an
ERROR node are still listed).
"""

from __future__ import annotations

import importlib
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..types import Document

# language name (as the loader spells it) -> (grammar wheel, its loader function)
WHEELS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}

_JS = {
    "function_declaration": ("function", "function"),
    "generator_function_declaration": ("function", "function"),
    "class_declaration": ("class", "class"),
    "class": ("class", "class"),
    "method_definition": ("function", "method"),
}
_TS = {
    **_JS,
    "abstract_class_declaration": ("class", "class"),
    "interface_declaration": ("class", "interface"),
    "enum_declaration": ("class", "enum"),
    "type_alias_declaration": ("type", "type"),
    "internal_module": ("class", "namespace"),
    "module": ("class", "module"),
    "method_signature": ("function", "method"),
    "abstract_method_signature": ("function", "method"),
}
# node type -> (category, the word a header uses); categories: function, class, type
KINDS: dict[str, dict[str, tuple[str, str]]] = {
    "python": {"function_definition": ("function", "def"), "class_definition": ("class", "class")},
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": {"function_declaration": ("function", "func"), "method_declaration": ("function", "method")},
    "rust": {
        "function_item": ("function", "fn"),
        "function_signature_item": ("function", "fn"),
        "struct_item": ("class", "struct"),
        "enum_item": ("class", "enum"),
        "union_item": ("class", "union"),
        "trait_item": ("class", "trait"),
        "impl_item": ("class", "impl"),
        "mod_item": ("class", "mod"),
        "type_item": ("type", "type"),
        "macro_definition": ("function", "macro_rules!"),
    },
    "java": {
        "class_declaration": ("class", "class"),
        "interface_declaration": ("class", "interface"),
        "enum_declaration": ("class", "enum"),
        "record_declaration": ("class", "record"),
        "annotation_type_declaration": ("class", "@interface"),
        "method_declaration": ("function", "method"),
        "constructor_declaration": ("function", "constructor"),
        "compact_constructor_declaration": ("function", "constructor"),
    },
}
# nodes directly above a definition that belong to it
ATTACHED = {"comment", "line_comment", "block_comment", "attribute_item", "decorator"}
# nodes whose children are read as if they were siblings
TRANSPARENT = {"ERROR", "enum_body_declarations"}
# containers whose functions stay functions (not methods)
NAMESPACES = {"namespace", "module", "mod"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
_BLOCKS = {"block", "statement_block", "compound_statement"}


# -- grammars ------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def grammar(language: str):
    """The tree-sitter Language for a language name, or None when no grammar is installed:
    the grammar wheel first, then `tree_sitter_language_pack` if that extra is installed."""
    from tree_sitter import Language

    if language in WHEELS:
        module, loader = WHEELS[language]
        try:
            return Language(getattr(importlib.import_module(module), loader)())
        except (ImportError, AttributeError, ValueError):  # missing, or built for another ABI
            pass
    try:
        from tree_sitter_language_pack import get_language
    except ImportError:
        return None
    try:
        lang = get_language(language)
        return lang if isinstance(lang, Language) else Language(lang)
    except Exception:  # unknown to the pack (LookupError, KeyError...) or unusable: no grammar
        return None


_local = threading.local()


def parser_for(language: str):
    """A cached parser (one per thread: tree-sitter parsers are not thread-safe)."""
    parsers = _local.__dict__.setdefault("parsers", {})
    if language not in parsers:
        lang = grammar(language) if language else None
        if lang is None:
            parsers[language] = None
        else:
            from tree_sitter import Parser

            parsers[language] = Parser(lang)
    return parsers[language]


# -- offsets -------------------------------------------------------------------------------
class Source:
    """A document's text with its UTF-8 bytes, mapping byte offsets to character offsets."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.ascii = len(self.data) == len(text)
        if not self.ascii:
            starts = (np.frombuffer(self.data, dtype=np.uint8) & 0xC0) != 0x80
            self._to_char = np.concatenate(([0], np.cumsum(starts)))
            self._to_byte = np.append(np.flatnonzero(starts), len(self.data))

    def char(self, byte: int) -> int:
        return byte if self.ascii else int(self._to_char[byte])

    def byte(self, char: int) -> int:
        return char if self.ascii else int(self._to_byte[char])

    def size(self, start: int, end: int) -> int:
        """UTF-8 bytes of text[start:end]."""
        return self.byte(end) - self.byte(start)

    def cut(self, start: int, limit: int) -> int:
        """The furthest character offset whose slice from `start` fits `limit` bytes."""
        if self.ascii:
            return min(start + limit, len(self.text))
        return int(np.searchsorted(self._to_byte, self.byte(start) + limit, side="right")) - 1

    def node_text(self, node) -> str:
        return self.text[self.char(node.start_byte) : self.char(node.end_byte)]


# -- definitions ---------------------------------------------------------------------------
@dataclass
class Definition:
    """A function, class (or kin) or method, with its span in characters."""

    symbol: str
    parent: str  # the enclosing definition's symbol ("" at top level)
    category: str  # function | method | class | type
    word: str  # what the language calls it: def, fn, struct, impl, method...
    labels: tuple[str, ...]  # header words: ("class QueueWorker", "method drain")
    start: int
    end: int
    members: list[Definition] = field(default_factory=list)


@dataclass
class Outline:
    source: Source
    definitions: list[Definition]  # top level, in document order
    imports: list[str]
    import_names: dict[str, frozenset[str]] = field(default_factory=dict)  # module -> names its imports bind


@dataclass(frozen=True, slots=True)
class Shape:
    category: str
    word: str
    name: str
    body: object = None  # the node holding a container's members
    label: str = ""  # when the header says more than `word name` (Rust trait impls)
    owner: str = ""  # Go receiver type


def outline(doc: Document) -> Outline | None:
    """Parse a code document; None when its language has no grammar (cached on the doc)."""
    if doc.derived.outline_done:
        return doc.derived.outline
    parser = parser_for(doc.language)
    result = None
    if parser is not None and doc.format == "code":
        src = Source(doc.text)
        root = parser.parse(src.data).root_node
        defs = _scan(src, doc.language, top_level(root), None)
        _name_receivers(defs)
        imports, names = module_imports(src, doc.language, root)
        result = Outline(src, defs, imports, names)
    doc.derived.outline, doc.derived.outline_done = result, True
    return result


def top_level(root) -> list:
    """A file's top-level statements, reading through immediately invoked wrappers."""
    out = []
    for node in children(root):
        bodies = wrapped_bodies(node)
        if bodies:
            for body in bodies:
                out.extend(top_level(body))
        else:
            out.append(node)
    return out


def children(node) -> list:
    """A node's children, reading through ERROR nodes and Java enum declaration lists."""
    out = []
    for child in node.children:
        if child.type in TRANSPARENT:
            out.extend(children(child))
        else:
            out.append(child)
    return out


def _scan(src: Source, language: str, nodes: list, parent: Definition | None) -> list[Definition]:
    out = []
    for i, node in enumerate(nodes):
        shape = describe(src, language, node)
        if shape is None:
            continue
        category, word = shape.category, shape.word
        in_class = parent is not None and parent.category == "class" and parent.word not in NAMESPACES
        if category == "function" and (shape.owner or in_class):
            category, word = "method", ("method" if word in ("def", "function", "fn", "func") else word)
        owner = parent.symbol if parent else shape.owner
        symbol = f"{owner}.{shape.name}" if owner else shape.name
        labels = (parent.labels if parent else ()) + (shape.label or f"{word} {shape.name}",)
        start = src.char(_attached_start(src, nodes, i))
        d = Definition(symbol, owner, category, word, labels, start, src.char(node.end_byte))
        if shape.body is not None:  # class members, or the functions a function defines inside it
            d.members = _scan(src, language, children(shape.body), d)
        out.append(d)
    return out


def _attached_start(src: Source, nodes: list, i: int) -> int:
    """Start byte of nodes[i] extended over comments, decorators and attributes directly
    above it (no blank line between, each starting its own line)."""
    start = nodes[i].start_byte
    j = i
    while j > 0 and nodes[j - 1].type in ATTACHED:
        prev = nodes[j - 1]
        if src.data.count(b"\n", prev.end_byte, start) > 1:
            break
        line_start = src.data.rfind(b"\n", 0, prev.start_byte) + 1
        if src.data[line_start : prev.start_byte].strip():
            break  # a trailing comment of the code before it
        start, j = prev.start_byte, j - 1
    return start


def _name_receivers(defs: list[Definition]) -> None:
    """Go methods live outside their type: name the type in their header as the file
    declares it (`struct Limiter`), or `type Limiter` when it is declared elsewhere."""
    words = {d.symbol: d.word for d in defs if d.category in ("class", "type")}
    for d in defs:
        if d.category == "method" and d.parent and len(d.labels) == 1:
            d.labels = (f"{words.get(d.parent, 'type')} {d.parent}",) + d.labels


def describe(src: Source, language: str, node) -> Shape | None:
    """What a node defines, or None when it is not a definition."""
    t = node.type
    inner = _unwrap(node)
    if inner is not None:
        shape = describe(src, language, inner)
        if shape is None and t == "export_statement" and inner.type in _FUNCTION_VALUES | {"class"}:
            name = _name(src, inner) or "default"  # `export default function () {}`
            if inner.type == "class":
                return Shape("class", "class", name, inner.child_by_field_name("body"))
            return Shape("function", "function", name)
        return shape
    if t in ("lexical_declaration", "variable_declaration"):
        return _bound_function(src, node)
    if t in ("field_definition", "public_field_definition"):  # `handle = (e) => {...}` in a class
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("property" if node.type == "field_definition" else "name")
        if value is not None and name is not None and value.type in _FUNCTION_VALUES:
            return Shape("function", "function", src.node_text(name))
        return None
    if language == "go" and t == "type_declaration":
        return _go_type(src, node)
    kind = _kind(language, t)
    if kind is None:
        return None
    body = node.child_by_field_name("body") if kind[0] == "class" else None
    if t == "impl_item":
        return _rust_impl(src, node, body)
    name = _name(src, node)
    if name is None:
        return None
    if t == "method_declaration" and language == "go":
        owner = _type_name(src, node.child_by_field_name("receiver"))
        return Shape("function", "method" if owner else "func", name, owner=owner)
    if kind[0] == "function":
        body = _block(node)
    return Shape(kind[0], kind[1], name, body)


def _block(function):
    """The statement block of a function (None for an expression body or a signature)."""
    body = function.child_by_field_name("body")
    return body if body is not None and body.type in _BLOCKS else None


def _kind(language: str, node_type: str) -> tuple[str, str] | None:
    table = KINDS.get(language)
    if table is not None:
        return table.get(node_type)
    return _generic_kind(node_type)


def _generic_kind(node_type: str) -> tuple[str, str] | None:
    """For grammars from the language pack that the tables above do not know."""
    if not node_type.endswith(("_definition", "_declaration", "_item", "_specifier")):
        return None
    for word in ("class", "struct", "interface", "trait", "enum", "impl", "namespace", "module", "object"):
        if word in node_type:
            return "class", word
    if "function" in node_type or "method" in node_type:
        return "function", "function"
    return None


def _unwrap(node):
    """The definition inside a wrapper node (decorators, `export`, `declare`, a TS
    namespace statement), or None when the node is not a wrapper."""
    t = node.type
    if t == "decorated_definition":
        return node.child_by_field_name("definition")
    if t == "export_statement":
        return node.child_by_field_name("declaration") or node.child_by_field_name("value")
    if t in ("ambient_declaration", "expression_statement") and node.named_child_count == 1:
        inner = node.named_children[0]
        return inner if t == "ambient_declaration" or inner.type == "internal_module" else None
    return None


def _name(src: Source, node) -> str | None:
    target = node.child_by_field_name("name")
    if target is None:  # C-like grammars: the name sits at the end of a declarator chain
        target = node.child_by_field_name("declarator")
        while target is not None and target.child_by_field_name("declarator") is not None:
            target = target.child_by_field_name("declarator")
        if target is not None and not target.type.endswith("identifier"):
            target = None
    return src.node_text(target).strip("\"'") if target is not None else None


def _bound_function(src: Source, node) -> Shape | None:
    """`const f = () => {...}` and `const C = class {...}` define f and C."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None
    name, value = declarators[0].child_by_field_name("name"), _unparenthesized(declarators[0].child_by_field_name("value"))
    if name is None or value is None or name.type != "identifier":
        return None
    if value.type in _FUNCTION_VALUES:
        return Shape("function", "function", src.node_text(name), _block(value))
    if value.type == "class":
        return Shape("class", "class", src.node_text(name), value.child_by_field_name("body"))
    return None


def _unparenthesized(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def wrapped_bodies(node) -> list:
    """The function bodies an immediately invoked wrapper runs: `(function () {...})()`,
    `;(function () {...}.call(this))`, `!function () {...}()` and UMD's
    `(function (root, factory) {...})(this, function () {...})` — so that a bundled file's
    functions are found as if they were written at top level. [] for anything else."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return []
    expr = _unparenthesized(node.named_children[0])
    while expr is not None and expr.type == "unary_expression":
        expr = _unparenthesized(expr.child_by_field_name("argument"))
    if expr is None or expr.type != "call_expression":
        return []
    callee = _unparenthesized(expr.child_by_field_name("function"))
    if callee is not None and callee.type == "member_expression":
        prop = callee.child_by_field_name("property")
        if prop is None or prop.text not in (b"call", b"apply"):
            return []
        callee = _unparenthesized(callee.child_by_field_name("object"))
    if callee is None or callee.type not in _FUNCTION_VALUES:
        return []
    bodies = [_block(callee)]
    args = expr.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else ():
        arg = _unparenthesized(arg)
        if arg.type in _FUNCTION_VALUES:
            bodies.append(_block(arg))
    return [b for b in bodies if b is not None]


def _go_type(src: Source, node) -> Shape | None:
    specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
    if not specs:
        return None
    name = src.node_text(specs[0].child_by_field_name("name"))
    value = specs[0].child_by_field_name("type")
    if len(specs) == 1 and value is not None and value.type in ("struct_type", "interface_type"):
        return Shape("class", value.type.split("_")[0], name)
    return Shape("type", "type", name)


def _rust_impl(src: Source, node, body) -> Shape:
    target, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
    label = f"impl {src.node_text(trait)} for {src.node_text(target)}" if trait else f"impl {src.node_text(target)}"
    return Shape("class", "impl", _type_name(src, target), body, label)


def _type_name(src: Source, node) -> str:
    """The named type in a type expression: `*Limiter[T]` -> Limiter, `Foo<T>` -> Foo."""
    if node is None:
        return ""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "type_identifier":
            return src.node_text(current)
        stack.extend(reversed(current.named_children))
    return src.node_text(node)


def walk(defs: list[Definition]):
    for d in defs:
        yield d
        yield from walk(d.members)


def symbol_span(doc: Document, symbol: str) -> tuple[int, int] | None:
    """Character span of the definition a question set names `function_name`,
    `ClassName`, `ClassName.method` or, for a Go receiver method, `Limiter.Allow`
    (`::` and `#` are read as `.`). The first definition wins; None when absent."""
    tree = outline(doc)
    if tree is None:
        return None
    wanted = symbol.strip().replace("::", ".").replace("#", ".")
    for d in walk(tree.definitions):
        if d.symbol == wanted:
            return d.start, d.end
    return None


# -- imports -------------------------------------------------------------------------------
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
