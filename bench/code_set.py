"""`code-pypi`: more-itertools (PyPI, Python) and lodash.js (npm, JavaScript) with every
function's documentation removed (bench/public_sets.py); the question is the first paragraph
of a public function's removed docstring / JSDoc, the target span the whole function
definition, the answer its first signature line. The blanking and the question making are
shared with bench/library_set.py (`write_code_set`).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.common import (
    DOWNLOADS,
    SetError,
    collapse,
    npm_fetch,
    sha256_file,
    verify_set,
    word_count,
    write_jsonl,
    write_text,
)

# pinned sources (hashes checked after download)
MORE_ITERTOOLS = "10.8.0"
MORE_ITERTOOLS_WHEEL = f"more_itertools-{MORE_ITERTOOLS}-py3-none-any.whl"
MORE_ITERTOOLS_SHA256 = "52d4362373dcf7c52546bc4af9a86ee7c4579df9a8dc268be0a2f949d376cc9b"
LODASH = "4.17.21"
LODASH_TGZ = f"lodash-{LODASH}.tgz"
LODASH_INTEGRITY = "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="

MIN_QUESTION_WORDS = 5


def _names_in(text: str, names) -> bool:
    """Does `text` mention one of `names` as a whole word (`_` counts as a word character,
    so `chunked` is not found in `chunked_even`), ignoring case?"""
    return any(re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text, re.IGNORECASE) for n in names if n)



def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts



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
    if sha256_file(wheel) != MORE_ITERTOOLS_SHA256:
        raise SetError(f"{wheel}: sha256 differs from the pinned one")
    return wheel



def _fetch_lodash() -> Path:
    return npm_fetch("lodash", LODASH, LODASH_INTEGRITY)


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
            text = collapse(" ".join(prose))
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
    return collapse(para)


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
        signature = blanked[span[0]:span[1]].split("\n")[0].strip()  # the line, without a comment after the code
        out.append(_Target(name, _first_paragraph_js(desc), span, signature, ["code", "javascript"],
                           tuple(x for x in (name, api) if x), kind))
        assert line.strip().startswith(signature), name
    return out, skipped


def _filter_targets(targets: list[_Target], skipped: Counter) -> list[_Target]:
    """Drop questions that are too short, name their function, are shared by several
    functions, or whose target encloses another target."""
    kept = []
    for t in targets:
        if not t.question:
            skipped["no prose paragraph"] += 1
        elif word_count(t.question) < MIN_QUESTION_WORDS:
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


def write_code_set(out: Path, sources: list[tuple[str, str, str]], questions: list[dict],
              intended: dict[str, list[tuple[int, int, str | None]]], report: dict, targeted=lambda doc_id: True) -> None:
    """Write each source with its documentation removed into out/corpus and one question per
    documented public function of the files `targeted` says are the library's (tests are
    indexed, never targeted); no question may remain in the blanked corpus."""
    corpus = out / "corpus"
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
        targets = _filter_targets(targets, skipped) if targeted(doc_id) else []
        write_text(corpus / doc_id, blanked)
        corpus_text.append(collapse(blanked).lower())
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
    leaks = [q["id"] for q in questions if collapse(q["question"]).lower() in everything]
    if leaks:
        raise SetError(f"{len(leaks)} question(s) still appear in the blanked corpus: {leaks[:5]}")
    write_jsonl(out / "questions.jsonl", questions)


def build_code_pypi(out: Path) -> dict:
    wheel, tgz = _fetch_more_itertools(), _fetch_lodash()
    questions: list[dict] = []
    intended: dict[str, list[tuple[int, int, str]]] = {}
    report: dict = {"files": {}, "skipped": {}}
    sources: list[tuple[str, str, str]] = []  # (doc_id, original, language)
    with zipfile.ZipFile(wheel) as zf:
        for name in sorted(zf.namelist()):
            if name.startswith("more_itertools/") and name.endswith(".py"):  # .pyi stubs, py.typed dropped
                sources.append((name, zf.read(name).decode("utf-8"), "python"))
        licence = zf.read(f"more_itertools-{MORE_ITERTOOLS}.dist-info/licenses/LICENSE").decode("utf-8")
        write_text(out / "LICENSE-more-itertools.txt", licence)
    with tarfile.open(tgz) as tf:
        # lodash.js only: the one file where the documented API functions share a file (the per-method
        # modules hold one function each; core.js repeats a subset of lodash.js; lodash.min.js and fp/
        # are generated).
        sources.append(("lodash/lodash.js", tf.extractfile("package/lodash.js").read().decode("utf-8"), "javascript"))
        write_text(out / "LICENSE-lodash.txt", tf.extractfile("package/LICENSE").read().decode("utf-8"))
    write_code_set(out, sources, questions, intended, report)
    write_text(out / "NOTICE.md", (
        "# code-pypi\n\n"
        f"- `corpus/more_itertools/*.py`: more-itertools {MORE_ITERTOOLS} (PyPI wheel {MORE_ITERTOOLS_WHEEL}, "
        f"sha256 {MORE_ITERTOOLS_SHA256}), MIT licence (LICENSE-more-itertools.txt).\n"
        f"- `corpus/lodash/lodash.js`: lodash {LODASH} (npm {LODASH_TGZ}, {LODASH_INTEGRITY}), MIT licence "
        "(LICENSE-lodash.txt; the @license header is kept in the file).\n\n"
        "Changes: the docstrings of all functions, methods and classes (Python) and all JSDoc blocks except the "
        "licence header (JavaScript) were removed; the questions are the first paragraphs of the removed "
        "documentation. Generated by bench/public_sets.py; not for redistribution from this repository.\n"))
    verify_set(out, intended=intended)
    return report
