"""Made-up questions about source code: each targets one definition (function, method,
class) and is asked the way a developer searches — the symbol as typed
(`QueueWorker.drain`), its name split into words with a few words from its doc comment or
body (`parse strategy spec`), or a question built from its doc comment.

Span = the whole definition (with the comments and decorators above it); answer = its
signature line. Test code, dunder methods and definitions of a line or two are not asked
about.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..loaders.symbols import Definition, outline, walk
from ..paths import is_test_file
from ..text.analyzer import detect_language, identifier_parts
from ..types import Document
from .simulate import (
    CONTEXT_CHARS,
    DocumentTerms,
    Knobs,
    Term,
    TermStats,
    draw,
    merge,
    pool,
    query_length,
    source_tags,
)
from .typing_noise import surface

MIN_LINES = 3
_CONTAINERS = {
    "class",
    "struct",
    "interface",
    "trait",
    "impl",
    "type",
    "enum",
    "object",
    "module",
    "record",
}
_COMMENT = re.compile(
    r'"""(.*?)"""|\'\'\'(.*?)\'\'\'|/\*+(.*?)\*/|(?://+|#+|--)[ \t]?([^\n]*)', re.S
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# words of programming languages, not of what the code does
KEYWORDS = set(
    "def class return if elif else for while in is not and or import from as with try except finally raise pass "
    "lambda yield async await self cls none true false null nil undefined function const let var new this "
    "public private protected static void int str bool float string number boolean any object func go package "
    "struct interface type impl fn pub mut use mod match enum trait where err error ctx context throw throws "
    "catch switch case break continue default extends implements super final abstract export require module "
    "args kwargs len list dict set get val value result res ok".split()
)


@dataclass(frozen=True, slots=True)
class Symbol:
    doc_id: str
    symbol: str  # QueueWorker.drain
    name: str  # drain
    parent: str  # QueueWorker
    member: bool  # a member of a class-like definition (asked for as `Class.name`)
    start: int
    end: int
    answer: tuple[int, int]  # the signature line


# a typing overload's stub (`@overload` / `@typing.overload` / `@t.overload` over `def f(...) -> X: ...`):
# one of several signatures, not what a developer looks for
_OVERLOAD = re.compile(r"@(\w+\.)?overload\b")  # searched among a definition's decorators


def symbols(doc: Document) -> list[Symbol]:
    """The definitions of a code document worth a question, in document order."""
    if doc.format != "code" or is_test_file(doc.doc_id):
        return []
    tree = outline(doc)
    if tree is None:
        return []
    out = []
    text = doc.text
    for d in walk(tree.definitions):
        name = d.symbol.rsplit(".", 1)[-1]
        if _skipped(name) or text.count("\n", d.start, d.end) + 1 < MIN_LINES:
            continue
        answer = _signature(text, d.start, d.end, name)
        if answer and not _OVERLOAD.search(text, d.start, answer[0]):  # its own decorators
            member = _is_member(d)
            out.append(
                Symbol(
                    doc.doc_id,
                    d.symbol,
                    name,
                    parent=d.parent,
                    member=member,
                    start=d.start,
                    end=d.end,
                    answer=answer,
                )
            )
    return out


def _skipped(name: str) -> bool:
    """A test, or a dunder method: nobody searches for those."""
    return name.lower().startswith("test") or (name.startswith("__") and name.endswith("__"))


def _is_member(d: Definition) -> bool:
    """A method, or a definition inside a class-like one."""
    if d.category == "method":
        return True
    return len(d.labels) > 1 and d.labels[-2].split(" ", 1)[0] in _CONTAINERS


def _signature(text: str, start: int, end: int, name: str) -> tuple[int, int] | None:
    """The first line of a definition that names it (after its decorators, their string
    arguments and comments)."""
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl == -1 else nl
        line = text[pos:line_end]
        stripped = line.strip()
        if re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", line) and not stripped.startswith(
            ("#", "//", "/*", "*", "@", '"', "'", "`")
        ):
            s = pos + len(line) - len(line.lstrip())
            return (s, s + len(stripped))
        pos = line_end + 1
    return None


def comments(text: str) -> str:
    """The doc comments, docstrings and line comments of a piece of code, as prose."""
    parts = []
    for m in _COMMENT.finditer(text):
        body = next(g for g in m.groups() if g is not None)
        parts.append(re.sub(r"^\s*\*+ ?", "", body, flags=re.M))
    return " ".join(" ".join(parts).split())


def identifiers(text: str) -> str:
    """The words of the identifiers a piece of code uses (`max_bytes` → `max bytes`),
    without the language's own keywords."""
    code = _COMMENT.sub(" ", text)
    words = []
    for ident in _IDENT.findall(code):
        for part in identifier_parts(ident):
            low = part.lower()
            if len(low) > 2 and low not in KEYWORDS and not low.isdigit():
                words.append(low)
    return " ".join(words)


