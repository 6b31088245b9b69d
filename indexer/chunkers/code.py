"""code: one chunk per function, class or method, found with tree-sitter.

A definition (with the decorators, attributes and doc comments directly above it) is a
unit. A class (struct, interface, trait, enum, impl block...) that fits `max_bytes` is one
chunk; a larger one is split into its members (and a larger function into the functions
defined inside it, as in a module written as one closure) — each method a chunk (`Class.method`),
the class signature with its fields and docstring a chunk of its own, fields between
methods merged with their neighbours. Module-level code between definitions (imports,
constants) becomes "module" pieces. Anything under `min_bytes` merges with the unit after
it (at the end of a file or class, the one before) as long as the result fits
`max_bytes`; nothing exceeds `max_bytes` (UTF-8 bytes): a longer unit is cut into windows
of whole lines (a line longer than the cap at character boundaries), each keeping the
unit's symbol. Files without a grammar (SQL, COBOL...) become line windows.

`header` is `path · class QueueWorker · method drain` and an `imports: redis, pino` line
naming the imported modules the chunk uses (`imports=all`: every module the file
imports, as before; `none`: no line); `text` is the code only, an exact slice.

`auto` picks a strategy per file: code -> code, Markdown/HTML -> blocks, text -> headers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..loaders.symbols import Definition, outline
from ..loaders.syntax import Source
from ..text.spans import strip_span
from ..types import Chunk, Document
from .base import Chunker, Param
from .blocks import BlocksChunker
from .headers import HeadersChunker
from .packing import lines

SEP = " · "
_WORDS = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(slots=True)
class Piece:
    """A stripped span about to become a chunk, and what it is."""

    start: int
    end: int
    kind: str  # function, method, class, type, module or lines
    symbol: str = ""
    parent: str = ""
    labels: tuple[str, ...] = ()
    weight: int = 0  # naming priority when pieces merge: bytes of a definition, 0 for module code
    fixed: bool = False  # a part of a split unit: stays where it is


def _delegate(owner: Chunker, cls: type[Chunker]) -> Chunker:
    """A default-parameter chunker of another kind, sharing the owner's name and tokenizer."""
    cache = owner.__dict__.setdefault("_delegates", {})
    if cls not in cache:
        cache[cls] = cls(name=owner.name, tokenizer=owner.tokenizer)
    return cache[cls]


def _prose_chunker(owner: Chunker, doc: Document) -> Chunker:
    return _delegate(owner, BlocksChunker if doc.format in ("markdown", "html") else HeadersChunker)


