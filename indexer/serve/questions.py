"""Question sets for `indexer serve`: the files given with `--questions`, the
`questions*.jsonl` files next to the folders the collections were built from, and sets
made from the collections' documents on request (`generate`: kept in the index folder,
reused while the documents are unchanged). Requests pick a set by its id, never by a path.

A set marks query results hit / strict hit / miss (the evaluator's rules: a hit overlaps
the expected section or belongs to an expected document, a strict hit contains the whole
expected answer), and gives the
evaluation view its numbers from `indexer.evaluation.evaluate` — the same as `indexer eval`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CollectionNotFound, IndexerError, QuestionSetError
from ..evaluation import Evaluation, Question, evaluate, load_questions, report, resolve
from ..evaluation.advice import advice_of
from ..evaluation.coverage import NotInIndex, dropped, held, left_out_warning, targets
from ..evaluation.metrics import contains
from ..evaluation.opening import corpus_root
from ..loaders import load_documents
from ..paths import shown_path
from ..questions.on_demand import CAVEAT
from ..retrieval import MODES, Index
from ..types import Chunk
from .library import Library

PATTERN = "questions*.jsonl"
EVAL_KS = (1, 5)


@dataclass
class ServedSet:
    id: str
    path: Path
    questions: list[Question] | None = None  # resolved against the corpus on first use
    error: str = ""
    evaluations: dict[tuple, dict] = field(default_factory=dict)
    # (file and collection versions, the collections holding a document the set is about)
    holders: tuple[tuple, list[str]] = ((), [])


def set_id(path: Path) -> str:
    return hashlib.sha1(str(path).encode()).hexdigest()[:10]


def judge(question: Question, chunk: Chunk) -> str:
    """strict (contains the whole answer), hit (overlaps the expected span, or belongs to an
    expected document) or miss."""
    if (
        question.answer_span is not None
        and chunk.doc_id == question.doc_id
        and contains((chunk.start, chunk.end), question.answer_span)
    ):
        return "strict"
    return "hit" if question.hits(chunk.doc_id, chunk.start, chunk.end) else "miss"


class QuestionSets:
    def __init__(self, library: Library, explicit: Sequence[str | Path] = ()) -> None:
        self.library = library
        self.explicit = [Path(p).expanduser().resolve() for p in explicit]
        self.base = Path.cwd()  # paths are shown relative to where serve started, never absolute
        self._sets: dict[str, ServedSet] = {}
        self.generated: list[Path] = []  # sets made on request, listed after the others
        self._lock = threading.Lock()
        self._eval_lock = threading.Lock()  # one evaluation at a time: it keeps both cores busy

    def _discover(self) -> list[Path]:
        found = list(self.explicit)
        for entry in self.library.entries():
            for source in entry.source:
                folder = Path(source)
                if folder.is_file():
                    folder = folder.parent
                if folder.is_dir():
                    found += sorted(folder.glob(PATTERN)) + sorted(folder.glob(f"*/{PATTERN}"))
        found += [p for p in self.generated if p.is_file()]
        return list(dict.fromkeys(p.resolve() for p in found))

    def sets(self) -> list[ServedSet]:
        paths = self._discover()
        with self._lock:
            for path in paths:
                self._sets.setdefault(set_id(path), ServedSet(set_id(path), path))
            return [self._sets[set_id(p)] for p in paths]

    def listing(self) -> list[dict]:
        """The sets to offer, those about documents in the index first: a set found next
        to a corpus whose documents no collection holds is not offered; one given with
        --questions is, marked (`matches` false, and its name says so)."""
        out = []
        for s in self.sets():
            holders, problem = self.holders(s)
            # a broken file is offered: using it says what is wrong
            matches = bool(holders) or bool(problem)
            if not matches and s.path not in self.explicit:
                continue
            name = self._name(s.path) + (
                "" if matches else " (not about the documents in this index)"
            )
            out.append(
                {
                    "id": s.id,
                    "name": name,
                    "explicit": s.path in self.explicit,
                    "generated": s.path in self.generated,
                    "matches": matches,
                    "collections": holders,
                }
            )
        return sorted(out, key=lambda item: not item["matches"])

    def holders(self, qs: ServedSet) -> tuple[list[str], str]:
        """The collections holding at least one document the set is about, and the
        problem of a file that cannot be read as a question set ("" when none)."""
        names = self.library.names()
        try:
            stat = qs.path.stat()
        except OSError:
            return [], "gone"
        key = (
            stat.st_mtime_ns,
            stat.st_size,
            tuple((e.collection, e.generation) for e in names.values()),
        )
        if qs.holders[0] != key:
            try:
                wanted = {d for q in load_questions(qs.path) for d in targets(q)}
            except QuestionSetError as exc:
                return [], str(exc)
            qs.holders = (key, [name for name in names if self._holds(name, wanted)])
        return qs.holders[1], ""

    def _holds(self, name: str, wanted: set[str]) -> bool:
        try:
            return bool(held(self.library.index(name), wanted))
        except IndexerError:  # dropped or unreadable since it was listed: it holds nothing to offer
            return False

    def _name(self, path: Path) -> str:
        shown = shown_path(path, self.base, keep=2)
        if path not in self.generated:
            return shown
        count = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        return f"{count} made-up questions ({shown})"

    def get(self, sid: str) -> ServedSet:
        if not isinstance(sid, str) or sid not in {s.id for s in self.sets()}:
            raise CollectionNotFound(
                f"no question set {str(sid)[:40]!r}; GET /api/questions lists them"
            )
        return self._sets[sid]

    def questions(self, sid: str) -> list[Question]:
        """The set's questions with their target spans resolved against the corpus."""
        qs = self.get(sid)
        if qs.questions is None:
            questions = load_questions(qs.path)
            indexes = [self.library.index(name) for name in self.library.names()]
            root = corpus_root(qs.path, questions, indexes)
            _, docs = load_documents([root])
            resolve(questions, {d.doc_id: d for d in docs})
            qs.questions = questions
        return qs.questions

    def question(self, sid: str, qid: str) -> Question:
        for q in self.questions(sid):
            if q.id == qid:
                return q
        raise CollectionNotFound(
            f"no question {str(qid)[:40]!r} in {shown_path(self.get(sid).path, self.base, keep=2)}"
        )

    def evaluation(self, sid: str, names: list[str], modes: tuple[str, ...] = MODES) -> dict:
        """`indexer eval` of the set on the named collections × modes, as JSON (cached
        until one of the collections is rebuilt)."""
        qs = self.get(sid)
        indexes = [self.library.index(name) for name in names]
        for index in indexes:
            index.follow()
        key = (
            tuple(names),
            tuple(modes),
            tuple((i.entry.collection, i.entry.generation) for i in indexes),
        )
        with self._eval_lock:
            if key not in qs.evaluations:
                qs.evaluations[key] = self._evaluate(qs, indexes, modes)
        return qs.evaluations[key]

    def generate(self, n: int, names: list[str], modes: tuple[str, ...] = MODES) -> dict:
        """Make `n` questions from the documents the named collections were built from (or
        reuse the set made earlier for the same documents), then evaluate it like any set."""
        from ..errors import UsageError
        from ..questions.on_demand import generated_questions

        indexes = [self.library.index(name) for name in names]
        sources = list(dict.fromkeys(tuple(i.entry.source) for i in indexes))
        if len(sources) > 1:
            raise UsageError(
                "the collections were built from different folders; generate questions for "
                "collections of one folder at a time"
            )
        with self._eval_lock:
            made = generated_questions(
                n, [], settings=self.library.store.settings, corpus=list(sources[0])
            )
        path = made.path.resolve()
        if path not in self.generated:
            self.generated.append(path)
        result = self.evaluation(set_id(path), names, modes)
        shown = lambda p: shown_path(p, self.base, keep=2)  # noqa: E731
        return {
            **result,
            "generated": {
                "requested": n,
                "questions": made.count,
                "reused": made.reused,
                "shortfall": made.made.shortfall if made.made else "",
                "message": made.describe(shown),
            },
        }

    def _evaluate(
        self, qs: ServedSet, indexes: list[Index], modes: tuple[str, ...]
    ) -> dict[str, Any]:
        ev = self._run(qs, indexes, modes)
        source = shown_path(ev.source, self.base)
        advice = advice_of(ev) if qs.path in self.generated else None  # made-up: what they can tell
        return {
            "set": qs.id,
            "name": shown_path(qs.path, self.base, keep=2),
            "questions": len(ev.questions),
            "ks": ev.ks,
            "ctx_k": ev.ctx_k,
            "source": source,
            "rows": served_rows(ev, source),
            "table": report.table(ev),
            "intervals": report.intervals(ev),
            "advice": advice.to_dict() if advice else None,
            "advice_text": f"{advice.text()}\nnote: {CAVEAT}" if advice else "",
            "stale": ev.stale,
            "left_out": dropped(ev.left_out),
            "warnings": [left_out_warning(ev.left_out, len(ev.questions))] if ev.left_out else [],
        }

    def _run(self, qs: ServedSet, indexes: list[Index], modes: tuple[str, ...]) -> Evaluation:
        """`evaluate` once per embedder of the collections, merged into one evaluation."""
        by_embedder: dict[str, list[str]] = {}
        for index in indexes:
            by_embedder.setdefault(index.entry.embedder, []).append(index.entry.strategy)
        try:
            parts = [
                evaluate(
                    qs.path,
                    strategies,
                    modes,
                    EVAL_KS,
                    settings=self.library.store.settings,
                    built_with=(embedder,),
                )
                for embedder, strategies in by_embedder.items()
            ]
        except (
            NotInIndex
        ) as exc:  # the same line as `indexer eval`, without the server's absolute paths
            raise QuestionSetError(
                exc.describe(lambda p: shown_path(p, self.base, keep=2))
            ) from None
        return parts[0] if len(parts) == 1 else merged(parts)


def merged(parts: list[Evaluation]) -> Evaluation:
    """Evaluations of the same questions (one per embedder) as one."""
    ev = parts[0]
    return Evaluation(
        ev.questions,
        [r for p in parts for r in p.rows],
        ev.ks,
        ctx_k=ev.ctx_k,
        source=ev.source,
        stale={k: v for p in parts for k, v in p.stale.items()},
        left_out={k: v for p in parts for k, v in p.left_out.items()},
    )


def served_rows(ev: Evaluation, source: str) -> list[dict[str, Any]]:
    """The report's JSON rows as the server gives them: the corpus folder as shown, and
    no per-question retrieved lists."""
    rows = report.json_rows(ev)
    for row in rows:
        if "source" in row:
            row["source"] = source
        for item in row.get("per_question", ()):
            item.pop("retrieved", None)
    return rows
