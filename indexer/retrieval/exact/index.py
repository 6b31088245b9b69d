"""Exact things found exactly: a query's codes and identifiers, and bare symbol names.

Two signals re-rank either side's candidates (`bm25` and `hybrid`; the embedding alone is
left as it is), without touching their scores, for a *lookup* — a query of at most
`LOOKUP_WORDS` words. In a longer question an identifier is one of its words, often naming
something else than what is asked for (`This method is like _.indexOf except that it
performs a binary search`): BM25 (which keeps it whole) and the embedding weigh it there.

- a chunk that holds one of the query's *exact terms* — codes, identifiers, versions, kept
  whole and unstemmed by the analyzer (`E4021`, `QueueWorker.drain`, `v2.3.1`,
  `router.ts`) — in its text or header, or whose file it names, ranks above one that does
  not: one tier per term held;
- a *bare symbol query* (`chunked`, `QueueWorker.drain`, `def drain`, `expand_indent()`)
  puts that symbol's definitions first, those outside test files first of all: a chunk the
  chunker names after it, the first chunk of a class split into its methods, a module-level
  assignment (`DEFAULT_IGNORE = ...`, `export const MAX_RETRIES = 3`); a qualified name
  no chunk is named after (`click.echo_via_pager`, `termui::echo_via_pager`) looks up its
  last part, the definitions whose folder, file or owner a qualifier part names first;
- a *bare code query* (`SEV2`, `error E4021`) puts the chunks that define the code first:
  the code heads a table row, a heading or a line (`| SEV2 | Major feature...`,
  `## E4021: ...`, `SEV2: ...`).

Chunks keep the order of the ranking they came with inside a tier (`exact.rank`). What a collection
defines and which file names it holds live beside it in `exact.json` (`ExactIndex`),
written at build time and rebuilt from the stored records when missing or damaged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ...errors import IndexerError
from ...paths import is_test_file
from ...store import Entry, SideFile, Store
from ...text.analyzer import Analyzer
from ...types import Chunk

FORMAT = (
    3  # 3: definition lines in any chunk of a source file (every strategy answers bare symbols)
)
SIDE = "exact.json"  # the side file (of each version) the index is saved in
LOOKUP_WORDS = 8  # a longer query is a question, not a lookup: no exact-match tiers
_KEYWORDS = (
    r"(?:def|function|func|fn|class|method|struct|type|interface|trait|impl|const|var|let|enum)\s+"
)
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*")
_ASSIGNED = re.compile(  # a module-level assignment or declaration, at the start of a line
    r"^(?:export\s+)?(?:(?:pub(?:\(crate\))?\s+)?(?:const|let|var|static|final)\s+(?:mut\s+)?)?"
    r"([A-Za-z_$][\w$]*)\s*(?::[^=\n]{1,60})?=(?!=)",
    re.MULTILINE,
)
_DEFINITION_LINE = re.compile(  # a definition's first line, at any indentation
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\(crate\))?\s+)?(?:public\s+|private\s+|protected\s+)?"
    r"(?:static\s+)?(?:async\s+)?(?:def|class|function\*?|func(?:\s*\([^)\n]*\))?|fn|interface|struct|trait|enum)"
    r"\s+([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_DEFINIENDUM = re.compile(
    r"^(?:\|\s*|#{1,6}\s+|[-*]\s+)?(?:\*\*|`)?([^\s|`*:]{2,40})(?:\*\*|`)?\s*(?:\||:|\s-\s|$)",
    re.MULTILINE,
)
# what a chunk defines (`defined_in`): (id, its symbol, document, names assigned or defined, codes)
Definition = tuple[str, str, str, list[str], list[str]]
Ranked = list[tuple[str, int]]  # (chunk id, tier or bonus)


def bare_symbol(query: str) -> str:
    """The symbol a query names and nothing else (`QueueWorker.drain`, `def drain`,
    `` `drain()` ``, `Journal::append`), lowercased with `::` and `#` as dots; "" for any
    other query."""
    text = query.strip().strip("`'\"").strip()
    text = re.sub(r"^" + _KEYWORDS, "", text)
    if text.endswith("()"):
        text = text[:-2]
    if not _SYMBOL.fullmatch(text):
        return ""
    return text.replace("::", ".").replace("#", ".").lower()


def symbol_keys(symbol: str) -> list[str]:
    """The keys a definition answers to: its whole name and its last part
    (`QueueWorker.drain` -> `queueworker.drain`, `drain`)."""
    whole = symbol.replace("::", ".").lower()
    last = whole.rsplit(".", 1)[-1]
    return [whole] if last == whole else [whole, last]


def assigned_names(text: str) -> list[str]:
    """Names a code chunk assigns at the start of a line (module level): `NAME = ...`,
    `NAME: int = ...`, `export const NAME =`, `var NAME =`, `pub const NAME: u32 =`.

    >>> assigned_names("import os\\nDEFAULT_IGNORE = 'E121'\\n    inner = 1\\nexport const MAX = 3\\nx == y")
    ['DEFAULT_IGNORE', 'MAX']
    """
    return list(dict.fromkeys(_ASSIGNED.findall(text)))


def defined_codes(text: str, analyzer: Analyzer) -> list[str]:
    """The codes a chunk defines: an exact term heading a table row, a heading, a list item
    or a line followed by a colon (`| SEV2 | ...`, `## E4021: ...`, `SEV2: ...`)."""
    out: list[str] = []
    for unit in _DEFINIENDUM.findall(text):
        for term in analyzer.exact_terms(unit):
            if term not in out:
                out.append(term)
    return out


def definition_lines(text: str) -> list[str]:
    """Names whose definition starts on a line of a piece of source code (`def`, `class`,
    `function`, `func`, `fn`, `interface`, `struct`, `trait`, `enum`), at any indentation.

    >>> definition_lines("x = 1\\n    def drain(self):\\nexport async function load() {}\\nfunc (q *Queue) Put(")
    ['drain', 'load', 'Put']
    """
    return list(dict.fromkeys(_DEFINITION_LINE.findall(text)))


def defined_in(chunk: Chunk, analyzer: Analyzer) -> list[Definition]:
    """What a chunk defines, for `ExactIndex.add`: [(id, its symbol, document, the names a
    code chunk assigns at module level — and, for a chunk of a source file cut by a prose
    strategy (no symbol of its own), the definitions that start in it — the codes a text
    chunk defines)], or [] for nothing."""
    code = is_code(chunk)
    names = _defined_names(chunk) if code else []
    codes = [] if code else defined_codes(chunk.text, analyzer)
    return (
        [(chunk.id, chunk.symbol, chunk.doc_id, names, codes)]
        if chunk.symbol or names or codes
        else []
    )


def is_code(chunk: Chunk) -> bool:
    """Whether a chunk is source code: a code chunker's, or cut from a source file."""
    from ...loaders.formats import format_of

    return bool(chunk.language) or format_of(chunk.doc_id.rsplit("/", 1)[-1])[0] == "code"


