"""A bare symbol query that names a kind (`class Option`, `def option`, `struct Queue`, `fn
drain`, `interface Reader`): of the symbol's definitions, those of that kind first.

`option` names both click's `class Option` (core.py) and its decorator `def option`
(decorators.py); the symbol tier ranked them alike, then by score, and `def option` came
first for `class Option`. A definition is of the kind named when its chunk's header or text
defines the name with one of the kind's words (`core.py · class Option`, a line `class
Option(Parameter):`): the code chunker's headers name every chunk of a class split into its
methods, and a line-start definition answers for chunks cut by any other strategy. The
function words stand for one another (`function option` finds `def option`), and Go's
`type Queue struct` is a `struct Queue`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .index import Ranked

_FUNCTION = ("def", "function", "func", "fn", "fun", "method", "sub")
_VARIABLE = ("const", "let", "var", "static", "final")
# a kind word a query may start with (`exact.bare_symbol` takes the symbol after it) ->
# the words that define that kind
KIND_WORDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("def", "function", "func", "fn", "method"), _FUNCTION),
    **dict.fromkeys(("const", "let", "var"), _VARIABLE),
    "class": ("class",),
    "struct": ("struct",),
    "interface": ("interface",),
    "trait": ("trait",),
    "enum": ("enum",),
    "type": ("type", "typedef"),
    "impl": ("impl",),
}
# what a definition of the kind named adds to its tier: as much as being outside test files
KIND_BONUS = 2


def named_kind(query: str) -> tuple[str, ...]:
    """The words that define the kind a query's first word names (`class Option` ->
    ("class",)), () when it names none."""
    first, _, rest = query.strip().strip("`'\"").partition(" ")
    return KIND_WORDS.get(first.lower(), ()) if rest.strip() else ()


def defines(text: str, words: tuple[str, ...], name: str) -> bool:
    """Whether `text` (a chunk's header and text) defines `name` with one of `words`: the
    word then the name, as a header's label or a definition line (`class Option(`, `func
    (q *Queue) Put(`, `export async function load`), or Go's `type Queue struct`.

    >>> defines("core.py · class Option\\nimports: typing", ("class",), "option")
    True
    >>> defines("def option(*decls):", ("class",), "option")
    False
    >>> defines("type Queue struct {", ("struct",), "queue")
    True
    """
    alternatives = "|".join(map(re.escape, words))
    name = re.escape(name)
    word_then_name = rf"(?:^|[\s·›(])(?:{alternatives})\*?\s+(?:\([^)\n]*\)\s*)?{name}\b"
    go_type = rf"\btype\s+{name}\s+(?:{alternatives})\b"
    pattern = re.compile(f"{word_then_name}|{go_type}", re.IGNORECASE | re.MULTILINE)
    return bool(pattern.search(text))


def kind_first(
    query: str, key: str, definitions: Ranked, texts: Callable[[list[str]], dict[str, str]]
) -> Ranked:
    """`definitions` of the symbol `key` with `KIND_BONUS` added to those of the kind the
    query names (`texts(ids)`: each chunk's header and text); as they were when it names
    none."""
    words = named_kind(query)
    if not words or not definitions:
        return definitions
    name = key.rsplit(".", 1)[-1]
    found = texts([cid for cid, _ in definitions])
    return [
        (cid, bonus + KIND_BONUS if defines(found.get(cid, ""), words, name) else bonus)
        for cid, bonus in definitions
    ]


__all__ = ["KIND_BONUS", "KIND_WORDS", "defines", "kind_first", "named_kind"]
