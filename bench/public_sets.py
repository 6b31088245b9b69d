"""Retrieval question sets nobody on this project wrote, in the project's question-set
format, plus the three bundled sets, behind one name each.

    python bench/public_sets.py               # materialise all six, print a summary table
    python bench/public_sets.py --check       # ... and run build + evaluate on each
    python bench/public_sets.py --sets xquad-tr,code-pypi --check --force

    from public_sets import SETS, materialize
    folder, questions = materialize("xquad-tr")

Sets (in this order):
- `tr`, `en`, `code`: the bundled sets (corpus/, corpus/en, corpus/code), listed, not copied.
- `xquad-tr`, `xquad-en`: XQuAD (CC BY-SA 4.0; its files are read from --xquad DIR, env
  INDEXER_XQUAD_DIR, else bench/.cache/xquad): 48 Wikipedia
  articles as Markdown documents (`# Title`, then the 5 paragraphs), 1,190 questions per
  language; the same doc_ids and question ids in both languages. Target span = the
  question's paragraph, answer = its first answer text.
- `code-pypi`: more-itertools (PyPI, Python) and lodash.js (npm, JavaScript), with every
  function's documentation removed from the source; the question is the first paragraph
  of a public function's removed docstring / JSDoc, the target span the whole function
  definition, the answer its first signature line.

Generated data lives in bench/.cache/sets/<name>/ (git-ignored): `corpus/` (what gets
indexed), `questions.jsonl`, licence and NOTICE files beside `corpus/`, and `STAMP.json`;
downloads in bench/.cache/downloads/. A set is rebuilt only when its builder version
(stamp) changes or with --force; a build goes to a temporary folder and replaces the old
one when it is complete and validated.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    CORPUS, XQUAD_SOURCE, machine, parse_args, save_json, table, xquad_dir, xquad_option,
)

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
SETS_DIR = CACHE / "sets"
DOWNLOADS = CACHE / "downloads"

# pinned sources (hashes checked after download)
MORE_ITERTOOLS = "10.8.0"
MORE_ITERTOOLS_WHEEL = f"more_itertools-{MORE_ITERTOOLS}-py3-none-any.whl"
MORE_ITERTOOLS_SHA256 = "52d4362373dcf7c52546bc4af9a86ee7c4579df9a8dc268be0a2f949d376cc9b"
LODASH = "4.17.21"
LODASH_TGZ = f"lodash-{LODASH}.tgz"
LODASH_INTEGRITY = "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="
XQUAD_SHA256 = {
    "en": "e4c57d1c9143aaa1c5d265ba5987a65f4e69528d2a98f29d6e75019b10344f29",
    "tr": "92179a564774b7696100d144c1e10870d0a966b6fccbdd254a65b9d2ab1971cc",
}

MIN_QUESTION_WORDS = 5


@dataclass(frozen=True)
class PublicSet:
    name: str
    description: str
    origin: str  # where the documents and questions come from, and their licence
    version: str = ""  # builder version, the stamp; bump it when a builder's output changes
    builder: Callable[[Path], dict] | None = None  # writes corpus/ + questions.jsonl into a folder
    folder: Path | None = None  # bundled sets: the corpus folder ...
    questions: Path | None = None  # ... and its question file

    @property
    def bundled(self) -> bool:
        return self.builder is None

    @property
    def home(self) -> Path:
        return SETS_DIR / self.name


# ---------------------------------------------------------------------------------------
# small helpers


class SetError(RuntimeError):
    """A source is missing or a generated set fails its own checks."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _words(text: str) -> int:
    return len(text.split())


def _names_in(text: str, names) -> bool:
    """Does `text` mention one of `names` as a whole word (`_` counts as a word character,
    so `chunked` is not found in `chunked_even`), ignoring case?"""
    return any(re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text, re.IGNORECASE) for n in names if n)


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


# ---------------------------------------------------------------------------------------
# XQuAD


# Characters of the XQuAD contexts that are artifacts, not text: a stray BOM and zero-width
# spaces (Turkish), and a line break inside "O\n2" (Oxygen, both languages), which would
# split a paragraph of a Markdown document. Turned into nothing / a space; paragraphs are
# then stripped. Answers get the same treatment.
_XQUAD_DROP = {"\ufeff", "\u200b"}
_XQUAD_SPACE = {"\n", "\r", "\t"}