def _defined_names(chunk: Chunk) -> list[str]:
    """The names a code chunk assigns at module level (but its own symbol) and, when it has
    no symbol of its own, the definitions that start in it."""
    names = [n for n in assigned_names(chunk.text) if n != chunk.symbol]
    if not chunk.symbol:
        names += [n for n in definition_lines(chunk.text) if n not in names]
    return names


def _bonus(doc_id: str) -> int:
    """A definition's tier bonus: 2 outside test files, 1 inside them."""
    return 1 if is_test_file(doc_id) else 2


@dataclass
class ExactIndex(SideFile):
    """Definitions by symbol key (chunk id, document) and documents by the exact terms of
    their paths (`router.ts`, `001orders.sql`); a side file of its version
    (`store.SideFile`)."""

    SIDE: ClassVar[str] = SIDE

    symbols: dict[str, list[list[str]]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    codes: dict[str, list[str]] = field(default_factory=dict)  # code -> chunk ids that define it

    def add(
        self,
        chunk_id: str,
        symbol: str,
        doc_id: str,
        assigned: Iterable[str] = (),
        codes: Iterable[str] = (),
    ) -> None:
        """A chunk's definitions: its symbol (and, for a member, its owner — the first chunk
        of a class split into methods answers for the class), the names it assigns at
        module level, the codes it defines."""
        for name in [symbol, *assigned] if symbol else assigned:
            for key in symbol_keys(name):
                self.symbols.setdefault(key, []).append([chunk_id, doc_id])
        whole = symbol.replace("::", ".").lower()
        while "." in whole:
            whole = whole.rsplit(".", 1)[0]
            for key in symbol_keys(whole):
                if key not in self.symbols:
                    self.symbols[key] = [[chunk_id, doc_id]]
        for code in codes:
            self.codes.setdefault(code, []).append(chunk_id)

    def name_documents(self, doc_ids: Iterable[str], analyzer: Analyzer) -> None:
        """Which documents each exact term of a path names (replacing what was there)."""
        self.names = {}
        for doc_id in sorted(set(doc_ids)):
            for term in analyzer.exact_terms(doc_id.rsplit("/", 1)[-1]):
                self.names.setdefault(term, []).append(doc_id)

    def without(self, drop: set[str]) -> ExactIndex:
        """A copy without the definitions of the `drop`ped chunk ids (an incremental build)."""
        symbols: dict[str, list[list[str]]] = {}
        for key, defs in self.symbols.items():
            kept = [d for d in defs if d[0] not in drop]
            if kept:
                symbols[key] = kept
        codes: dict[str, list[str]] = {}
        for code, ids in self.codes.items():
            kept_ids = [cid for cid in ids if cid not in drop]
            if kept_ids:
                codes[code] = kept_ids
        return ExactIndex(symbols, dict(self.names), codes)

    def definitions(self, key: str) -> Ranked:
        """(chunk id, definition bonus) of the definitions a bare symbol query names: 2 outside
        test files, 1 inside them, plus 1 per qualifier part that names the definition's
        folder, file or owner.

        - the key itself (`slugify`, `queueworker.drain`);
        - a member no chunk of its own defines (`Journal.append` inside `impl Journal`):
          the definitions of its last part in the files that define its owner (a window
          that holds `def append` in journal.py);
        - a qualified name (`click.echo_via_pager`, `termui.echo_via_pager`): the
          definitions of its longest known suffix, those whose path or owner a qualifier
          part names first (`click/termui.py`);
        - else its owner's (none for a file name: `cart.js`)."""
        if key in self.symbols:
            return [(cid, _bonus(doc)) for cid, doc in self.symbols[key]]
        parts = key.split(".")
        if len(parts) < 2 or self._names_a_file(key):
            return []
        owners = self.symbols.get(self._owner(parts), [])
        found = self._in_files(parts[-1], {doc for _, doc in owners})
        if found:
            return found
        by_suffix = self._by_suffix(parts)
        if by_suffix is not None:
            return by_suffix
        return [(cid, _bonus(doc)) for cid, doc in owners]

    def _in_files(self, key: str, files: set[str]) -> Ranked:
        """The definitions of `key` in these files."""
        return [(cid, _bonus(doc)) for cid, doc in self.symbols.get(key, []) if doc in files]

    def _owner(self, parts: list[str]) -> str:
        """The longest proper prefix of a qualified name's parts that is a known symbol."""
        prefixes = (".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1))
        return next((prefix for prefix in prefixes if prefix in self.symbols), "")

    def _by_suffix(self, parts: list[str]) -> Ranked | None:
        """The definitions of a qualified name's longest known suffix, each scored by the
        qualifier parts that name it (None when no suffix is known)."""
        for i in range(1, len(parts)):
            suffix = ".".join(parts[i:])
            if suffix in self.symbols:
                return [
                    (cid, _bonus(doc) + self._qualified(cid, doc, parts[:i], suffix))
                    for cid, doc in self.symbols[suffix]
                ]
        return None

    def _qualified(self, chunk_id: str, doc_id: str, qualifiers: list[str], suffix: str) -> int:
        """How many qualifier parts name a definition's folder or file (`click/termui.py`
        for `click.termui.echo`) or an owner it is defined under (`Context.invoke`)."""
        path = doc_id.lower().split("/")
        places = set(path[:-1]) | {path[-1].split(".", 1)[0]}
        owned = {
            q
            for q in qualifiers
            if any(d[0] == chunk_id for d in self.symbols.get(f"{q}.{suffix}", ()))
        }
        return sum(1 for q in dict.fromkeys(qualifiers) if q in places or q in owned)

    def _names_a_file(self, key: str) -> bool:
        """Whether a dotted key is a file name (`cart.js`, `test_shell.py`), not a symbol."""
        from ...loaders.formats import format_of

        return key.replace("_", "") in self.names or format_of(key)[0] is not None

    # -- files ----------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        body: dict[str, object] = {
            "format": FORMAT,
            "symbols": self.symbols,
            "names": self.names,
            "codes": self.codes,
        }
        text = json.dumps(body, ensure_ascii=False, sort_keys=True)
        body["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        path.write_text(json.dumps(body, ensure_ascii=False, sort_keys=True), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> ExactIndex:
        """Raises IndexerError when the file is missing, of another format or damaged."""
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            digest = body.pop("sha256")
            text = json.dumps(body, ensure_ascii=False, sort_keys=True)
            if (
                body.get("format") != FORMAT
                or hashlib.sha256(text.encode("utf-8")).hexdigest() != digest
            ):
                raise IndexerError(f"{path} is of another format or damaged")
            return cls(body["symbols"], body["names"], body["codes"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise IndexerError(f"{path} is unreadable ({exc.__class__.__name__})") from None


def load_or_rebuild(store: Store, entry: Entry, analyzer: Analyzer) -> ExactIndex:
    """A live version's ExactIndex from its side folder, or rebuilt from its records (a
    version built before exact.json existed, or a damaged file) and saved where possible."""
    path = store.side.path(entry, SIDE)
    try:
        return ExactIndex.load(path)
    except IndexerError:
        pass
    index, docs = ExactIndex(), set[str]()
    for chunk, _meta in store.records.scan(entry):
        for definition in defined_in(chunk, analyzer):
            index.add(*definition)
        docs.add(chunk.doc_id)
    index.name_documents(docs, analyzer)
    try:
        index.save(path)
    except OSError:
        pass  # read-only index: keep it in memory
    return index


def for_build(
    store: Store,
    previous: Entry | None,
    retired: Iterable[str],
    definitions: Iterable[Definition],
    doc_ids: Iterable[str],
    analyzer: Analyzer,
) -> ExactIndex:
    """A new version's exact-match index: the `previous` version's definitions (an
    incremental build; None for a full one) less the `retired` chunks, plus the new
    `definitions` (`defined_in` of each new chunk); file names from every document of the
    version."""
    index = (
        load_or_rebuild(store, previous, analyzer).without(set(retired))
        if previous is not None
        else ExactIndex()
    )
    for definition in definitions:
        index.add(*definition)
    index.name_documents(doc_ids, analyzer)
    return index
