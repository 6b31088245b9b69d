"""Two sets of long technical and scientific English whose labels come from the sources'
own structure (bench/public_sets.py): the question is the one-line summary the source's
authors wrote for a page, the target is that page with the summary removed. Nobody judged
relevance (these are not human relevance labels, as SciFact's or Cranfield's are), and
nobody on this project wrote a question.

- `scipy-docs`: SciPy's reference documentation of the scientific subpackages (statistics,
  special functions, signal processing, integration, interpolation, optimisation), read
  from the docstrings in the pinned wheel: one Markdown page per documented public function
  or class; the question is the docstring's summary line (numpydoc's first paragraph), the
  target the page, which holds the rest of the docstring (extended summary, parameters,
  returns, notes with the mathematics and references, examples).
- `man-pages`: section 2 of the Linux man-pages (system calls), Debian's manpages-dev,
  rendered by groff: one Markdown page per man page; the question is the NAME line's
  description ("open and possibly create a file"), the target the page, whose NAME section
  keeps only the names.

A question is kept when it has at least MIN_WORDS words, names none of the page's own names,
is no other page's question too, and does not appear word for word in the corpus. Pages
without a kept question stay in the corpus as distractors. Why not a set with real relevance
judgements: no package on PyPI, npm or Debian ships one (see bench/beir.py's docstring; also
searched here: the IR-evaluation wheels, pyterrier's test fixtures, which hold the NPL
queries and judgements but not its documents, npm search, apt-cache search).
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

from bench.common import (
    DOWNLOADS,
    SetError,
    collapse,
    sha256_file,
    verify_set,
    word_count,
    write_jsonl,
    write_text,
)

MIN_WORDS = 3
MAX_WORDS = 40  # a summary longer than this is a paragraph, not a summary line

SCIPY = "1.15.3"
SCIPY_WHEEL = f"scipy-{SCIPY}-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
SCIPY_SHA256 = "39cb9c62e471b1bb3750066ecc3a3f3052b37751c7c3dfd0fd7e48900ed52982"
# the scientific subpackages; linalg, sparse, ndimage, io ... are left out to keep the set
# small enough for e5-small to build in minutes
SCIPY_PARTS = ("stats", "special", "signal", "integrate", "interpolate", "optimize")

MANPAGES = "6.03-2"
MANPAGES_DEB = f"manpages-dev_{MANPAGES}_all.deb"
MANPAGES_SHA256 = "96f55cb5e26231d5567c89b692bced63825a14a2d5bd18fdf16ea2ed44eb9838"
# manpages (sections 4, 5, 7) is fetched for its copyright file, which manpages-dev links to
MANPAGES_BASE_DEB = f"manpages_{MANPAGES}_all.deb"
MANPAGES_BASE_SHA256 = "efa1ba4cd19ad7baeae959c9209a7eb74be2ebb858bcabb412597bfc9f588c91"
MAN_SECTION = "2"


# -- shared: text to plain Markdown and the question filter -----------------------------

def plain_lines(lines: list[str]) -> list[str]:
    """Lines as Markdown prose: indentation dropped (no line becomes an indented code block)
    and a line of only `-` or `=` escaped (it would make the line above a heading)."""
    out = []
    for line in lines:
        line = line.strip()
        out.append("\\" + line if len(line) >= 2 and set(line) <= {"-", "="} else line)
    return out


def squeeze(text: str) -> str:
    """At most one blank line in a row, no trailing spaces, one final newline."""
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def names_in(text: str, names) -> bool:
    """Does `text` mention one of `names` as a whole word, ignoring case?"""
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text, re.IGNORECASE)
               for n in names if n)


def keep_questions(pages: list[dict], report: dict) -> list[dict]:
    """The pages whose question stays (see the module's docstring); the reasons the others
    left are counted in report["skipped"]."""
    skipped: Counter = Counter()
    fine = []
    for p in pages:
        words = word_count(p["question"])
        if not p["question"]:
            skipped["no summary"] += 1
        elif words < MIN_WORDS:
            skipped[f"summary under {MIN_WORDS} words"] += 1
        elif words > MAX_WORDS:
            skipped[f"summary over {MAX_WORDS} words"] += 1
        elif names_in(p["question"], p["names"]):
            skipped["summary names the page"] += 1
        else:
            fine.append(p)
    same = Counter(collapse(p["question"]).lower() for p in fine)
    corpus = "\n".join(collapse(p["text"]).lower() for p in pages)
    kept = []
    for p in fine:
        q = collapse(p["question"]).lower()
        if same[q] > 1:
            skipped["the same summary as another page"] += 1
        elif q in corpus:
            skipped["summary also in the corpus"] += 1
        else:
            kept.append(p)
    report["skipped"] = dict(skipped)
    return kept


def write_pages(out: Path, pages: list[dict], tag: str, report: dict) -> None:
    """Every page into out/corpus, one question per page that keeps one, then the check
    through indexer's own loader."""
    kept = keep_questions(pages, report)
    for p in pages:
        write_text(out / "corpus" / p["doc_id"], p["text"])
    write_jsonl(out / "questions.jsonl", [
        {"id": p["doc_id"].removesuffix(".md"), "question": collapse(p["question"]),
         "doc_id": p["doc_id"], "tags": [tag, *p["tags"]]} for p in kept])
    doc_words = sum(word_count(p["text"]) for p in pages)
    question_words = sum(word_count(p["question"]) for p in kept)
    report.update(documents=len(pages), questions=len(kept),
                  avg_document_words=round(doc_words / len(pages), 1),
                  avg_question_words=round(question_words / max(len(kept), 1), 1))
    verify_set(out)


# -- scipy-docs --------------------------------------------------------------------------

def _fetch_scipy() -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    wheel = DOWNLOADS / SCIPY_WHEEL
    if not wheel.is_file():  # this one wheel, whatever Python runs here: only its text is read
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"scipy=={SCIPY}", "--no-deps",
             "--only-binary", ":all:", "--platform", "manylinux_2_17_x86_64",
             "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
             "-d", str(DOWNLOADS), "-q"], capture_output=True, text=True)
        if proc.returncode != 0 or not wheel.is_file():
            raise SetError(f"pip download scipy=={SCIPY} ({SCIPY_WHEEL}) failed: "
                           f"{proc.stderr[-1500:]}")
    if sha256_file(wheel) != SCIPY_SHA256:
        raise SetError(f"{wheel}: sha256 differs from the pinned one")
    return wheel


