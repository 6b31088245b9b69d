"""Question sets made from a user's own documents (`indexer questions`).

`make_questions(paths, n)` loads the documents (every format the loaders read), lists the
passages a question can target (prose: sentences, list items, table rows, minus
boilerplate; code: definitions), spreads `n` questions over the documents in proportion to
the text they hold that is worth asking about, and makes one question per chosen passage:
offline by simulating a searcher's known-item query (`simulate`, `code`), or
with an LLM through Ollama (`llm`). The result is deterministic for a seed.
Every question carries a span target and an answer that is an exact substring of its
document, so `indexer eval` resolves it like a set people wrote.

`cached_questions(paths, n, cache_dir=...)` reuses a file made earlier for the same
documents (by content), generator settings, `n` and seed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import NothingToIndex, UsageError
from ..loaders import Skipped, discover, load_documents
from ..settings import DEFAULT_MAX_FILE_SIZE, Settings, settings_for
from ..text.analyzer import detect_language
from ..types import Document
from .code import Symbol, code_query, code_text, symbols
from .passages import MIN_WORDS_ALONE, Passage, boilerplate_reason, passages
from .simulate import DocumentTerms, Knobs, Vocabulary, prose_query

GENERATOR_VERSION = 3  # 2: the tuned knobs as defaults; 3: retuned with code's own share and typing noise


@dataclass
class QuestionSet:
    """Made-up questions (records in the question-set format) and what making them found."""

    questions: list[dict]
    requested: int
    generator: str
    seed: int
    documents: int = 0
    candidates: int = 0  # passages and definitions a question could target
    skipped: list[Skipped] = field(default_factory=list)  # files not read, and documents left out
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def shortfall(self) -> str:
        """Why fewer questions were made than asked for ("" when there are enough)."""
        if len(self.questions) >= self.requested:
            return ""
        return (f"made {len(self.questions)} of the {self.requested} questions asked for: the documents hold "
                f"{self.candidates} passages worth a question")

    def to_jsonl(self) -> str:
        return "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in self.questions)

    def write(self, path: str | os.PathLike) -> None:
        """Write the set as JSON lines, atomically (a reader never sees half a file)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(self.to_jsonl(), encoding="utf-8")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def make_questions(
    paths: list[str | os.PathLike] | str | os.PathLike,
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
    db: str | os.PathLike | None = None,
    ollama_host: str | None = None,
    progress=None,
) -> QuestionSet:
    """Make `n` questions from the documents under `paths` (see the module docstring).
    Fewer come back when the documents hold fewer passages worth a question, or when an
    LLM's replies fail validation (`QuestionSet.shortfall` says so); documents without a
    single passage worth a question are an error."""
    t0 = time.perf_counter()
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not isinstance(n, int) or n < 1:
        raise UsageError(f"the number of questions must be a positive whole number, not {n!r}")
    asker = _asker(llm, settings_for(settings, db=db, ollama_host=ollama_host))
    knobs = knobs or Knobs()
    found, stream = load_documents(paths, include, exclude, max_file_size, encoding=encoding)
    docs: list[Document] = []
    left_out: list[Skipped] = []
    for doc in stream:
        reason = boilerplate_reason(doc)
        if reason:
            left_out.append(Skipped(doc.doc_id, f"not asked about: {reason}"))
        else:
            docs.append(doc)
    where = ", ".join(str(p) for p in paths)
    if not docs:
        from ..indexing.pipeline import nothing_message

        raise NothingToIndex(nothing_message(paths, found).replace("nothing to index", "no documents to ask about")
                             if not left_out else f"no documents to ask about in {where}: "
                             f"{left_out[0].doc_id} is {left_out[0].reason.split(': ', 1)[1]}")
    targets = {doc.doc_id: passages(doc, knobs.section_words) or symbols(doc) for doc in docs}
    if not any(targets.values()):
        raise NothingToIndex(f"no passage worth a question in {where}: {len(docs)} document(s), but "
                             "only headings, code blocks, link lists, licence text, test code or lines "
                             f"under {MIN_WORDS_ALONE} words")
    vocab = _vocabulary(docs, targets)
    sizes = {d.doc_id: sum(t.end - t.start for t in targets[d.doc_id]) for d in docs}
    makers = {d.doc_id: _DocumentMaker(d, targets[d.doc_id], seed, vocab, knobs, asker) for d in docs}
    out: list[dict] = []
    seen: set[str] = set()
    while len(out) < n:  # a document that fails to fill its share passes the rest on to the others
        counts = allocate(sizes, {k: m.left for k, m in makers.items()}, n - len(out))
        if not any(counts.values()):
            break
        for doc in docs:
            if counts.get(doc.doc_id):
                out.extend(makers[doc.doc_id].make(counts[doc.doc_id], seen))
                if progress:
                    progress(doc.doc_id, makers[doc.doc_id].made)
    out.sort(key=lambda q: (q["doc_id"], q["span"][0]))
    for i, q in enumerate(out, start=1):
        q["id"] = f"g{i:04d}"
    result = QuestionSet([{"id": q.pop("id"), **q} for q in out], n, llm, seed, len(docs),
                         sum(len(t) for t in targets.values()), found.skipped + left_out)
    if asker is not None:
        result.notes.append(asker.stats.summary())
    result.seconds = time.perf_counter() - t0
    return result