def _clean_with_map(text: str) -> tuple[str, list[int]]:
    """Cleaned text and, for every original offset 0..len(text), the cleaned offset."""
    out, where = [], []
    for ch in text:
        where.append(len(out))
        if ch in _XQUAD_DROP:
            continue
        out.append(" " if ch in _XQUAD_SPACE else ch)
    where.append(len(out))
    cleaned = "".join(out)
    stripped = cleaned.strip()
    lead = len(cleaned) - len(cleaned.lstrip())
    return stripped, [min(max(w - lead, 0), len(stripped)) for w in where]


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


# Markdown block starts a paragraph could be mistaken for (reported, not changed)
_MD_BLOCK_START = re.compile(r"^(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|\||<[a-zA-Z/!?]|```|~~~|={3,}|-{3,})")


def _build_xquad(lang: str, out: Path) -> dict:
    folder = xquad_dir()
    paths = {x: folder / f"xquad.{x}.json" for x in ("en", lang)}
    for x, path in paths.items():
        if not path.is_file():
            raise SetError(f"XQuAD file missing: {path}; get {XQUAD_SOURCE} and pass --xquad DIR "
                           "(or set INDEXER_XQUAD_DIR)")
        if _sha256(path) != XQUAD_SHA256[x]:
            raise SetError(f"{path}: unexpected content (sha256 differs from the pinned copy)")
    english = json.loads(paths["en"].read_text(encoding="utf-8"))["data"]
    data = json.loads(paths[lang].read_text(encoding="utf-8"))["data"]
    if len(english) != len(data):
        raise SetError(f"xquad.{lang}.json has {len(data)} articles, xquad.en.json {len(english)}")
    corpus = out / "corpus"
    questions: list[dict] = []
    notes: Counter = Counter()
    intended: dict[str, list[tuple[int, int, str]]] = {}
    seen_docs: set[str] = set()
    for art_en, art in zip(english, data):
        if [len(p["qas"]) for p in art_en["paragraphs"]] != [len(p["qas"]) for p in art["paragraphs"]]:
            raise SetError(f"{art['title']}: paragraphs/questions do not line up with the English file")
        if art["title"] != art_en["title"]:
            notes["titles differing from English"] += 1
        doc_id = _slug(art_en["title"]) + ".md"  # English title: identical across languages
        if doc_id in seen_docs:
            raise SetError(f"two articles map to {doc_id}")
        seen_docs.add(doc_id)
        text = f"# {art['title'].replace('_', ' ')}"
        for para, para_en in zip(art["paragraphs"], art_en["paragraphs"]):
            context, where = _clean_with_map(para["context"])
            if context != para["context"]:
                notes["paragraphs with whitespace/BOM/ZWSP cleaned"] += 1
            if _MD_BLOCK_START.match(context):
                notes["paragraphs starting like a Markdown block"] += 1
            start = len(text) + 2
            text += "\n\n" + context
            end = len(text)
            intended.setdefault(doc_id, []).append((start, end, context))
            for qa, qa_en in zip(para["qas"], para_en["qas"]):
                if qa["id"] != qa_en["id"]:
                    raise SetError(f"question ids differ: {qa['id']} vs {qa_en['id']}")
                first = qa["answers"][0]
                a0 = first["answer_start"]
                raw = first["text"]
                if para["context"][a0:a0 + len(raw)] != raw:
                    notes["answer_start not pointing at the answer"] += 1
                    a0 = para["context"].find(raw)
                    if a0 < 0:
                        raise SetError(f"{qa['id']}: answer not in its paragraph")
                answer = context[where[a0]:where[a0 + len(raw)]].strip()
                if answer != raw:
                    notes["answers cleaned like their paragraph"] += 1
                if not answer or answer not in context:
                    raise SetError(f"{qa['id']}: cleaned answer {answer!r} not in its paragraph")
                questions.append({
                    "id": qa["id"], "question": _collapse(qa["question"]), "doc_id": doc_id,
                    "span": [start, end], "answer": answer, "tags": ["xquad", lang],
                })
        _write(corpus / doc_id, text + "\n")
    _write_jsonl(out / "questions.jsonl", questions)
    shutil.copyfile(folder / "CC-BY-SA4.0.txt", out / "LICENSE-CC-BY-SA-4.0.txt")
    _write(out / "NOTICE.md", (
        f"# xquad-{lang}\n\nDocuments and questions: XQuAD (Artetxe, Ruder, Yogatama, 2020), "
        "google-deepmind/xquad, commit 7d30520c71752400, from the SQuAD v1.1 paragraphs of Wikipedia "
        "articles; licence CC BY-SA 4.0 (LICENSE-CC-BY-SA-4.0.txt).\n\nChanges: each article is one "
        "Markdown document (`# title`, then its paragraphs separated by blank lines); byte-order marks and "
        "zero-width spaces inside paragraphs were removed, line breaks inside a paragraph became spaces, "
        "paragraphs were stripped; the question set keeps the first answer of each question. Generated by "
        "bench/public_sets.py; not for redistribution from this repository.\n"))
    _verify(out, intended=intended)
    return {"notes": dict(notes)}