def code_text(text: str) -> str:
    """What a piece of code says in words: its comments and its identifiers' words."""
    return comments(text) + " \n " + identifiers(text)


def code_query(
    rng: random.Random,
    vocab: TermStats,
    knobs: Knobs,
    doc: Document,
    sym: Symbol,
    doc_terms: DocumentTerms,
) -> tuple[str, list[str]] | None:
    """A developer's query for a definition, and how it was made (tags): the symbol as
    typed, or words drawn like a prose query's — from the definition (its doc comment,
    its name, the identifiers it uses), its context (the class it belongs to, the file's
    path, the code around it) and the rest of the file — with one word of its name at least."""
    if rng.random() < knobs.symbol:
        return _symbol_query(rng, doc, sym)
    text = doc.text[sym.start : sym.end]
    prose = comments(text)
    lang = detect_language([prose]) if prose else "en"
    dc = knobs.context_discrimination
    name, own = _own_pools(vocab, knobs.discrimination, text, prose=prose, lang=lang, sym=sym)
    context = _context_pool(vocab, dc, doc, sym, lang)
    for key in own:
        context.pop(key, None)
    pools = {
        "passage": own,
        "context": context,
        "noise": doc_terms.pool(vocab, dc, set(own) | set(context)),
    }
    shares = {
        "passage": knobs.passage,
        "context": max(0.0, 1 - knobs.passage - knobs.code_noise),
        "noise": knobs.code_noise,
    }
    chosen = draw(rng, pools, shares, query_length(rng, knobs.length), knobs.phrase)
    if sum(len(t.surface.split()) for _, t in chosen) < 2:
        return None
    _name_kept(chosen, name)
    words = [t.surface for _, t in chosen]
    question, applied = surface(rng, _code_knobs(knobs, prose), words, prose, "code-" + lang)
    kind = "comment" if prose else "identifiers"
    return question, ["code", kind, *source_tags(chosen), *applied]


def _name_kept(chosen: list[tuple[str, Term]], name: dict[str, Term]) -> None:
    """A developer names what they look for: without a word of the name among the chosen
    terms, the last one gives way to the name's heaviest word."""
    if name and not any(t.key in name for _, t in chosen):
        chosen[-1] = ("passage", max(name.values(), key=lambda t: t.weight))


def _own_pools(
    vocab: TermStats, d: float, text: str, prose: str, lang: str, sym: Symbol
) -> tuple[dict[str, Term], dict[str, Term]]:
    """The terms of a definition's name, and of the whole definition: its comments, the
    identifiers it uses and its name."""
    parts = " ".join(p.lower() for p in identifier_parts(sym.name) if p.strip("_"))
    name = pool(vocab, parts, "en", d, boost=2.0)
    words = merge(pool(vocab, prose, lang, d), pool(vocab, identifiers(text), "en", d, boost=0.5))
    return name, merge(words, name)


def _context_pool(
    vocab: TermStats, dc: float, doc: Document, sym: Symbol, lang: str
) -> dict[str, Term]:
    """The terms of a definition's context: the class it belongs to, the file's path (both
    count more) and the code around it."""
    text = doc.text
    before = text[max(0, sym.start - CONTEXT_CHARS) : sym.start]
    around = before + " \n " + text[sym.end : sym.end + CONTEXT_CHARS]
    path_words = re.findall(r"[A-Za-z]+", doc.doc_id.rsplit(".", 1)[0])
    where = " ".join(identifier_parts(sym.parent)) + " " + " ".join(path_words)
    return merge(pool(vocab, where, "en", dc, boost=2.0), pool(vocab, code_text(around), lang, dc))


def _code_knobs(knobs: Knobs, prose: str) -> Knobs:
    """Code queries keep their identifiers as typed: no dropped inflection, no ASCII
    folding, and a question frame only when there is a comment to ask about."""
    from dataclasses import replace

    return replace(knobs, inflect=0.0, ascii=0.0, question=knobs.question if prose else 0.0)


def _symbol_query(rng: random.Random, doc: Document, sym: Symbol) -> tuple[str, list[str]]:
    """The symbol as a developer types it: `Class.method`, the bare name, or the module's
    name and the symbol (`ratelimit Close`)."""
    forms = [sym.symbol, sym.name] if sym.member else [sym.name]
    folder = doc.doc_id.rsplit("/", 2)
    module = folder[-2] if len(folder) > 1 else doc.doc_id.rsplit(".", 1)[0]
    forms.append(f"{module} {sym.name}")
    return rng.choice(forms), ["code", "name"]
