"""Question sets made from a user's own documents (`indexer questions`).

`make_questions(paths, n)` loads the documents (every format the loaders read), lists the
passages a question can target (prose: sentences, list items, table rows, minus
boilerplate; code: definitions), spreads `n` questions over the documents in proportion to
the text they hold that is worth asking about, and makes one question per chosen passage:
offline by simulating a searcher's known-item query (`simulate`, `code`), or
with an LLM through Ollama (`llm`). The result is deterministic for a seed.
Every question carries a span target and an answer that is an exact substring of its
document, so `indexer eval` resolves it like a set people wrote.

`reuse.cached_questions` keeps a made set and reuses it while the documents are the same.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from ..errors import NothingToIndex, UsageError
from ..loaders import Discovery, Skipped, load_documents
from ..settings import DEFAULT_MAX_FILE_SIZE, Settings, settings_for
from ..text.analyzer import detect_language
from ..types import Document
from .code import Symbol, code_query, code_text, symbols
from .passages import MIN_WORDS_ALONE, Passage, boilerplate_reason, passages
from .simulate import DocumentTerms, Knobs, TermStats, prose_query

if TYPE_CHECKING:
    from .llm import OllamaQuestioner

# what a question can target: a prose passage or a code definition
Target = Passage | Symbol

# 2: the tuned knobs as defaults; 3: retuned with code's own share and typing noise;
# 4: no questions about lines standing for headings or about a paper's credits; 5: licence
# files named by their id (Apache-2.0.txt, BSD) and BSD/Apache texts are skipped; 6: no
# questions about a line leading into code ("run:"), a pointer ("See X for details."), a
# man page's colophon or a README's licence grant; 7: nor a lead-in to a list or table, a
# copyright or "Written by" line, a sentence about the document itself ("This page
# describes ..."), a pointer to full documentation or a bug-report address, or a section
# on reporting bugs or on the authors; 8: nor a plain-text lead-in (before an indented or
# bulleted paragraph) or one to a quoted block, a texinfo page's navigation line, or a man
# page's running header or footer, an entry of a reference list ("F. Cusack and M. Forssen,
# ..., RFC 4256, January 2006.") or a section of bug reports; 9: a lead-in that ends a
# longer paragraph (its other sentences stay targets), nor a command at a shell prompt; 10:
# a query's context words come from the passage's paragraph, not across blank lines; 11: no
# sentence ending in a colon (an option entry excepted), contact or credit lines (names and
# e-mail addresses, thanks, who funded it), licence sentences ("WITHOUT ANY WARRANTY"),
# org-mode headings of plain text, passages over 3,000 characters, typing overload stubs;
# a hard-wrapped list item is one passage, and a code answer is never a decorator's string; 12:
# a "Contents" heading skips its own section only (a Sphinx page nests its text under one),
# CREDITS/THANKS/MAINTAINERS files are credits, and `<name@MASKED>` is an address; 13: a plain-
# text title line (a title-cased line, a question heading, or one over its text) is no target
GENERATOR_VERSION = 14


@dataclass(kw_only=True)
class QuestionSet:
    """Made-up questions (records in the question-set format) and what making them found."""

    questions: list[dict[str, Any]]
    requested: int
    generator: str
    seed: int
    documents: int = 0
    candidates: int = 0  # passages and definitions a question could target
    skipped: list[Skipped] = field(default_factory=list)  # files not read, and documents left out
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # files read with a warning (an encoding guessed)
    warnings: list[Skipped] = field(default_factory=list)
    sets: int = 1  # made-up sets pooled in this one (seeds seed, seed + 1, ...)

    @property
    def shortfall(self) -> str:
        """Why fewer questions were made than asked for ("" when there are enough)."""
        if len(self.questions) >= self.requested:
            return ""
        if self.sets > 1:  # pooled made-up sets (`eval --generate`): say what each one asked
            each = self.requested // self.sets
            return (
                f"made {len(self.questions)} of the {self.requested} questions asked for ({each} from each of "
                f"{self.sets} made-up sets): the documents hold {self.candidates} passages worth a question, "
                "and each set asks about them all"
            )
        return (
            f"made {len(self.questions)} of the {self.requested} questions asked for: the documents hold "
            f"{self.candidates} passages worth a question"
        )

    def to_jsonl(self) -> str:
        return "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in self.questions)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the set as JSON lines, atomically (a reader never sees half a file)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(self.to_jsonl(), encoding="utf-8")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def make_questions(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    n: int = 60,
    *,
    seed: int = 0,
    llm: str = "extractive",
    knobs: Knobs | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    encoding: str | None = None,
    settings: Settings | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> QuestionSet:
    """Make `n` questions from the documents under `paths` (see the module docstring).
    Fewer come back when the documents hold fewer passages worth a question, or when an
    LLM's replies fail validation (`QuestionSet.shortfall` says so); documents without a
    single passage worth a question are an error. `settings`: the Ollama host and the
    index folder whose cache keeps an LLM's replies (`llm="ollama:<model>"`)."""
    t0 = time.perf_counter()
    paths = path_list(paths)
    if not isinstance(n, int) or n < 1:
        raise UsageError(f"the number of questions must be a positive whole number, not {n!r}")
    asker = _asker(llm, settings_for(settings))
    knobs = knobs or Knobs()
    found, stream = load_documents(paths, include, exclude, max_file_size, encoding=encoding)
    docs, left_out = _worth_asking(stream)
    where = ", ".join(str(p) for p in paths)
    if not docs:
        raise _no_documents(paths, found, left_out, where)
    targets = _all_targets(docs, knobs.section_words, where)
    vocab = _vocabulary(docs, targets)
    makers = {
        d.doc_id: _DocumentMaker(d, targets[d.doc_id], seed, vocab=vocab, knobs=knobs, asker=asker)
        for d in docs
    }
    out = _numbered(_fill(docs, targets, makers, n, progress))
    candidates = sum(len(t) for t in targets.values())
    result = QuestionSet(
        questions=out,
        requested=n,
        generator=llm,
        seed=seed,
        documents=len(docs),
        candidates=candidates,
        skipped=found.skipped + left_out,
    )
    result.warnings = list(found.warnings)
    if asker is not None:
        result.notes.append(asker.stats.summary())
    result.seconds = time.perf_counter() - t0
    return result