# ---------------------------------------------------------------------------------------
# code-pypi: more-itertools (Python) and lodash (JavaScript)


def _fetch_more_itertools() -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    wheel = DOWNLOADS / MORE_ITERTOOLS_WHEEL
    if not wheel.is_file():
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"more-itertools=={MORE_ITERTOOLS}", "--no-deps",
             "--only-binary", ":all:", "-d", str(DOWNLOADS), "-q"],
            capture_output=True, text=True)
        if proc.returncode != 0 or not wheel.is_file():
            raise SetError(f"pip download more-itertools=={MORE_ITERTOOLS} failed: {proc.stderr[-1500:]}")
    if _sha256(wheel) != MORE_ITERTOOLS_SHA256:
        raise SetError(f"{wheel}: sha256 differs from the pinned one")
    return wheel


def _fetch_lodash() -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    tgz = DOWNLOADS / LODASH_TGZ
    if not tgz.is_file():
        npm = shutil.which("npm")
        if not npm:
            raise SetError("npm is needed to fetch lodash (npm pack lodash@%s)" % LODASH)
        proc = subprocess.run([npm, "pack", f"lodash@{LODASH}", "--silent"], cwd=DOWNLOADS,
                              capture_output=True, text=True)
        if proc.returncode != 0 or not tgz.is_file():
            raise SetError(f"npm pack lodash@{LODASH} failed: {proc.stderr[-1500:]}")
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tgz.read_bytes()).digest()).decode()
    if digest != LODASH_INTEGRITY:
        raise SetError(f"{tgz}: integrity differs from the registry's ({LODASH_INTEGRITY})")
    return tgz


@dataclass
class _Target:
    name: str
    question: str
    span: tuple[int, int]
    answer: str
    tags: list[str]
    names: tuple[str, ...] = ()  # names the question must not mention
    kind: str = ""