class _DocumentMaker:
    """Questions from one document's candidates, tried in `spread` order, as asked for."""

    def __init__(self, doc: Document, found: list, seed: int, vocab: Vocabulary, knobs: Knobs, asker) -> None:
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

    def make(self, want: int, seen: set[str]) -> list[dict]:
        out: list[dict] = []
        while len(out) < want and self.next < len(self.queue):
            target = self.queue[self.next]
            self.next += 1
            got = self._ask(target)
            if got is None:
                continue
            key = " ".join(got[0].casefold().split())
            if key in seen:
                continue
            seen.add(key)
            out.append(_record(self.doc, target, got[0], got[1], self.asker, got[2] if len(got) > 2 else None))
        self.made += len(out)
        return out

    def _ask(self, target):
        if self.asker is not None:
            return self.asker.ask(self.doc, target, self.lang)
        if isinstance(target, Symbol):
            self.terms = self.terms or DocumentTerms(self.vocab, code_text(self.doc.text), "en")
            return code_query(self.rng, self.vocab, self.knobs, self.doc, target, self.terms)
        self.terms = self.terms or DocumentTerms(self.vocab, self.doc.text, self.lang)
        return prose_query(self.rng, self.vocab, self.knobs, self.doc, target, self.lang, self.terms)


def _asker(llm: str, settings: Settings):
    if llm == "extractive":
        return None
    if llm.startswith("ollama:"):
        from .llm import OllamaQuestioner

        from ..store import cache_folder

        return OllamaQuestioner(llm.split(":", 1)[1], settings.ollama_host, cache_folder(settings.db))
    raise UsageError(f"--llm must be extractive or ollama:<model>, not {llm!r}")


def _vocabulary(docs: list[Document], targets: dict[str, list]) -> Vocabulary:
    """Term statistics over the corpus's blocks (prose) and definitions (code)."""
    from ..loaders.markdown import blocks_of

    vocab = Vocabulary()
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
    counts = {k: 0 for k in sizes}
    left = n
    open_ = {k for k in sizes if caps.get(k, 0) > 0 and sizes[k] > 0}
    while left > 0 and open_:
        total = sum(sizes[k] for k in open_)
        shares = {k: left * sizes[k] / total for k in open_}
        given = {k: min(int(shares[k]), caps[k] - counts[k]) for k in open_}
        rest = left - sum(given.values())
        for k in sorted(open_, key=lambda k: (-(shares[k] - int(shares[k])), k)):
            if rest <= 0:
                break
            if counts[k] + given[k] < caps[k]:
                given[k] += 1
                rest -= 1
        if not any(given.values()):
            break
        for k, g in given.items():
            counts[k] += g
            left -= g
        open_ = {k for k in open_ if counts[k] < caps[k]}
    return counts


