"""blocks: structure-aware packing of Markdown blocks.

The document is parsed (markdown-it-py) into atomic blocks: headings, paragraphs, fenced
code, tables, lists. Consecutive blocks are packed greedily up to `target` tokens and
never over `hard_max`. A table, list or code block that fits `hard_max` is never cut. A
larger block is split by priority — paragraphs, then sentences, then words; a table
between rows (later parts repeat the header row in `header`, cut
when too long: `text.headrows`), a code block between lines
(later parts repeat the opening fence line), a list between items. A heading never ends
a chunk: it is packed with the block that follows it. The header is the heading path
where the chunk starts, and a `sections:` line naming every section that begins inside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..loaders.markdown import Block, blocks_of
from ..text.headrows import first_line, repeated_header
from ..types import Chunk, Document
from .base import Chunker, Param, header_of
from .packing import PROSE, ROWS, fit, fit_each, lines, pack, sentences, words


@dataclass(frozen=True, slots=True)
class BlockPart:
    start: int
    end: int
    n: int
    kind: str
    level: int = 0  # level of the heading the unit starts with, 0 if none
    extra_header: str = ""  # a continuation part: table header row or code fence line


class BlocksChunker(Chunker):
    kind = "blocks"
    description = "Markdown blocks packed up to `target` tokens; tables, lists and code kept whole"
    params = {
        "target": Param(int, 480, "pack blocks up to this many tokens"),
        "hard_max": Param(int, 512, "no chunk is longer than this"),
        "section_level": Param(
            int, 0, "start a new chunk at headings of this level or higher (0: never)"
        ),
        "name_sections": Param(
            bool, True, "a chunk that spans several sections names each in its header"
        ),
    }
    # the parameters, set from `params` by Chunker.__init__
    target: int
    hard_max: int
    section_level: int
    name_sections: bool

    def validate(self) -> None:
        self.require(self.hard_max >= 16, f"hard_max ({self.hard_max}) must be at least 16")
        self.require(
            1 <= self.target <= self.hard_max,
            f"target ({self.target}) must be between 1 and hard_max ({self.hard_max})",
        )
        self.require(
            0 <= self.section_level <= 6,
            f"section_level ({self.section_level}) must be between 0 and 6",
        )

    def iter_chunks(self, doc: Document) -> Iterator[Chunk]:
        """Chunks made as they are taken: a build holds a batch of them, not a file's
        (on a 50 MB file, a list of every chunk is another copy of its text)."""
        buf: list[BlockPart] = []
        estimate = 0
        for unit in self._units(doc):
            cut = self._cut_before(unit, buf, estimate)
            if cut == "all":
                while buf:  # a continuation part or a new section starts a chunk
                    yield self._flush(doc, buf)
                estimate = 0
            elif cut == "some":
                yield self._flush(doc, buf)
                estimate = sum(u.n + 1 for u in buf)
            buf.append(unit)
            estimate += unit.n + (1 if len(buf) > 1 else 0)
        while buf:
            yield self._flush(doc, buf)

    def _cut_before(self, unit: BlockPart, buf: list[BlockPart], estimate: int) -> str:
        """What goes out before `unit` joins the taken units `buf` (about `estimate`
        tokens): `all` of them (it starts a chunk), `some` (it would pass the target), or
        "" (nothing)."""
        if not buf:
            return ""
        if self._starts_chunk(unit):
            return "all"
        return "some" if estimate + unit.n + 1 > self.target else ""

    def _starts_chunk(self, unit: BlockPart) -> bool:
        """A continuation part (a split table or code block), or a heading at section_level
        or higher (when set), starts a chunk."""
        if unit.extra_header:
            return True
        return bool(self.section_level and unit.level and unit.level <= self.section_level)

    def _flush(self, doc: Document, buf: list[BlockPart]) -> Chunk:
        """The chunk of the longest prefix of `buf` that fits hard_max; the rest stays in `buf`."""
        take = len(buf)
        while True:
            s, e = buf[0].start, buf[take - 1].end
            n = buf[0].n if take == 1 else self.count(doc.text[s:e])
            if n <= self.hard_max or take == 1:
                break
            take -= 1
        units = buf[:take]
        del buf[:take]
        kinds = {u.kind for u in units}
        kind = kinds.pop() if len(kinds) == 1 else "block"
        path = doc.heading_path_at(s)
        header = header_of(
            path,
            units[0].extra_header,
            self._sections_inside(doc, s, e) if self.name_sections else "",
        )
        return self.make_chunk(doc, s, e, kind=kind, header=header, heading_path=path, n_tokens=n)

    @staticmethod
    def _sections_inside(doc: Document, start: int, end: int) -> str:
        """`sections: İade › Süre; Ücretler`: the sections that begin inside a chunk (their
        heading paths without the document title), so a chunk that spans several sections
        says so in its header, not only the section it starts in."""
        # a later top-level heading starts its own path: only the title is left out
        paths = [
            " › ".join(p[1:] if p[0] == doc.title else p)
            for p in (sec.heading_path for sec in doc.sections_starting_in(start, end) if sec.level)
        ]
        paths = [p for p in paths if p]
        return f"sections: {'; '.join(paths)}" if paths else ""

    def _units(self, doc: Document) -> list[BlockPart]:
        """Blocks as packable units of at most hard_max tokens; headings joined to the
        block after them; oversized blocks split into parts."""
        text = doc.text
        units: list[BlockPart] = []
        pending: list[Block] = []
        for block in blocks_of(doc):
            if block.kind == "heading":
                pending.append(block)
                continue
            level = pending[0].level if pending else 0
            start = pending[0].start if pending else block.start
            n = self.count(text[start : block.end])
            if n <= self.hard_max:
                units.append(BlockPart(start, block.end, n, block.kind, level))
                pending = []
                continue
            units.extend(self._split_units(doc, block, pending, level, start))
            pending = []
        if pending:
            units.extend(self._heading_units(doc, pending))
        return units

    def _split_units(
        self, doc: Document, block: Block, pending: list[Block], level: int, start: int
    ) -> list[BlockPart]:
        """An oversized block as units, its headings (`pending`, from `start`) joined to its
        first part, or standing alone when absurdly long or when no part fits beside them."""
        units: list[BlockPart] = []
        head_n = self.count(doc.text[start : pending[-1].end]) if pending else 0
        if head_n > self.hard_max // 2:  # absurdly long headings: let them stand alone
            units.extend(self._heading_units(doc, pending))
            pending, head_n, level, start = [], 0, 0, block.start
        parts, joined, alone = self._parts_beside(doc, block, start, head_n, bool(pending))
        if alone:  # no room left beside the heading: let it stand alone
            units.extend(self._heading_units(doc, pending))
            pending, level, start = [], 0, block.start
        for i, (s, e, k, extra) in enumerate(parts):
            if i == 0 and pending:
                units.append(BlockPart(start, e, joined, block.kind, level))
            else:
                units.append(BlockPart(s, e, k, kind=block.kind, extra_header=extra))
        return units

    def _parts_beside(
        self, doc: Document, block: Block, start: int, head_n: int, headed: bool
    ) -> tuple[list[tuple[int, int, int, str]], int, bool]:
        """The parts of an oversized block, the first one sized to go with its headings
        (`headed`: of `head_n` tokens, from `start`): (parts, tokens of the headings and the
        first part together, whether the headings must stand alone instead)."""
        budget = self.hard_max - head_n - (1 if head_n else 0)
        while True:
            parts = self._split(doc, block, budget)
            if not headed or not parts:
                return parts, 0, False
            # the heading and the first part together: the blank line (and trailing
            # spaces) between them may cost more than the one token budgeted for it
            joined = self.count(doc.text[start : parts[0][1]])
            if joined <= self.hard_max:
                return parts, joined, False
            budget -= joined - self.hard_max
            if budget < 1:
                return self._split(doc, block, self.hard_max), 0, True

    def _heading_units(self, doc: Document, headings: list[Block]) -> list[BlockPart]:
        s, e = headings[0].start, headings[-1].end
        return [
            BlockPart(a, b, k, "heading", headings[0].level)
            for a, b, k in fit(self, doc, s, end=e, limit=self.hard_max, levels=PROSE)
        ]

    def _split(
        self, doc: Document, block: Block, first_limit: int
    ) -> list[tuple[int, int, int, str]]:
        """Parts of an oversized block as (start, end, n_tokens, header line for later parts)."""
        limit = self.hard_max
        text = doc.text
        continuation = ""
        if block.kind in ("table", "code", "list") and block.parts:
            levels = ROWS if block.kind != "list" else (lines, sentences, words)
            spans = pack(
                self,
                doc,
                fit_each(
                    self, doc, block.parts, limit=limit, levels=levels, first_limit=first_limit
                ),
                limit,
                first_limit,
            )
            if block.kind == "table":
                head_start, head_end = block.parts[0]
                continuation = repeated_header(first_line(text, head_start, head_end))
            elif block.kind == "code" and block.info.lstrip().startswith(("```", "~~~")):
                continuation = block.info.strip()
        else:
            spans = fit(
                self,
                doc,
                block.start,
                end=block.end,
                limit=limit,
                levels=PROSE,
                first_limit=first_limit,
            )
        return [(s, e, n, continuation if i else "") for i, (s, e, n) in enumerate(spans)]