def _docstrings(source: str) -> list[tuple[str, str]]:
    """(name, docstring) of a module's public top-level functions and classes, and of its
    `add_newdoc("name", doc)` calls (how scipy.special documents its ufuncs)."""
    import ast
    import inspect

    out = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            doc = ast.get_docstring(node)
            if doc:
                out.append((node.name, doc))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and getattr(node.value.func, "id", "") == "add_newdoc":
            args = node.value.args
            if len(args) >= 2 and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                      for a in args[:2]):
                out.append((args[0].value, inspect.cleandoc(args[1].value)))
    return out


SIGNATURE = re.compile(r"^[\w.]+\(.*\)$", re.S)
NUMPYDOC = re.compile(r"^([A-Z][A-Za-z ]+)\n(-{3,})$", re.M)


def scipy_page(part: str, name: str, doc: str) -> dict | None:
    """The page and question of one docstring; None for one that is not numpydoc prose
    (templated, deprecated, no sections)."""
    if "%(" in doc or not NUMPYDOC.search(doc) or "deprecated" in doc[:400].lower():
        return None
    paras = re.split(r"\n[ \t]*\n", doc.strip())
    if SIGNATURE.match(" ".join(paras[0].split())):  # a ufunc's `name(x, out=None)` line
        paras = paras[1:]
    if not paras:
        return None
    summary, rest = paras[0], "\n\n".join(paras[1:])
    if NUMPYDOC.search(summary):
        summary, rest = "", "\n\n".join(paras)
    rest = NUMPYDOC.sub(lambda m: f"## {m.group(1)}" if len(m.group(2)) == len(m.group(1))
                        else m.group(0), rest)
    text = squeeze(f"# scipy.{part}.{name}\n\n" + "\n".join(plain_lines(rest.split("\n"))))
    return {"doc_id": f"{part}/{name}.md", "question": " ".join(summary.split()), "text": text,
            "names": (name,), "tags": [part]}


