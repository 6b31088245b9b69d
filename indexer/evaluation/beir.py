"""Relevance labels from elsewhere: a BEIR-layout folder (corpus.jsonl, queries.jsonl,
qrels/SPLIT.tsv, each possibly gzipped) becomes one Markdown document per corpus record
and a question set whose targets are whole documents with graded relevance.

The corpus is streamed: each record is written out as it is read, and only the ids of the
judged documents are kept. A document's file name is its `_id`, percent-encoded outside
`[A-Za-z0-9._-]` (a leading dot too), so an id with slashes, dots or any other character
stays inside the folder, two ids never share a name, and `doc_id_of` gives the id back.
On a file system that ignores letter case, ids with capitals get `~` and 8 hex digits of
their SHA-1 appended (`Aids` and `AIDS` must not meet).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import string
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..errors import QuestionSetError, UsageError
from ..loaders.formats import format_of

SAFE = frozenset(string.ascii_letters + string.digits + "-_.")
SUFFIX = ".md"
MAX_NAME_BYTES = 240  # most file systems allow 255 bytes a name
EXAMPLES = 3  # ids shown per reason something was skipped


def doc_file_name(doc_id: str, fold_case: bool = False) -> str:
    """The file name of a corpus record: `MED-10` -> `MED-10.md`, `a/b c` -> `a%2Fb%20c.md`,
    `..` -> `%2E..md`; with `fold_case`, an id with capitals also gets `~` + 8 hex digits."""
    out = []
    for i, ch in enumerate(doc_id):
        if ch in SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    name = "".join(out)
    if fold_case and any("A" <= ch <= "Z" for ch in doc_id):
        name += "~" + hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:8]
    return name + SUFFIX


def doc_id_of(name: str) -> str:
    """The `_id` a file name was made from (the inverse of `doc_file_name`)."""
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    return unquote(stem.split("~", 1)[0], errors="strict")


@dataclass
class BeirImport:
    """What an import wrote and what it left out, and why."""

    source: Path
    folder: Path
    questions_path: Path
    split: str
    documents: int = 0
    questions: int = 0
    judgements: int = 0  # (query, document) pairs kept as targets
    grades: Counter = field(default_factory=Counter)  # grade -> judgements kept
    skipped: Counter = field(default_factory=Counter)  # reason -> count
    # reason -> a few ids or line numbers
    examples: dict[str, list[str]] = field(default_factory=dict)
    firsts: dict[str, list[str]] = field(default_factory=dict)  # file -> what it began with

    def saw(self, what: str, value: str) -> None:
        """Keep the first few things read of `what` (lines, ids): an error shows them."""
        seen = self.firsts.setdefault(what, [])
        if len(seen) < EXAMPLES:
            seen.append(value)

    def shown(self, what: str) -> str:
        return ", ".join(self.firsts.get(what, [])) or "nothing"

    def skip(self, reason: str, example: str, n: int = 1) -> None:
        self.skipped[reason] += n
        shown = self.examples.setdefault(reason, [])
        if len(shown) < EXAMPLES:
            shown.append(example)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "folder": str(self.folder),
            "questions_file": str(self.questions_path),
            "split": self.split,
            "documents": self.documents,
            "questions": self.questions,
            "judgements": self.judgements,
            "grades": {str(g): n for g, n in sorted(self.grades.items())},
            "skipped": [
                {"reason": r, "count": n, "examples": self.examples.get(r, [])}
                for r, n in self.skipped.items()
            ],
        }


def find_file(source: Path, name: str) -> Path:
    """`name` or `name.gz` in `source`, or a one-line error naming what is missing."""
    for candidate in (source / name, source / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    if name.startswith("qrels/"):
        splits = sorted({p.name.split(".")[0] for p in (source / "qrels").glob("*.tsv*")})
        have = f"; splits there: {', '.join(splits)} (pick one with --split)" if splits else ""
        raise QuestionSetError(f"{source} has no {name} (nor {name}.gz){have}")
    raise QuestionSetError(
        f"{source} has no {name} (nor {name}.gz): is it a BEIR folder (corpus.jsonl, "
        "queries.jsonl, qrels/test.tsv)?"
    )


def _lines(path: Path, report: BeirImport) -> Iterator[tuple[int, str]]:
    """Numbered lines of a text file, gunzipped when it ends in .gz; a line that is not
    UTF-8 is skipped and reported (a BOM is dropped)."""
    number = 0
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    report.skip("lines that are not UTF-8", f"{path.name}:{number}")
                    continue
                yield number, line.lstrip("\ufeff") if number == 1 else line
    except (OSError, EOFError) as exc:
        raise QuestionSetError(f"{path}: cannot read past line {number}: {exc}") from None


def _records(path: Path, what: str, report: BeirImport) -> Iterator[dict]:
    """JSON objects of a JSON-lines file; a line that is not one is skipped and reported."""
    for number, line in _lines(path, report):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if not isinstance(data, dict) or data.get("_id") in (None, ""):
            report.skip(
                f"{what} lines that are not a JSON object with an _id", f"{path.name}:{number}"
            )
            continue
        report.saw(what, str(data["_id"])[:40])
        yield data


QRELS_LINE = "query, document, grade"
QRELS_FORMAT = (
    "a qrels line's fields are split on tabs and spaces: query doc grade, or query 0 doc grade"
)


def read_qrels(path: Path, report: BeirImport) -> dict[str, dict[str, int]]:
    """query id -> {document id: grade}, grades above 0 only. A line's fields are split on
    any run of tabs and spaces (public copies put spaces inside the tab-separated
    fields): `query-id corpus-id score` (BEIR, after a header line) or four TREC columns
    `query 0 doc grade`. A line that is neither is skipped and reported by its number."""
    qrels: dict[str, dict[str, int]] = {}
    first = True
    for number, line in _lines(path, report):
        row = line.split()
        if not row:
            continue
        report.saw("qrels", repr(line.rstrip("\r\n"))[:80])
        header, first = first, False  # the first line may be BEIR's header
        if len(row) not in (3, 4) or not _is_grade(row[-1]):
            if not header:
                report.skip(f"qrels lines that are not {QRELS_LINE}", f"{path.name}:{number}")
            continue
        query, doc, grade = row[0], row[-2], int(float(row[-1]))
        if grade <= 0:
            report.skip("judgements with grade 0 or below (not relevant)", f"{query}/{doc}")
            continue
        docs = qrels.setdefault(query, {})
        if doc in docs:
            report.skip("repeated judgements (the higher grade kept)", f"{query}/{doc}")
        docs[doc] = max(grade, docs.get(doc, 0))
    return qrels


def _is_grade(text: str) -> bool:
    try:
        return float(text) == int(float(text))
    except ValueError:
        return False


def _case_sensitive(folder: Path) -> bool:
    probe = folder / ".case-probe"
    probe.touch()
    try:
        return not (folder / ".CASE-PROBE").exists()
    finally:
        probe.unlink()


def _document_text(record: dict) -> str:
    title = " ".join(str(record.get("title") or "").split())
    text = str(record.get("text") or "").replace("\r\n", "\n").strip()
    if title and text:
        return f"# {title}\n\n{text}\n"
    return f"# {title}\n" if title else (f"{text}\n" if text else "")


def write_corpus(
    path: Path,
    folder: Path,
    judged: set[str],
    report: BeirImport,
    progress: Callable[[str], None] | None = None,
) -> dict[str, str]:
    """Write every corpus record as FOLDER/<name>.md as it is read; return the file name of
    each judged document found."""
    fold_case = not _case_sensitive(folder)
    names: dict[str, str] = {}
    for record in _records(path, "corpus", report):
        doc_id = str(record["_id"])
        name = doc_file_name(doc_id, fold_case)
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            report.skip("documents whose _id is too long for a file name", doc_id[:60])
            continue
        text = _document_text(record)
        if not text:
            report.skip("documents with no title and no text", doc_id)
            continue
        try:
            with open(folder / name, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        except FileExistsError:
            report.skip("repeated document _ids (the first kept)", doc_id)
            continue
        report.documents += 1
        if doc_id in judged:
            names[doc_id] = name
        if progress and report.documents % 10000 == 0:
            progress(f"{report.documents:,} documents written")
    return names


def import_beir(
    source: str | os.PathLike,
    folder: str | os.PathLike,
    *,
    split: str = "test",
    questions: str | os.PathLike | None = None,
    progress: Callable[[str], None] | None = None,
) -> BeirImport:
    """Import a BEIR folder: documents into `folder` (new or empty), the questions of
    `split` into `questions` (default FOLDER/questions.jsonl). An interrupted import
    leaves nothing half-written behind."""
    source, folder = Path(source), Path(folder)
    corpus_path, queries_path = (
        find_file(source, "corpus.jsonl"),
        find_file(source, "queries.jsonl"),
    )
    qrels_path = find_file(source, f"qrels/{split}.tsv")
    out_questions = _destination(folder, questions)
    inside = out_questions.resolve().parent == folder.resolve()
    partial = out_questions.with_name(f".{out_questions.name}.partial")
    report = BeirImport(source, folder, out_questions, split)
    qrels = read_qrels(qrels_path, report)
    if not qrels:
        raise _no_judgement(report, qrels_path)
    asked = _read_queries(queries_path, qrels, report)
    judged = {doc for q in asked for doc in qrels[q]}
    staging = folder.parent / f".{folder.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        names = write_corpus(corpus_path, staging, judged, report, progress)
        lines = _question_lines(asked, qrels, names, report)
        if not lines:
            raise nothing_matches(report, qrels_path, queries_path, corpus_path, bool(asked))
        _publish(lines, staging, folder, out=out_questions, partial=partial, inside=inside)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if not inside:
            partial.unlink(missing_ok=True)
        raise
    return report


def _destination(folder: Path, questions: str | os.PathLike[str] | None) -> Path:
    """Where the questions go (default FOLDER/questions.jsonl), once the folder to import
    into is checked: new or empty, its parent there, and the questions file new, in an
    existing folder, and not a document of FOLDER."""
    _check_folder(folder)
    out = Path(questions) if questions else folder / "questions.jsonl"
    if questions and out.exists():
        raise UsageError(f"{out} exists already; remove it or write the questions elsewhere")
    inside = out.resolve().parent == folder.resolve()
    if not inside and not out.parent.is_dir():
        raise UsageError(f"the folder of {out} does not exist; create it first")
    if inside and format_of(out.name)[0]:
        raise UsageError(f"{out} would be read as a document of {folder}; name it .jsonl")
    return out


def _check_folder(folder: Path) -> None:
    """The folder to import into must be new or empty, in a folder that exists."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} is not an empty folder; import into a new one")
    if not folder.parent.is_dir():
        raise UsageError(f"the folder of {folder} does not exist; create it first")