def path_list(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
) -> list[str | os.PathLike[str]]:
    """One path or several, as a list."""
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def _all_targets(docs: list[Document], section_words: int, where: str) -> dict[str, list[Target]]:
    """Each document's targets; an error when no document has any."""
    targets = {doc.doc_id: _targets(doc, section_words) for doc in docs}
    if not any(targets.values()):
        raise NothingToIndex(
            f"no passage worth a question in {where}: {len(docs)} document(s), but "
            "only headings, code blocks, link lists, licence text, test code or lines "
            f"under {MIN_WORDS_ALONE} words"
        )
    return targets


def _targets(doc: Document, section_words: int) -> list[Target]:
    """What a document's questions can target: its prose passages, or its definitions."""
    found: list[Target] = list(passages(doc, section_words))
    return found or list(symbols(doc))


def _worth_asking(stream: Iterable[Document]) -> tuple[list[Document], list[Skipped]]:
    """The documents worth asking about, and those left out (licences, authors lists)."""
    docs: list[Document] = []
    left_out: list[Skipped] = []
    for doc in stream:
        reason = boilerplate_reason(doc)
        if reason:
            left_out.append(Skipped(doc.doc_id, f"not asked about: {reason}"))
        else:
            docs.append(doc)
    return docs, left_out


def _no_documents(
    paths: list[str | os.PathLike[str]], found: Discovery, left_out: list[Skipped], where: str
) -> NothingToIndex:
    """The error when no document is left to ask about: why none was read, or why the
    first one read was left out."""
    if left_out:
        first = left_out[0]
        return NothingToIndex(
            f"no documents to ask about in {where}: "
            f"{first.doc_id} is {first.reason.split(': ', 1)[1]}"
        )
    from ..indexing.pipeline import nothing_message

    message = nothing_message(paths, found)
    return NothingToIndex(
        message.replace("nothing to index", "no documents to ask about"), found.skipped
    )