def _docstring_node(node) -> ast.Expr | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """The AST with the docstrings of functions and classes removed (`...` for an emptied
    body): what the blanked source must parse to."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _docstring_node(node):
            node.body = node.body[1:] or [ast.Expr(ast.Constant(Ellipsis))]
    return tree


def blank_python(source: str) -> str:
    """`source` without the docstrings of its functions, methods and classes (module
    docstrings stay): the docstring's lines are deleted (and one blank line after it), and
    a body left empty gets `...`."""
    tree = ast.parse(source)
    lines = source.split("\n")
    drop: set[int] = set()
    put: dict[int, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        doc = _docstring_node(node)
        if doc is None:
            continue
        first, last = doc.lineno - 1, doc.end_lineno - 1
        before = lines[first].encode("utf-8")[:doc.col_offset].decode("utf-8")
        after = lines[last].encode("utf-8")[doc.end_col_offset:].decode("utf-8").strip()
        if before.strip() or (after and not after.startswith("#")) or first == node.lineno - 1:
            raise SetError(f"docstring of {node.name} (line {doc.lineno}) shares a line with code")
        drop.update(range(first, last + 1))
        if len(node.body) == 1:
            put[first] = before + "..."
        elif last + 1 < len(lines) and not lines[last + 1].strip():
            drop.add(last + 1)
    out = []
    for i, line in enumerate(lines):
        if i in put:
            out.append(put[i])
        elif i not in drop:
            out.append(line)
    blanked = "\n".join(out)
    if ast.dump(ast.parse(blanked)) != ast.dump(_strip_docstrings(ast.parse(source))):
        raise SetError("blanking changed more than the docstrings")
    return blanked


def _first_paragraph_python(doc: str) -> str:
    """The first prose paragraph of a (cleaned) docstring: doctest lines (`>>>`, `...`),
    indented code and directives (`..`) are not prose; a trailing `::` becomes `:`."""
    for para in re.split(r"\n[ \t]*\n", doc):
        lines = [ln for ln in para.split("\n") if ln.strip()]
        prose = [ln.strip() for ln in lines
                 if not ln.lstrip().startswith((">>>", "...", "..")) and not ln.startswith((" ", "\t"))]
        if prose:
            text = _collapse(" ".join(prose))
            return text[:-1] if text.endswith("::") else text
    return ""


def _python_targets(source: str, blanked: str) -> tuple[list[_Target], Counter]:
    """One target per public, documented module-level function."""
    skipped: Counter = Counter()
    original = ast.parse(source)
    new = ast.parse(blanked)
    starts = _line_starts(blanked)
    lines = blanked.split("\n")

    def offset(lineno: int, col_bytes: int) -> int:
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))

    defs = {}
    counts = Counter(n.name for n in new.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    for node in new.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[node.name] = node
    out = []
    for node in original.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name.startswith("_"):
            skipped["private (name starts with _)"] += 1
            continue
        doc = ast.get_docstring(node, clean=True)
        if not doc:
            skipped["no docstring"] += 1
            continue
        if counts[node.name] != 1:
            skipped["defined more than once"] += 1
            continue
        target = defs[node.name]
        first_line = (target.decorator_list[0].lineno if target.decorator_list else target.lineno)
        span = (starts[first_line - 1], offset(target.end_lineno, target.end_col_offset))
        signature = lines[target.lineno - 1].strip()
        out.append(_Target(node.name, _first_paragraph_python(doc), span, signature, ["code", "python"],
                           (node.name,), "def"))
    return out, skipped


_JSDOC_TAG = re.compile(r"^@(\w+)\s*(.*)$")


def _jsdoc(block: list[str]) -> tuple[str, dict[str, list[str]]]:
    """(description, tags) of a `/** ... */` block given as its lines."""
    body = []
    for i, line in enumerate(block):
        s = line.strip()
        if i == 0:
            s = s[3:]
        if s.endswith("*/"):
            s = s[:-2]
        s = re.sub(r"^\*(?: |$)", "", s.strip())
        body.append(s.rstrip())
    desc, tags, current = [], {}, None
    for s in body:
        m = _JSDOC_TAG.match(s.strip())
        if m:
            current = m.group(1)
            tags.setdefault(current, []).append(m.group(2).strip())
        elif current is None:
            desc.append(s)
    return "\n".join(desc).strip("\n"), tags


def _first_paragraph_js(desc: str) -> str:
    para = re.split(r"\n[ \t]*\n", desc.strip(), maxsplit=1)[0]
    return _collapse(para)


_JS_STATEMENTS = {"function_declaration", "generator_function_declaration", "variable_declaration",
                  "lexical_declaration", "expression_statement", "class_declaration"}


def blank_js(source: str) -> tuple[str, list[dict]]:
    """`source` without its JSDoc blocks (`/** ... */` on lines of their own; `@license`
    blocks stay), and, for each removed block, its text and the line (0-based, in the
    blanked source) of the statement it documented."""
    lines = source.split("\n")
    out: list[str] = []
    blocks: list[dict] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "/**" in line:
            if not line.lstrip().startswith("/**"):
                raise SetError(f"line {i + 1}: a JSDoc block that does not start its line")
            j = i
            while "*/" not in lines[j]:
                j += 1
            if not lines[j].rstrip().endswith("*/"):
                raise SetError(f"line {j + 1}: code after the end of a JSDoc block")
            block = lines[i:j + 1]
            if any("@license" in b for b in block):
                out.extend(block)
            else:
                blocks.append({"block": block, "line": len(out), "source_line": i})
            i = j + 1
            continue
        out.append(line)
        i += 1
    blanked = "\n".join(out)
    for b in blocks:  # the documented statement: the next non-blank line
        k = b["line"]
        while k < len(out) and not out[k].strip():
            k += 1
        b["line"] = k
    return blanked, blocks


def _js_parser():
    import tree_sitter
    import tree_sitter_javascript

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_javascript.language()))


def _js_targets(blanked: str, blocks: list[dict]) -> tuple[list[_Target], Counter]:
    """One target per public documented function: a JSDoc block with `@static`, `@memberOf`
    or `@category`, without `@private` or `@type`, documenting `function NAME` or `var NAME =`."""
    skipped: Counter = Counter()
    data = blanked.encode("utf-8")
    tree = _js_parser().parse(data)
    if tree.root_node.has_error:
        raise SetError("the blanked JavaScript does not parse")
    lines = blanked.split("\n")
    starts = _line_starts(blanked)
    # byte -> char offsets (lodash.js is nearly all ASCII; be exact anyway)
    char_at = {}

    def char(byte: int) -> int:
        if byte not in char_at:
            char_at[byte] = len(data[:byte].decode("utf-8"))
        return char_at[byte]

    by_row: dict[int, list] = {}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _JS_STATEMENTS:
            by_row.setdefault(node.start_point[0], []).append(node)
        stack.extend(node.children)
    out = []
    for b in blocks:
        desc, tags = _jsdoc(b["block"])
        if "private" in tags:
            skipped["private (@private)"] += 1
            continue
        if not ({"static", "memberOf", "category"} & tags.keys()) or "type" in tags:
            skipped["not an API function (constant, property or header)"] += 1
            continue
        row = b["line"]
        line = lines[row] if row < len(lines) else ""
        m = re.match(r"\s*(?:function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|var\s+([A-Za-z_$][\w$]*)\s*=)", line)
        if not m:
            skipped["documents something else (prototype assignment, object member)"] += 1
            continue
        name = m.group(1) or m.group(2)
        if name.startswith("_"):
            skipped["private (name starts with _)"] += 1
            continue
        nodes = [n for n in by_row.get(row, []) if n.type in ("function_declaration",
                 "generator_function_declaration", "variable_declaration", "lexical_declaration")]
        if not nodes:
            raise SetError(f"no declaration parsed at line {row + 1}: {line.strip()[:80]}")
        node = max(nodes, key=lambda n: n.end_byte - n.start_byte)
        span = (char(node.start_byte), char(node.end_byte))
        api = (tags.get("name") or [""])[0].split()[0] if tags.get("name") else ""
        kind = "function" if node.type.endswith("function_declaration") else "var"
        out.append(_Target(name, _first_paragraph_js(desc), span, line.strip(), ["code", "javascript"],
                           tuple(x for x in (name, api) if x), kind))
        assert blanked[span[0]:span[1]].startswith(line.strip()), name
    return out, skipped


def _filter_targets(targets: list[_Target], skipped: Counter) -> list[_Target]:
    """Drop questions that are too short, name their function, are shared by several
    functions, or whose target encloses another target."""
    kept = []
    for t in targets:
        if not t.question:
            skipped["no prose paragraph"] += 1
        elif _words(t.question) < MIN_QUESTION_WORDS:
            skipped[f"question under {MIN_QUESTION_WORDS} words"] += 1
        elif _names_in(t.question, t.names):
            skipped["question names the function"] += 1
        else:
            kept.append(t)
    same = Counter(t.question for t in kept)
    out = []
    for t in kept:
        if same[t.question] > 1:
            skipped["same question as another function"] += 1
        elif any(o is not t and t.span[0] <= o.span[0] and o.span[1] <= t.span[1] for o in kept):
            skipped["target encloses other targets"] += 1
        else:
            out.append(t)
    return out


def _build_code_pypi(out: Path) -> dict:
    wheel, tgz = _fetch_more_itertools(), _fetch_lodash()
    corpus = out / "corpus"
    questions: list[dict] = []
    intended: dict[str, list[tuple[int, int, str]]] = {}
    report: dict = {"files": {}, "skipped": {}}
    sources: list[tuple[str, str, str]] = []  # (doc_id, original, language)
    with zipfile.ZipFile(wheel) as zf:
        for name in sorted(zf.namelist()):
            if name.startswith("more_itertools/") and name.endswith(".py"):  # .pyi stubs, py.typed dropped
                sources.append((name, zf.read(name).decode("utf-8"), "python"))
        licence = zf.read(f"more_itertools-{MORE_ITERTOOLS}.dist-info/licenses/LICENSE").decode("utf-8")
        _write(out / "LICENSE-more-itertools.txt", licence)
    with tarfile.open(tgz) as tf:
        # lodash.js only: the one file where the documented API functions share a file (the per-method
        # modules hold one function each; core.js repeats a subset of lodash.js; lodash.min.js and fp/
        # are generated).
        sources.append(("lodash/lodash.js", tf.extractfile("package/lodash.js").read().decode("utf-8"), "javascript"))
        _write(out / "LICENSE-lodash.txt", tf.extractfile("package/LICENSE").read().decode("utf-8"))
    corpus_text = []
    for doc_id, original, language in sources:
        original = original.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
        skipped: Counter = Counter()
        if language == "python":
            blanked = blank_python(original)
            targets, skipped = _python_targets(original, blanked)
        else:
            blanked, blocks = blank_js(original)
            targets, skipped = _js_targets(blanked, blocks)
        targets = _filter_targets(targets, skipped)
        _write(corpus / doc_id, blanked)
        corpus_text.append(_collapse(blanked).lower())
        report["files"][doc_id] = {"language": language, "bytes": len(original.encode("utf-8")),
                                   "blanked_bytes": len(blanked.encode("utf-8")), "questions": len(targets),
                                   "kinds": dict(Counter(t.kind for t in targets))}
        report["skipped"][doc_id] = dict(skipped)
        for t in targets:
            questions.append({
                "id": f"{doc_id}::{t.name}", "question": t.question, "doc_id": doc_id, "span": list(t.span),
                "answer": t.answer, "tags": t.tags,
            })
            intended.setdefault(doc_id, []).append((*t.span, None))
    # the questions must not be in the corpus (the docstrings were removed)
    everything = "\n".join(corpus_text)
    leaks = [q["id"] for q in questions if _collapse(q["question"]).lower() in everything]
    if leaks:
        raise SetError(f"{len(leaks)} question(s) still appear in the blanked corpus: {leaks[:5]}")
    _write_jsonl(out / "questions.jsonl", questions)
    _write(out / "NOTICE.md", (
        "# code-pypi\n\n"
        f"- `corpus/more_itertools/*.py`: more-itertools {MORE_ITERTOOLS} (PyPI wheel {MORE_ITERTOOLS_WHEEL}, "
        f"sha256 {MORE_ITERTOOLS_SHA256}), MIT licence (LICENSE-more-itertools.txt).\n"
        f"- `corpus/lodash/lodash.js`: lodash {LODASH} (npm {LODASH_TGZ}, {LODASH_INTEGRITY}), MIT licence "
        "(LICENSE-lodash.txt; the @license header is kept in the file).\n\n"
        "Changes: the docstrings of all functions, methods and classes (Python) and all JSDoc blocks except the "
        "licence header (JavaScript) were removed; the questions are the first paragraphs of the removed "
        "documentation. Generated by bench/public_sets.py; not for redistribution from this repository.\n"))
    _verify(out, intended=intended)
    return report


# ---------------------------------------------------------------------------------------
# validation and materialisation


def _verify(out: Path, intended: dict[str, list[tuple[int, int, str | None]]] | None = None) -> None:
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
        lo, hi = q.span
        if not (lo <= q.answer_span[0] and q.answer_span[1] <= hi):
            raise SetError(f"{q.id}: answer outside the span")


def _stamp(s: PublicSet) -> dict:
    return {"set": s.name, "version": s.version}


def materialize(name: str, force: bool = False) -> tuple[Path, Path]:
    """(corpus folder, questions file) of a set, building it first if it is not there
    (or its stamp is from another builder version, or `force`)."""
    if name not in SETS:
        raise KeyError(f"unknown set {name!r}; known: {', '.join(SETS)}")
    s = SETS[name]
    if s.bundled:
        return s.folder, s.questions
    home, stamp = s.home, s.home / "STAMP.json"
    corpus, questions = home / "corpus", home / "questions.jsonl"
    if not force and stamp.is_file() and questions.is_file() and corpus.is_dir():
        try:
            if {k: v for k, v in json.loads(stamp.read_text()).items() if k in ("set", "version")} == _stamp(s):
                return corpus, questions
        except ValueError:
            pass
    SETS_DIR.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=SETS_DIR))
    try:
        t0 = time.perf_counter()
        report = s.builder(tmp)
        _write(tmp / "STAMP.json", json.dumps({**_stamp(s), "built": time.strftime("%Y-%m-%d %H:%M:%S"),
                                               "seconds": round(time.perf_counter() - t0, 2), "report": report},
                                              indent=1, ensure_ascii=False) + "\n")
        old = None
        if home.exists():
            old = SETS_DIR / f".{name}.old-{os.getpid()}"
            home.rename(old)
        tmp.rename(home)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return corpus, questions


def build_report(name: str) -> dict:
    """What the builder recorded in the stamp (skip counts, cleaning notes); {} for bundled sets."""
    s = SETS[name]
    if s.bundled or not (s.home / "STAMP.json").is_file():
        return {}
    return json.loads((s.home / "STAMP.json").read_text(encoding="utf-8")).get("report", {})


SETS: dict[str, PublicSet] = {
    "tr": PublicSet("tr", "bundled Turkish policy documents", "this project (corpus/)",
                    folder=CORPUS, questions=CORPUS / "questions.jsonl"),
    "en": PublicSet("en", "bundled English SaaS documentation", "this project (corpus/en)",
                    folder=CORPUS / "en", questions=CORPUS / "en" / "questions.jsonl"),
    "code": PublicSet("code", "bundled sample repository, 6 languages", "this project (corpus/code)",
                      folder=CORPUS / "code", questions=CORPUS / "code" / "questions.jsonl"),
    "xquad-tr": PublicSet("xquad-tr", "XQuAD Turkish: 48 Wikipedia articles, 1,190 questions",
                          "XQuAD (google-deepmind/xquad), CC BY-SA 4.0", "xquad-1",
                          lambda out: _build_xquad("tr", out)),
    "xquad-en": PublicSet("xquad-en", "XQuAD English: the same articles and questions",
                          "XQuAD (google-deepmind/xquad), CC BY-SA 4.0", "xquad-1",
                          lambda out: _build_xquad("en", out)),
    "code-pypi": PublicSet("code-pypi", f"more-itertools {MORE_ITERTOOLS} + lodash.js {LODASH}, docs removed",
                           "PyPI more-itertools, npm lodash; MIT", f"code-1-mi{MORE_ITERTOOLS}-lodash{LODASH}",
                           _build_code_pypi),
}


# ---------------------------------------------------------------------------------------
# command line


def summary(name: str) -> dict:
    from indexer.evaluation.run import load_questions
    from indexer.loaders import load_documents

    folder, qpath = materialize(name)
    _, docs = load_documents([folder])
    docs = list(docs)
    questions = load_questions(qpath)
    return {
        "set": name, "documents": len(docs), "questions": len(questions),
        "avg_words": sum(_words(q.question) for q in questions) / len(questions),
        "mb": sum(len(d.text.encode("utf-8")) for d in docs) / 1024 / 1024,
    }


def check(name: str, ks=(1, 5, 10)) -> dict:
    """Build the set with `auto` and the default embedder into a temporary database and
    evaluate every mode."""
    from indexer.indexing.building import build
    from indexer.evaluation.run import evaluate

    folder, qpath = materialize(name)
    db = Path(tempfile.mkdtemp(prefix=f"indexer-public-{name}-"))
    try:
        t0 = time.perf_counter()
        reports = build([folder], ["auto"], db=db)
        build_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        ev = evaluate(qpath, ["auto"], ("embedding", "bm25", "hybrid"), ks, db=db, corpus=folder)
        eval_s = time.perf_counter() - t1
    finally:
        shutil.rmtree(db, ignore_errors=True)
    r = reports[0]
    return {
        "set": name, "n": len(ev.questions), "chunks": r.chunks, "avg_tokens": r.avg_tokens,
        "max_tokens": r.max_tokens, "analyzer": r.analyzer, "build_s": build_s, "eval_s": eval_s,
        "skipped": [str(x) for x in r.skipped], "warnings": [str(x) for x in r.warnings],
        "unsupported": dict(r.unsupported),
        "rows": [{"mode": row.mode, **{f"recall@{k}": row.recall(k) for k in ks},
                  "strict@1": row.recall(1, strict=True), "strict@5": row.recall(5, strict=True),
                  "mrr": row.mrr, "ctx": row.ctx_tokens} for row in ev.rows],
        "by_tag": _by_tag(ev, SPLIT_TAGS.get(name, ()), ks),
    }


# sets whose questions fall into parts worth reading apart (the two languages of code-pypi)
SPLIT_TAGS = {"code-pypi": ("python", "javascript")}


def _by_tag(ev, tags, ks) -> list[dict]:
    from indexer.evaluation.metrics import mrr, recall_at

    tagged = {q.id: set(q.tags) for q in ev.questions}
    out = []
    for tag in tags:
        for row in ev.rows:
            ranks = [r.first_hit for r in row.results if tag in tagged[r.id]]
            strict = [r.first_strict for r in row.results if tag in tagged[r.id]]
            out.append({"tag": tag, "mode": row.mode, "n": len(ranks),
                        **{f"recall@{k}": recall_at(ranks, k) for k in ks},
                        "strict@1": recall_at(strict, 1), "mrr": mrr(ranks)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated set names (default: all)")
    parser.add_argument("--check", action="store_true", help="build each set with `auto` and evaluate it")
    parser.add_argument("--force", action="store_true", help="rebuild generated sets even if stamped")
    parser.add_argument("--json", type=Path, default=None, help="write every number to this file")
    xquad_option(parser)
    args = parse_args(parser)
    names = [n.strip() for n in args.sets.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}")
    print(f"public question sets, {time.strftime('%Y-%m-%d')}, {machine()}\n", flush=True)
    results: dict = {"sets": {}, "checks": {}}
    rows = []
    for name in names:
        t0 = time.perf_counter()
        materialize(name, force=args.force)
        seconds = time.perf_counter() - t0
        s = summary(name)
        results["sets"][name] = {**s, "materialize_s": round(seconds, 2), "report": build_report(name)}
        rows.append([name, s["documents"], s["questions"], f"{s['avg_words']:.1f}", f"{s['mb']:.2f}",
                     f"{seconds:.1f}"])
    print(table(["set", "documents", "questions", "avg question words", "MB of text", "materialise s"], rows))
    print(f"\n(sets in {SETS_DIR})\n", flush=True)
    if args.check:
        rows, tag_rows = [], []
        for name in names:
            c = check(name)
            results["checks"][name] = c
            for row in c["rows"]:
                n = c["n"]
                rows.append([name, row["mode"], c["chunks"], f"{row['recall@1']}/{n}", f"{row['recall@5']}/{n}",
                             f"{row['recall@10']}/{n}", f"{row['mrr']:.3f}", f"{row['strict@1']}/{n}",
                             round(row["ctx"]), f"{c['build_s']:.1f}"])
            extra = [f"analyzer {c['analyzer']}", f"avg {c['avg_tokens']:.0f} / max {c['max_tokens']} tokens",
                     f"eval {c['eval_s']:.1f} s"]
            if c["skipped"] or c["warnings"] or c["unsupported"]:
                extra.append(f"skipped {c['skipped']}, warnings {c['warnings']}, not indexed {c['unsupported']}")
            print(f"  {name}: " + "; ".join(extra), flush=True)
            for row in c["by_tag"]:
                n = row["n"]
                tag_rows.append([f"{name} [{row['tag']}]", row["mode"], "", f"{row['recall@1']}/{n}",
                                 f"{row['recall@5']}/{n}", f"{row['recall@10']}/{n}", f"{row['mrr']:.3f}",
                                 f"{row['strict@1']}/{n}", "", ""])
        print("\nauto strategy, default embedder, a fresh database per set:\n")
        print(table(["set", "mode", "chunks", "recall@1", "recall@5", "recall@10", "MRR", "strict@1", "ctxTok@5",
                     "build s"], rows + tag_rows))
    save_json(args.json, results)


if __name__ == "__main__":
    main()