def _no_judgement(report: BeirImport, qrels_path: Path) -> QuestionSetError:
    """The error when the qrels hold no judgement with a grade above 0."""
    bad = report.examples.get(f"qrels lines that are not {QRELS_LINE}")
    unparsed = f" (not parsed: {', '.join(bad)})" if bad else ""
    return QuestionSetError(
        f"{qrels_path} holds no judgement with a grade above 0; its first "
        f"lines: {report.shown('qrels')}{unparsed}; {QRELS_FORMAT}"
    )


def _publish(
    lines: list[str], staging: Path, folder: Path, out: Path, partial: Path, inside: bool
) -> None:
    """Write the questions (into the staging folder, or beside `out` as `partial`), then
    move the staging folder into place as `folder`, and the questions to `out`."""
    target = staging / out.name if inside else partial
    with open(target, "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(lines)
    if folder.exists():
        folder.rmdir()
    os.replace(staging, folder)
    if not inside:
        os.replace(target, out)


def nothing_matches(
    report: BeirImport, qrels: Path, queries: Path, corpus: Path, asked: bool
) -> QuestionSetError:
    """The error when no judgement names a query and a document the files hold: what was
    read of each, side by side."""
    kind, holder = ("document", corpus) if asked else ("query", queries)
    missing = f"none of the {kind} ids in {qrels.name} is in {holder.name}"
    return QuestionSetError(
        f"no question of {report.split} has a judged document in {corpus.name}: {missing}; "
        f"{qrels.name} begins {report.shown('qrels')}; "
        f"{queries.name} holds ids {report.shown('queries')} (the first); "
        f"{corpus.name} holds ids {report.shown('corpus')} (the first); {QRELS_FORMAT}"
    )


def _read_queries(
    path: Path, qrels: dict[str, dict[str, int]], report: BeirImport
) -> dict[str, str]:
    """query id -> text, for the queries judged in the split, in the file's order."""
    asked: dict[str, str] = {}
    seen: set[str] = set()
    for record in _records(path, "queries", report):
        qid = str(record["_id"])
        if qid not in qrels:
            report.skip(f"queries without a judgement in {report.split}", qid)
            continue
        if qid in seen:
            report.skip("repeated query _ids (the first kept)", qid)
            continue
        seen.add(qid)
        text = " ".join(str(record.get("text") or "").split())
        if not text:
            report.skip("queries with no text", qid)
            continue
        asked[qid] = text
    for qid in qrels:
        if qid not in seen:
            report.skip("judged queries missing from queries.jsonl", qid)
    return asked


def _question_lines(
    asked: dict[str, str],
    qrels: dict[str, dict[str, int]],
    names: dict[str, str],
    report: BeirImport,
) -> list[str]:
    """A question record per query with a judged document in the corpus (best grade first)."""
    lines = []
    for qid, text in asked.items():
        targets = _judged(qid, qrels[qid], names, report)
        if not targets:
            report.skip("queries left with no judged document in the corpus", qid)
            continue
        for _, grade in targets:
            report.grades[grade] += 1
        report.judgements += len(targets)
        report.questions += 1
        record = {
            "id": qid,
            "question": text,
            "targets": [{"doc_id": doc, "grade": grade} for doc, grade in targets],
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return lines


def _judged(
    qid: str, grades: dict[str, int], names: dict[str, str], report: BeirImport
) -> list[tuple[str, int]]:
    """A query's judged documents the corpus holds, as (file name, grade), best grade first;
    the others are reported."""
    targets = []
    for doc, grade in grades.items():
        if doc in names:
            targets.append((names[doc], grade))
        else:
            report.skip("judgements of documents not in the corpus", f"{qid}/{doc}")
    return sorted(targets, key=lambda t: (-t[1], t[0]))
