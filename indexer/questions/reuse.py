"""Made-up question sets kept and reused: `cached_questions(paths, n, folder=...)` reuses
a file made earlier for the same documents (by content), generator settings, `n` and seed;
`pooled` keeps several seeds' sets in one file."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from ..indexing.strategy_build import CHUNK_FORMAT
from ..loaders import discover
from ..settings import DEFAULT_MAX_FILE_SIZE, Settings
from .generate import GENERATOR_VERSION, QuestionSet, make_questions, path_list
from .simulate import Knobs


def cached_questions(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    n: int = 60,
    *,
    folder: str | os.PathLike[str],
    seed: int = 0,
    llm: str = "extractive",
    knobs: Knobs | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    encoding: str | None = None,
    settings: Settings | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[Path, QuestionSet | None]:
    """The path of a question file for these documents in `folder`, made now (the
    QuestionSet comes back too) or reused (None) while the documents' contents (a SHA-256
    per file), the generator and its settings, `n` and the seed are the same as when it
    was made, and so is the chunk format (the text a loader makes of a file, which the
    spans point into). `settings`, `encoding`, `progress`: as `make_questions` takes them."""
    paths = path_list(paths)
    found = discover(paths, include, exclude, max_file_size)
    key = json.dumps(
        {
            "version": GENERATOR_VERSION,
            # the documents' text (and so the spans) changes with the chunk format
            "chunk_format": CHUNK_FORMAT,
            "n": n,
            "seed": seed,
            "llm": llm,
            "knobs": (knobs or Knobs()).to_dict(),
            "files": sorted((f.doc_id, _content_hash(f.path)) for f in found.files),
        },
        sort_keys=True,
    )
    path = Path(folder) / f"questions-{hashlib.sha256(key.encode()).hexdigest()[:20]}.jsonl"
    if path.is_file():
        return path, None
    made = make_questions(
        paths,
        n,
        seed=seed,
        llm=llm,
        knobs=knobs,
        include=include,
        exclude=exclude,
        max_file_size=max_file_size,
        encoding=encoding,
        settings=settings,
        progress=progress,
    )
    if made.questions:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.write(path)
        except (
            OSError
        ) as exc:  # a read-only index folder: eval and tune still run, without keeping them
            path = Path(tempfile.mkdtemp(prefix="indexer-questions-")) / path.name
            made.write(path)
            made.notes.append(
                f"could not keep them in {folder} ({exc.strerror or exc}); written to {path}"
            )
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


def pooled(
    parts: list[tuple[Path, QuestionSet | None]], folder: str | os.PathLike[str], seed: int
) -> tuple[Path, QuestionSet | None]:
    """One question file holding the made-up sets `parts` (the (path, made) pairs of
    `cached_questions`, seeds `seed`, `seed` + 1, ...), each question's id prefixed with its
    set's seed; kept beside them (in `folder`) and reused while they are. The QuestionSet comes back when
    any part was made now (it sums them), else None."""
    name = hashlib.sha256("\0".join(p.name for p, _ in parts).encode()).hexdigest()[:20]
    path = Path(folder) / f"questions-{name}-x{len(parts)}.jsonl"
    if path.is_file() and all(made is None for _, made in parts):
        return path, None
    questions = _seeded_questions(parts, seed)
    made = [m for _, m in parts if m is not None]
    total = _summed(questions, made, len(parts), seed)
    try:
        total.write(path)
    # a read-only index folder: the parts went to a temporary folder, and so does this
    except OSError:
        path = parts[0][0].with_name(path.name)
        total.write(path)
    return path, total if made else None


def _seeded_questions(
    parts: list[tuple[Path, QuestionSet | None]], seed: int
) -> list[dict[str, Any]]:
    """The questions of every part's file, each id prefixed with its part's seed."""
    questions = []
    for i, (part, _) in enumerate(parts):
        for line in part.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                questions.append({**q, "id": f"s{seed + i}-{q['id']}"})
    return questions


def _summed(
    questions: list[dict[str, Any]], made: list[QuestionSet], parts: int, seed: int
) -> QuestionSet:
    """The pooled set: `questions` with what the sets `made` now say summed (the first
    one's generator and documents); requested is the questions when some part was reused."""
    requested = sum(m.requested for m in made) if len(made) == parts else len(questions)
    seconds = sum(m.seconds for m in made)
    notes = [n for m in made for n in m.notes]
    if not made:
        return QuestionSet(
            questions=questions,
            requested=requested,
            generator="extractive",
            seed=seed,
            documents=0,
            candidates=0,
            skipped=[],
            seconds=seconds,
            notes=notes,
        )
    first = made[0]
    return QuestionSet(
        questions=questions,
        requested=requested,
        generator=first.generator,
        seed=seed,
        documents=first.documents,
        candidates=first.candidates,
        skipped=first.skipped,
        seconds=seconds,
        notes=notes,
        warnings=first.warnings,
        sets=parts,
    )