def build_scipy_docs(out: Path) -> dict:
    wheel = _fetch_scipy()
    report: dict = {"source": SCIPY_WHEEL, "parts": {}}
    pages: list[dict] = []
    with zipfile.ZipFile(wheel) as zf:
        members = sorted(zf.namelist())
        for part in SCIPY_PARTS:
            # the subpackage's docstring lists its public API (autosummary)
            api = zf.read(f"scipy/{part}/__init__.py").decode("utf-8")
            seen: dict[str, dict] = {}
            for member in members:
                if not (member.startswith(f"scipy/{part}/") and member.endswith(".py")) \
                        or "/tests/" in member or "/_precompute/" in member:
                    continue
                for name, doc in _docstrings(zf.read(member).decode("utf-8")):
                    if name in seen or not re.search(rf"^\s+{re.escape(name)}(\s|$)", api, re.M):
                        continue
                    page = scipy_page(part, name, doc)
                    if page:
                        seen[name] = page
            lower = Counter(n.lower() for n in seen)  # file names that differ only in case
            for name, page in seen.items():
                if lower[name.lower()] > 1:
                    upper = sum(c.isupper() for c in name)
                    page["doc_id"] = page["doc_id"].removesuffix(".md") + f"-{upper}.md"
                pages.append(page)
            report["parts"][part] = len(seen)
        licence = next(m for m in members
                       if re.match(rf"scipy-{SCIPY}\.dist-info/(licenses/)?LICENSE", m))
        write_text(out / "LICENSE-scipy.txt", zf.read(licence).decode("utf-8"))
    write_pages(out, pages, "scipy", report)
    write_text(out / "NOTICE.md", (
        "# scipy-docs\n\n"
        f"The docstrings of SciPy {SCIPY} (PyPI wheel {SCIPY_WHEEL}, sha256 {SCIPY_SHA256}), "
        "BSD-3-Clause (LICENSE-scipy.txt; the wheel's licence file also lists the bundled "
        f"libraries' licences), of the subpackages {', '.join(SCIPY_PARTS)}.\n\n"
        "Changes: each public documented function or class is a Markdown page titled with its "
        "name; its docstring's summary line (the question) was removed, numpydoc section "
        "underlines became `##` headings, indentation was dropped. Generated by "
        "bench/manual_sets.py; not for redistribution from this repository.\n"))
    return report


# -- man-pages ----------------------------------------------------------------------------

def apt_fetch(package: str, version: str, file_name: str, sha256: str) -> Path:
    """`apt-get download package=version` into the downloads folder (once), its sha256 checked."""
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    deb = DOWNLOADS / file_name
    if not deb.is_file():
        apt = shutil.which("apt-get")
        if not apt:
            raise SetError(f"apt-get is needed to fetch {file_name} (Debian's {package} {version})")
        proc = subprocess.run([apt, "download", f"{package}={version}"], cwd=DOWNLOADS,
                              capture_output=True, text=True)
        if proc.returncode != 0 or not deb.is_file():
            raise SetError(f"apt-get download {package}={version} failed (Debian 12 has it; "
                           f"run apt-get update first): {proc.stderr[-1500:]}")
    if sha256_file(deb) != sha256:
        raise SetError(f"{deb}: sha256 differs from the pinned one")
    return deb


def deb_data(deb: Path) -> tarfile.TarFile:
    """The data tarball of a .deb (an `ar` archive), opened."""
    blob = deb.read_bytes()
    if not blob.startswith(b"!<arch>\n"):
        raise SetError(f"{deb}: not a Debian package")
    pos = 8
    while pos + 60 <= len(blob):
        name, size = blob[pos:pos + 16].decode().strip().rstrip("/"), int(blob[pos + 48:pos + 58])
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(blob[pos + 60:pos + 60 + size]))
        pos += 60 + size + size % 2
    raise SetError(f"{deb}: no data.tar member")


