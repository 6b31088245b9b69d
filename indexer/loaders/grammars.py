"""tree-sitter grammars by language, and the node types each language defines things with.

A grammar comes from its wheel (tree-sitter-python, -javascript, ...) or, with the
`code-all` extra, from tree-sitter-language-pack; no grammar is ever downloaded.
"""

from __future__ import annotations

import importlib
import threading
from functools import lru_cache

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
    "go": {
        "function_declaration": ("function", "func"),
        "method_declaration": ("function", "method"),
    },
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
# nodes that are a function given as a value (`const f = () => ...`, `f = function () {}`)
FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
# the nodes a function's body block is, across the grammars
BODY_BLOCKS = {"block", "statement_block", "compound_statement"}


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