def spread(rng: random.Random, found: list) -> list:
    """Candidates in the order to try them: one per target span at a time (targets in a
    random order, a random passage of each), so questions cover as many targets as they can."""
    by_target: dict[tuple[int, int], list] = {}
    for t in found:
        by_target.setdefault(t.target if isinstance(t, Passage) else (t.start, t.end), []).append(t)
    groups = list(by_target.values())
    rng.shuffle(groups)
    for g in groups:
        rng.shuffle(g)
    order = []
    depth = max((len(g) for g in groups), default=0)
    for i in range(depth):
        order.extend(g[i] for g in groups if i < len(g))
    return order


def _record(doc: Document, target, question: str, tags: list[str], asker, answer: tuple[int, int] | None) -> dict:
    generator = "extractive" if asker is None else asker.backend
    if isinstance(target, Symbol):
        span, (a0, a1), kind = (target.start, target.end), answer or target.answer, "definition"
    else:
        span, (a0, a1), kind = target.target, answer or (target.start, target.end), target.kind
    return {"id": "", "question": question, "doc_id": doc.doc_id, "span": list(span), "answer": doc.text[a0:a1],
            "tags": ["generated", generator, kind, *tags]}


def cached_questions(
    paths: list[str | os.PathLike] | str | os.PathLike,
    n: int = 60,
    *,
    cache_dir: str | os.PathLike,
    seed: int = 0,
    llm: str = "extractive",
    knobs: Knobs | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    **kw,
) -> tuple[Path, QuestionSet | None]:
    """The path of a question file for these documents, made now (the QuestionSet comes
    back too) or reused (None) while the documents' contents (a SHA-256 per file), the
    generator and its settings, `n` and the seed are the same as when it was made."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    found = discover(paths, include, exclude, max_file_size)
    key = json.dumps({
        "version": GENERATOR_VERSION, "n": n, "seed": seed, "llm": llm, "knobs": (knobs or Knobs()).to_dict(),
        "files": sorted((f.doc_id, _content_hash(f.path)) for f in found.files),
    }, sort_keys=True)
    path = Path(cache_dir) / f"questions-{hashlib.sha256(key.encode()).hexdigest()[:20]}.jsonl"
    if path.is_file():
        return path, None
    made = make_questions(paths, n, seed=seed, llm=llm, knobs=knobs, include=include, exclude=exclude,
                          max_file_size=max_file_size, **kw)
    if made.questions:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.write(path)
        except OSError as exc:  # a read-only index folder: eval and tune still run, without keeping them
            path = Path(tempfile.mkdtemp(prefix="indexer-questions-")) / path.name
            made.write(path)
            made.notes.append(f"could not keep them in {cache_dir} ({exc.strerror or exc}); written to {path}")
    return path, made


def _content_hash(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return ""  # unreadable now: loading it will say why
    return h.hexdigest()


def pooled(parts: list[tuple[Path, QuestionSet | None]], cache_dir: str | os.PathLike,
           seed: int) -> tuple[Path, QuestionSet | None]:
    """One question file holding the made-up sets `parts` (the (path, made) pairs of
    `cached_questions`, seeds `seed`, `seed` + 1, ...), each question's id prefixed with its
    set's seed; kept beside them and reused while they are. The QuestionSet comes back when
    any part was made now (it sums them), else None."""
    name = hashlib.sha256("\0".join(p.name for p, _ in parts).encode()).hexdigest()[:20]
    path = Path(cache_dir) / f"questions-{name}-x{len(parts)}.jsonl"
    if path.is_file() and all(made is None for _, made in parts):
        return path, None
    questions = []
    for i, (part, _) in enumerate(parts):
        for line in part.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                questions.append({**q, "id": f"s{seed + i}-{q['id']}"})
    made = [m for _, m in parts if m is not None]
    first = made[0] if made else None
    total = QuestionSet(questions, sum(m.requested for m in made) if len(made) == len(parts) else len(questions),
                        first.generator if first else "extractive", seed, first.documents if first else 0,
                        first.candidates if first else 0, first.skipped if first else [],
                        sum(m.seconds for m in made), [n for m in made for n in m.notes])
    try:
        total.write(path)
    except OSError:  # a read-only index folder: the parts went to a temporary folder, and so does this
        path = parts[0][0].with_name(path.name)
        total.write(path)
    return path, total if made else None