def _fill(
    docs: list[Document],
    targets: dict[str, list[Target]],
    makers: dict[str, _DocumentMaker],
    n: int,
    progress: Callable[[str, int], None] | None,
) -> list[dict[str, Any]]:
    """Up to `n` question records over the documents in proportion to the text worth
    asking about; a document that fails to fill its share passes the rest on to the others."""
    sizes = {d.doc_id: sum(t.end - t.start for t in targets[d.doc_id]) for d in docs}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(out) < n:
        counts = allocate(sizes, {k: m.left for k, m in makers.items()}, n - len(out))
        if not any(counts.values()):
            break
        for doc in docs:
            if counts.get(doc.doc_id):
                out.extend(makers[doc.doc_id].make(counts[doc.doc_id], seen))
                if progress:
                    progress(doc.doc_id, makers[doc.doc_id].made)
    return out


def _numbered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records in document order, numbered g0001, g0002, ... (the id first)."""
    records.sort(key=lambda q: (q["doc_id"], q["span"][0]))
    for i, q in enumerate(records, start=1):
        q["id"] = f"g{i:04d}"
    return [{"id": q.pop("id"), **q} for q in records]


class _DocumentMaker:
    """Questions from one document's candidates, tried in `spread` order, as asked for."""

    def __init__(
        self,
        doc: Document,
        found: list[Target],
        seed: int,
        vocab: TermStats,
        knobs: Knobs,
        asker: OllamaQuestioner | None,
    ) -> None:
        self.doc, self.vocab, self.knobs, self.asker = doc, vocab, knobs, asker
        self.rng = random.Random(f"{seed}\0{doc.doc_id}")
        self.queue = spread(self.rng, found)
        self.next = 0
        self.lang = detect_language([doc.text[:20000]])
        self.terms: DocumentTerms | None = None
        self.made = 0

    @property
    def left(self) -> int:
        return len(self.queue) - self.next

    def make(self, want: int, seen: set[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while len(out) < want and self.next < len(self.queue):
            target = self.queue[self.next]
            self.next += 1
            got = self._ask(target)
            if got is None:
                continue
            question, tags, answer = got
            key = " ".join(question.casefold().split())
            if key in seen:
                continue
            seen.add(key)
            out.append(
                _record(self.doc, target, question, tags=tags, asker=self.asker, answer=answer)
            )
        self.made += len(out)
        return out

    def _ask(self, target: Target) -> tuple[str, list[str], tuple[int, int] | None] | None:
        """(question, tags, answer span: None for the target's own) or None."""
        if self.asker is not None:
            return self.asker.ask(self.doc, target, self.lang)
        if isinstance(target, Symbol):
            self.terms = self.terms or DocumentTerms(self.vocab, code_text(self.doc.text), "en")
            got = code_query(
                self.rng, self.vocab, self.knobs, doc=self.doc, sym=target, doc_terms=self.terms
            )
        else:
            self.terms = self.terms or DocumentTerms(self.vocab, self.doc.text, self.lang)
            got = prose_query(
                self.rng,
                self.vocab,
                self.knobs,
                doc=self.doc,
                passage=target,
                lang=self.lang,
                doc_terms=self.terms,
            )
        return None if got is None else (got[0], got[1], None)


def _asker(llm: str, settings: Settings) -> OllamaQuestioner | None:
    if llm == "extractive":
        return None
    if llm.startswith("ollama:"):
        from ..store import cache_folder
        from .llm import OllamaQuestioner

        return OllamaQuestioner(
            llm.split(":", 1)[1], settings.ollama_host, cache_folder(settings.db)
        )
    raise UsageError(f"--llm must be extractive or ollama:<model>, not {llm!r}")


def _vocabulary(docs: list[Document], targets: dict[str, list[Target]]) -> TermStats:
    """Term statistics over the corpus's blocks (prose) and definitions (code)."""
    from ..loaders.markdown import blocks_of

    vocab = TermStats()
    for doc in docs:
        if doc.format == "code":
            for sym in targets[doc.doc_id]:
                vocab.add(code_text(doc.text[sym.start : sym.end]), "en")
            continue
        lang = detect_language([doc.text[:20000]])
        for block in blocks_of(doc):
            if block.kind not in ("code", "rule"):
                vocab.add(doc.text[block.start : block.end], lang)
    vocab.freeze()
    return vocab


def allocate(sizes: dict[str, int], caps: dict[str, int], n: int) -> dict[str, int]:
    """n questions over documents in proportion to their size (largest remainder), none
    over a document's cap; what a full document cannot take goes to the others."""
    counts = dict.fromkeys(sizes, 0)
    left = n
    open_ = _open_documents(sizes, caps)
    while left > 0 and open_:
        given = _one_round(sizes, caps, counts, open_, left)
        if not any(given.values()):
            break
        for k, g in given.items():
            counts[k] += g
            left -= g
        open_ = {k for k in open_ if counts[k] < caps[k]}
    return counts


def _open_documents(sizes: dict[str, int], caps: dict[str, int]) -> set[str]:
    """The documents that can take a question: some size, and a cap above 0."""
    return {k for k in sizes if caps.get(k, 0) > 0 and sizes[k] > 0}


def _one_round(
    sizes: dict[str, int], caps: dict[str, int], counts: dict[str, int], open_: set[str], left: int
) -> dict[str, int]:
    """What each open document is given of `left` questions this round: its whole share
    (up to its cap), and one more for the largest remainders."""
    total = sum(sizes[k] for k in open_)
    shares = {k: left * sizes[k] / total for k in open_}
    given = {k: min(int(shares[k]), caps[k] - counts[k]) for k in open_}
    _largest_remainders(shares, given, counts, caps, left - sum(given.values()))
    return given


def _largest_remainders(
    shares: dict[str, float],
    given: dict[str, int],
    counts: dict[str, int],
    caps: dict[str, int],
    rest: int,
) -> None:
    """Give the `rest` one each to the documents with the largest fractions of a share
    (ties by name) while they stay under their caps, in `given`."""
    for k in sorted(shares, key=lambda k: (-(shares[k] - int(shares[k])), k)):
        if rest <= 0:
            break
        if counts[k] + given[k] < caps[k]:
            given[k] += 1
            rest -= 1


def spread(rng: random.Random, found: list[Target]) -> list[Target]:
    """Candidates in the order to try them: one per target span at a time (targets in a
    random order, a random passage of each), so questions cover as many targets as they can."""
    by_target: dict[tuple[int, int], list[Target]] = {}
    for t in found:
        by_target.setdefault(t.target if isinstance(t, Passage) else (t.start, t.end), []).append(t)
    groups = list(by_target.values())
    rng.shuffle(groups)
    for g in groups:
        rng.shuffle(g)
    order: list[Target] = []
    depth = max((len(g) for g in groups), default=0)
    for i in range(depth):
        order.extend(g[i] for g in groups if i < len(g))
    return order


def _record(
    doc: Document,
    target: Target,
    question: str,
    tags: list[str],
    asker: OllamaQuestioner | None,
    answer: tuple[int, int] | None,
) -> dict[str, Any]:
    generator = "extractive" if asker is None else asker.backend
    if isinstance(target, Symbol):
        span, (a0, a1), kind = (target.start, target.end), answer or target.answer, "definition"
    else:
        span, (a0, a1), kind = target.target, answer or (target.start, target.end), target.kind
    return {
        "id": "",
        "question": question,
        "doc_id": doc.doc_id,
        "span": list(span),
        "answer": doc.text[a0:a1],
        "tags": ["generated", generator, kind, *tags],
    }