def render_man(roff: str) -> str:
    """A man page as text, through groff (tbl, the man macros, no hyphenation, one long line
    per paragraph, no bold/underline)."""
    groff = shutil.which("groff")
    if not groff:
        raise SetError("groff is needed to render the man pages (apt-get install groff-base)")
    proc = subprocess.run(
        [groff, "-t", "-man", "-Tutf8", "-rLL=2000n", "-rHY=0", "-rcR=1", "-P-cbou"],
        input=roff, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SetError(f"groff failed: {proc.stderr[-500:]}")
    return proc.stdout


def man_page(file_name: str, text: str) -> dict | None:
    """Rendered man page -> Markdown page (`##` per section, `###` per subsection) whose NAME
    section keeps the names only, and its question (the NAME line's description)."""
    lines = [ln.rstrip() for ln in text.split("\n")]
    lines = [ln for ln in lines if not re.match(r"^\S.*\s{3,}.*\S\(\w+\)$", ln)]  # header, footer
    body, names, question, section = [], (), "", ""
    for line in lines:
        if line and not line[0].isspace():
            section = line.strip()
            body.append(f"\n## {section}\n")
        elif section == "NAME" and line.strip() and not question:
            head, sep, tail = " ".join(line.split()).partition(" - ")
            if not sep:
                return None
            names, question = tuple(n.strip() for n in head.split(",")), tail
            body.append(head)
        elif re.match(r"^ {3}\S", line):
            body.append(f"\n### {line.strip()}\n")
        else:
            body.extend(plain_lines([line]))
    if not question:
        return None
    stem = file_name.removesuffix(".gz")
    title = f"{stem.rsplit('.', 1)[0]}({stem.rsplit('.', 1)[1]})"
    return {"doc_id": f"{stem}.md", "question": question,
            "text": squeeze(f"# {title}\n" + "\n".join(body)), "names": names,
            "tags": [f"man{MAN_SECTION}"]}


def build_man_pages(out: Path) -> dict:
    deb = apt_fetch("manpages-dev", MANPAGES, MANPAGES_DEB, MANPAGES_SHA256)
    base = apt_fetch("manpages", MANPAGES, MANPAGES_BASE_DEB, MANPAGES_BASE_SHA256)
    report: dict = {"source": MANPAGES_DEB, "section": MAN_SECTION, "links": 0, "unparsed": []}
    pages = []
    with deb_data(deb) as tf:
        for member in sorted(tf.getmembers(), key=lambda m: m.name):
            if not re.search(rf"/usr/share/man/man{MAN_SECTION}/[^/]+\.gz$", member.name):
                continue
            if not member.isfile():
                report["links"] += 1
                continue
            roff = gzip.decompress(tf.extractfile(member).read()).decode("utf-8")
            if roff.startswith(".so "):  # a page that only includes another one
                report["links"] += 1
                continue
            page = man_page(member.name.rsplit("/", 1)[1], render_man(roff))
            if page is None:
                report["unparsed"].append(member.name)
            else:
                pages.append(page)
    with deb_data(base) as tf:
        copyright_file = tf.extractfile("./usr/share/doc/manpages/copyright").read().decode("utf-8")
    write_text(out / "LICENSE-man-pages.txt", copyright_file)
    write_pages(out, pages, "man-pages", report)
    write_text(out / "NOTICE.md", (
        "# man-pages\n\n"
        f"Section {MAN_SECTION} of the Linux man-pages project, from Debian's manpages-dev "
        f"{MANPAGES} ({MANPAGES_DEB}, sha256 {MANPAGES_SHA256}). Each page's licence is in its "
        f"source; Debian's copyright file (from {MANPAGES_BASE_DEB}, sha256 "
        f"{MANPAGES_BASE_SHA256}) is LICENSE-man-pages.txt: verbatim-copying, GPL and BSD-style "
        "licences, all allowing redistribution.\n\n"
        "Changes: rendered to text with groff, then to Markdown (section and subsection headings, "
        "indentation dropped); the description on the NAME line (the question) was removed, the "
        "names kept. Generated by bench/manual_sets.py; not for redistribution from this "
        "repository.\n"))
    return report
