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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..types import Document
from .grammars import (  # noqa: F401 (re-exported: grammar, parser_for)
    ATTACHED,
    BODY_BLOCKS,
    FUNCTION_VALUES,
    KINDS,
    NAMESPACES,
    WHEELS,
    grammar,
    parser_for,
)
from .syntax import Source, children

if TYPE_CHECKING:
    from tree_sitter import Node


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
    # module -> names its imports bind
    import_names: dict[str, frozenset[str]] = field(default_factory=dict)


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
        defs = scan_definitions(src, doc.language, top_level(root))
        _name_receivers(defs)
        from .imports import module_imports

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


def scan_definitions(
    src: Source, language: str, nodes: list, parent: Definition | None = None
) -> list[Definition]:
    """The definitions among `nodes`, each with its members (a class's, or the functions a
    function defines), nested under `parent`. `language` picks the grammar's rules; one
    without rules gets kinds guessed from its node types."""
    out = []
    for i, node in enumerate(nodes):
        shape = describe(src, language, node)
        if shape is None:
            continue
        category, word = _category(shape, parent)
        owner = parent.symbol if parent else shape.owner
        symbol = f"{owner}.{shape.name}" if owner else shape.name
        labels = (parent.labels if parent else ()) + (shape.label or f"{word} {shape.name}",)
        start = src.char(_attached_start(src, nodes, i))
        d = Definition(
            symbol,
            owner,
            category,
            word=word,
            labels=labels,
            start=start,
            end=src.char(node.end_byte),
        )
        if shape.body is not None:  # class members, or the functions a function defines inside it
            d.members = scan_definitions(src, language, children(shape.body), d)
        out.append(d)
    return out


def _category(shape: Shape, parent: Definition | None) -> tuple[str, str]:
    """A definition's category and word: a function in a class (or with a receiver) is a method."""
    in_class = parent is not None and parent.category == "class" and parent.word not in NAMESPACES
    if shape.category == "function" and (shape.owner or in_class):
        return "method", (
            "method" if shape.word in ("def", "function", "fn", "func") else shape.word
        )
    return shape.category, shape.word


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


def describe(src: Source, language: str, node: Node) -> Shape | None:
    """What a node defines, or None when it is not a definition."""
    t = node.type
    inner = _unwrap(node)
    if inner is not None:
        return _describe_wrapped(src, language, node, inner)
    if t in ("lexical_declaration", "variable_declaration"):
        return _bound_function(src, node)
    if t in ("field_definition", "public_field_definition"):
        return _field_function(src, node)
    if language == "go" and t == "type_declaration":
        return _go_type(src, node)
    kind = _kind(language, t)
    return _defined(src, language, node, kind) if kind is not None else None


def _describe_wrapped(src: Source, language: str, node: Node, inner: Node) -> Shape | None:
    """What the definition inside a wrapper defines (`export default function () {}`
    defines `default`)."""
    shape = describe(src, language, inner)
    if (
        shape is None
        and node.type == "export_statement"
        and inner.type in FUNCTION_VALUES | {"class"}
    ):
        name = _name(src, inner) or "default"
        if inner.type == "class":
            return Shape("class", "class", name, inner.child_by_field_name("body"))
        return Shape("function", "function", name)
    return shape


def _field_function(src: Source, node: Node) -> Shape | None:
    """`handle = (e) => {...}` in a class defines the function handle."""
    value = node.child_by_field_name("value")
    name = node.child_by_field_name("property" if node.type == "field_definition" else "name")
    if value is not None and name is not None and value.type in FUNCTION_VALUES:
        return Shape("function", "function", src.node_text(name))
    return None


def _defined(src: Source, language: str, node: Node, kind: tuple[str, str]) -> Shape | None:
    """The shape of a node of a defining kind (None when it has no name)."""
    t = node.type
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
    return body if body is not None and body.type in BODY_BLOCKS else None


def _kind(language: str, node_type: str) -> tuple[str, str] | None:
    table = KINDS.get(language)
    if table is not None:
        return table.get(node_type)
    return _generic_kind(node_type)


def _generic_kind(node_type: str) -> tuple[str, str] | None:
    """For grammars from the language pack that the tables above do not know."""
    if not node_type.endswith(("_definition", "_declaration", "_item", "_specifier")):
        return None
    for word in (
        "class",
        "struct",
        "interface",
        "trait",
        "enum",
        "impl",
        "namespace",
        "module",
        "object",
    ):
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
    name, value = (
        declarators[0].child_by_field_name("name"),
        _unparenthesized(declarators[0].child_by_field_name("value")),
    )
    if name is None or value is None or name.type != "identifier":
        return None
    if value.type in FUNCTION_VALUES:
        return Shape("function", "function", src.node_text(name), _block(value))
    if value.type == "class":
        return Shape("class", "class", src.node_text(name), value.child_by_field_name("body"))
    return None


def _unparenthesized(node):
    while (
        node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1
    ):
        node = node.named_children[0]
    return node


def wrapped_bodies(node: Node) -> list[Node]:
    """The function bodies an immediately invoked wrapper runs: `(function () {...})()`,
    `;(function () {...}.call(this))`, `!function () {...}()` and UMD's
    `(function (root, factory) {...})(this, function () {...})` — so that a bundled file's
    functions are found as if they were written at top level. [] for anything else."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return []
    call = _invoked_call(node.named_children[0])
    callee = _invoked_callee(call) if call is not None else None
    if call is None or callee is None or callee.type not in FUNCTION_VALUES:
        return []
    bodies = [_block(callee)]
    args = call.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else ():
        arg = _unparenthesized(arg)
        if arg.type in FUNCTION_VALUES:
            bodies.append(_block(arg))
    return [b for b in bodies if b is not None]


def _invoked_call(expr: Node) -> Node | None:
    """The call under parentheses and unary operators (`!function () {...}()`), if any."""
    expr = _unparenthesized(expr)
    while expr is not None and expr.type == "unary_expression":
        expr = _unparenthesized(expr.child_by_field_name("argument"))
    return expr if expr is not None and expr.type == "call_expression" else None


def _invoked_callee(call: Node) -> Node | None:
    """What a call invokes, read through `.call(...)` and `.apply(...)`; None for another
    method call."""
    callee = _unparenthesized(call.child_by_field_name("function"))
    if callee is not None and callee.type == "member_expression":
        prop = callee.child_by_field_name("property")
        if prop is None or prop.text not in (b"call", b"apply"):
            return None
        callee = _unparenthesized(callee.child_by_field_name("object"))
    return callee


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
    label = (
        f"impl {src.node_text(trait)} for {src.node_text(target)}"
        if trait
        else f"impl {src.node_text(target)}"
    )
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