class CodeChunker(Chunker):
    kind = "code"
    description = (
        "tree-sitter units: functions, classes, methods; small ones merged, long ones windowed"
    )
    params = {
        "min_bytes": Param(int, 200, "a smaller unit merges with a neighbour"),
        "max_bytes": Param(int, 2000, "no chunk is longer than this many UTF-8 bytes"),
        "imports": Param(
            str,
            "used",
            "the header's imports line: the modules the chunk uses, all of the file's, or none",
            ("used", "all", "none"),
        ),
    }
    # the parameters, set from `params` by Chunker.__init__
    min_bytes: int
    max_bytes: int
    imports: str

    def validate(self) -> None:
        self.require(self.max_bytes >= 64, f"max_bytes ({self.max_bytes}) must be at least 64")
        self.require(
            0 <= self.min_bytes <= self.max_bytes,
            f"min_bytes ({self.min_bytes}) must be between 0 and max_bytes ({self.max_bytes})",
        )

    def route(self, doc: Document) -> Chunker:
        """The chunker that handles `doc`: this one for code, blocks or headers for prose."""
        return self if doc.format == "code" else _prose_chunker(self, doc)

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        chunker = self.route(doc)
        yield from chunker.iter_chunks(doc) if chunker is not self else self.chunk(doc)

    def chunk(self, doc: Document) -> list[Chunk]:
        chunker = self.route(doc)
        if chunker is not self:
            return chunker.chunk(doc)
        tree = outline(doc)
        if tree is None:
            src = Source(doc.text)
            pieces = [Piece(s, e, "lines") for s, e in self._windows(src, 0, len(doc.text))]
            return [self._emit(doc, p, []) for p in pieces]
        src = tree.source
        pieces = self._scope(src, 0, len(doc.text), tree.definitions, Piece(0, 0, "module"))
        return [self._emit(doc, p, self._imports(doc, p, tree)) for p in pieces]

    def _imports(self, doc: Document, p: Piece, tree) -> list[str]:
        """The modules named on the header's imports line: all the file's, or (`used`)
        those whose imported names appear in the chunk."""
        if self.imports == "none" or not tree.imports:
            return []
        if self.imports == "all":
            return tree.imports
        words = set(_WORDS.findall(doc.text, p.start, p.end))
        return [m for m in tree.imports if tree.import_names.get(m, frozenset()) & words]

    def _emit(self, doc: Document, p: Piece, imports: list[str]) -> Chunk:
        path = SEP.join((doc.doc_id, *p.labels))
        header = f"{path}\nimports: {', '.join(imports)}" if imports else path
        return self.make_chunk(
            doc,
            p.start,
            p.end,
            kind=p.kind,
            header=header,
            heading_path=(doc.title,),
            n_tokens=None,
            symbol=p.symbol,
            parent_symbol=p.parent,
        )

    # -- units -----------------------------------------------------------------------------
    def _scope(
        self, src: Source, start: int, end: int, units: list[Definition], gap: Piece
    ) -> list[Piece]:
        """Pieces of text[start:end]: each unit, and the code between units described by
        `gap` (module code at top level; signature and fields inside a class)."""
        pieces: list[Piece] = []
        pos = start
        for unit in units:
            pieces.extend(self._gap(src, pos, unit.start, gap))
            pieces.extend(self._unit(src, unit))
            pos = unit.end
        pieces.extend(self._gap(src, pos, end, gap))
        return self._merge(src, pieces)

    def _gap(self, src: Source, start: int, end: int, like: Piece) -> list[Piece]:
        start, end = strip_span(src.text, start, end)
        if start >= end:
            return []
        size = src.size(start, end)
        weight = 0 if like.kind == "module" else size
        if size <= self.max_bytes:
            return [replace(like, start=start, end=end, weight=weight)]
        return [
            replace(like, start=s, end=e, weight=weight, fixed=True)
            for s, e in self._windows(src, start, end)
        ]

    def _unit(self, src: Source, d: Definition) -> list[Piece]:
        start, end = strip_span(src.text, d.start, d.end)
        kind = d.category  # function, method, class or type
        size = src.size(start, end)
        if size <= self.max_bytes:
            return [
                Piece(
                    start, end, kind, symbol=d.symbol, parent=d.parent, labels=d.labels, weight=size
                )
            ]
        members = [m for m in d.members if m.category != "type"]
        if members:  # a class's members, or the functions a large function defines inside it
            parts = self._scope(
                src,
                d.start,
                d.end,
                members,
                Piece(0, 0, kind, symbol=d.symbol, parent=d.parent, labels=d.labels),
            )
            for part in parts:
                part.fixed = True
            return parts
        return [
            Piece(
                s,
                e,
                kind,
                symbol=d.symbol,
                parent=d.parent,
                labels=d.labels,
                weight=size,
                fixed=True,
            )
            for s, e in self._windows(src, start, end)
        ]

    # -- merging small pieces --------------------------------------------------------------
    def _merge(self, src: Source, pieces: list[Piece]) -> list[Piece]:
        """Pieces under min_bytes join the piece after them (or, when that cannot take
        them, the one before) as long as the result fits max_bytes. The parts of a split
        unit (fixed) may take such a neighbour but never leave their unit."""
        out: list[Piece] = []
        pending: Piece | None = None
        for piece in pieces:
            if pending is not None:
                if self._fits(src, pending, piece):
                    piece = _join(pending, piece)
                else:
                    self._settle(src, out, pending)
                pending = None
            if not piece.fixed and src.size(piece.start, piece.end) < self.min_bytes:
                pending = piece
            else:
                out.append(piece)
        if pending is not None:
            self._settle(src, out, pending)
        return out

    def _settle(self, src: Source, out: list[Piece], piece: Piece) -> None:
        """A small piece that cannot join the next one: join the previous one, or stand alone."""
        if out and self._fits(src, out[-1], piece):
            out[-1] = _join(out[-1], piece)
        else:
            out.append(piece)

    def _fits(self, src: Source, a: Piece, b: Piece) -> bool:
        return src.size(a.start, b.end) <= self.max_bytes

    # -- line windows ----------------------------------------------------------------------
    def _windows(self, src: Source, start: int, end: int) -> list[tuple[int, int]]:
        """Groups of whole lines of at most max_bytes, of roughly even size; a line longer
        than max_bytes is cut at character boundaries."""
        start, end = strip_span(src.text, start, end)
        if start >= end:
            return []
        total = src.size(start, end)
        count = -(-total // self.max_bytes)
        target = -(-total // count)
        out: list[tuple[int, int]] = []
        first = last = -1
        for s, e in self._line_pieces(src, start, end):
            if first >= 0 and (
                src.size(first, e) > self.max_bytes or src.size(first, last) >= target
            ):
                out.append((first, last))
                first = -1
            if first < 0:
                first = s
            last = e
        out.append((first, last))
        return out

    def _line_pieces(self, src: Source, start: int, end: int) -> list[tuple[int, int]]:
        out = []
        for s, e in lines(src.text, start, end):
            while src.size(s, e) > self.max_bytes:
                cut = src.cut(s, self.max_bytes)
                a, b = strip_span(src.text, s, cut)
                if a < b:
                    out.append((a, b))
                s, _ = strip_span(src.text, cut, e)
            if s < e:
                out.append((s, e))
        return out


def _join(a: Piece, b: Piece) -> Piece:
    """Two adjacent pieces as one, named after the part of a split unit if one is (the
    other is a guest), else after the weightier."""
    main = a if (a.fixed, a.weight) >= (b.fixed, b.weight) else b
    return replace(main, start=a.start, end=b.end, fixed=a.fixed or b.fixed)


class AutoChunker(Chunker):
    kind = "auto"
    description = "per file: code -> code, Markdown/HTML -> blocks, other text -> headers"
    params = {}

    def route(self, doc: Document) -> Chunker:
        """The chunker that handles `doc`, with default parameters and this chunker's name."""
        return _delegate(self, CodeChunker) if doc.format == "code" else _prose_chunker(self, doc)

    def chunk(self, doc: Document) -> list[Chunk]:
        return self.route(doc).chunk(doc)

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        yield from self.route(doc).iter_chunks(doc)  # streamed as the routed strategy streams
