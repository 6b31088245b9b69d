"""The checks .ci/dist runs on the built distribution (standard library only):

    python .ci/dist_check.py requirements       the dist extra's pins, one a line
    python .ci/dist_check.py contents DIR       the sdist and the wheel in DIR
    python .ci/dist_check.py stranger VENV      the installed wheel, run from an empty folder

`contents`: the wheel holds the indexer package alone (every file git tracks under
indexer/, package data and py.typed included; no tests/, bench/ or corpus/) and names the
distribution and version; the sdist holds every file git tracks (the tests, the bundled
corpus and its question sets, the benchmarks) and nothing else but setuptools' own files.
`stranger`: `indexer --version` and README's first command, from its first `indexer` on,
with the bundled corpus of this checkout, in an empty folder with caches of its own.
Each failure is one line on stderr; the exit code is 1 when any check failed.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from itertools import pairwise
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NAME = "indexer-rag"
STEM = NAME.replace("-", "_")  # how wheel and sdist file names spell it
# setuptools' own files in an sdist, beside the tracked ones
SDIST_EXTRA = re.compile(rf"(PKG-INFO|setup\.cfg|{STEM}\.egg-info/.+)")
# settings a developer's shell may hold that a stranger's does not
UNSET = (
    "INDEXER_DB",
    "INDEXER_CHROMA_URL",
    "INDEXER_EMBEDDER",
    "INDEXER_CACHE_DIR",
    "TIKTOKEN_CACHE_DIR",
    "OLLAMA_HOST",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
)

failures: list[str] = []


def fail(message: str) -> None:
    failures.append(message)
    print(f"dist: FAILED: {message}", file=sys.stderr)


def version() -> str:
    """VERSION as indexer/version.py assigns it (read, not imported)."""
    tree = ast.parse((REPO / "indexer" / "version.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "VERSION":
            return str(ast.literal_eval(node.value))
    raise SystemExit("dist: indexer/version.py assigns no VERSION")


def tracked() -> set[str]:
    """The files git tracks in this checkout."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(
            "dist: needs a git checkout (git ls-files failed): "
            + done.stderr.decode(errors="replace").strip()
        )
    return {name for name in done.stdout.decode().split("\0") if name}


def requirements() -> None:
    text = (REPO / "pyproject.toml").read_text("utf-8")
    print("\n".join(tomllib.loads(text)["project"]["optional-dependencies"]["dist"]))


def one(folder: Path, name: str) -> Path | None:
    found = list(folder.glob(name))
    if len(found) != 1:
        fail(f"{folder} holds {len(found)} files named {name}, not one")
        return None
    return found[0]


def check_wheel(path: Path, ver: str, files: set[str]) -> None:
    with zipfile.ZipFile(path) as wheel:
        names = {n for n in wheel.namelist() if not n.endswith("/")}
        info = f"{STEM}-{ver}.dist-info"
        meta = wheel.read(f"{info}/METADATA").decode("utf-8")
        entry = wheel.read(f"{info}/entry_points.txt").decode("utf-8")
    tops = {n.split("/", 1)[0] for n in names}
    if tops != {"indexer", info}:
        fail(f"{path.name}: top-level entries {sorted(tops)}, not indexer/ and {info}/")
    for folder in ("tests/", "bench/", "corpus/"):
        if any(f"/{folder}" in f"/{n}" for n in names):
            fail(f"{path.name} carries {folder}")
    package = {f for f in files if f.startswith("indexer/")}
    if (REPO / "indexer" / "py.typed").exists():
        package.add("indexer/py.typed")
    data = [f for f in package if not f.endswith(".py")]
    for folder in ("indexer/data/", "indexer/serve/static/"):
        if not any(f.startswith(folder) for f in data):
            fail(f"git tracks no file in {folder}, the package data to look for")
    for name in sorted(package - names):
        fail(f"{path.name} lacks {name}")
    for name in sorted(names - package):
        if not name.startswith(f"{info}/"):
            fail(f"{path.name} carries {name}, which git does not track")
    heads = dict(re.findall(r"^(Name|Version): (.+)$", meta, flags=re.M))
    if heads != {"Name": NAME, "Version": ver}:
        fail(f"{path.name}: METADATA says {heads}, not Name {NAME}, Version {ver}")
    if not re.search(r"^indexer = indexer\.cli:cli$", entry, flags=re.M):
        fail(f"{path.name}: no `indexer = indexer.cli:cli` console script")
    print(f"dist: {path.name}: {len(names)} files, {len(data)} of them package data")


def check_sdist(path: Path, ver: str, files: set[str]) -> None:
    root = f"{STEM}-{ver}/"
    with tarfile.open(path) as sdist:
        names = {m.name for m in sdist.getmembers() if m.isfile()}
    outside = sorted(n for n in names if not n.startswith(root))
    if outside:
        fail(f"{path.name}: files outside {root}: {outside[:5]}")
    inside = {n[len(root) :] for n in names if n.startswith(root)}
    for name in sorted(files - inside):
        fail(f"{path.name} lacks {name}")
    for name in sorted(inside - files):
        if not SDIST_EXTRA.fullmatch(name):
            fail(f"{path.name} carries {name}, which git does not track")
    sets = (REPO / "corpus").rglob("questions.jsonl")
    questions = sorted(str(p.relative_to(REPO)) for p in sets)
    wanted = [
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "tests/conftest.py",
        "bench/__init__.py",
        *questions,
    ]
    for name in wanted:
        if name not in inside:
            fail(f"{path.name} lacks {name}")
    kinds = sorted({n.split("/", 1)[0] for n in inside if "/" in n})
    print(
        f"dist: {path.name}: {len(inside)} files ({', '.join(kinds)}); "
        f"question sets: {', '.join(questions)}"
    )


def contents(folder: Path) -> None:
    ver, files = version(), tracked()
    wheel = one(folder, f"{STEM}-{ver}-py3-none-any.whl")
    sdist = one(folder, f"{STEM}-{ver}.tar.gz")
    if wheel:
        check_wheel(wheel, ver, files)
    if sdist:
        check_sdist(sdist, ver, files)


def readme_commands() -> list[list[str]]:
    """README's first command from its first `indexer` on, the corpus paths in it made
    absolute (this checkout's corpus)."""
    text = (REPO / "README.md").read_text("utf-8")
    first = re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)[0]
    steps = [shlex.split(part) for part in first.split("&&")]
    steps = [s for s in steps if s and s[0] == "indexer"]
    if not steps:
        raise SystemExit("dist: README's first command runs no `indexer`")

    def here(arg: str) -> str:
        return str(REPO / arg) if arg == "corpus" or arg.startswith("corpus/") else arg

    return [[here(arg) for arg in step] for step in steps]


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    print(f"dist: $ {shlex.join(argv)}", flush=True)
    start = time.monotonic()
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    print(done.stdout, end="", flush=True)
    print(f"dist: exit {done.returncode} in {time.monotonic() - start:.1f} s", flush=True)
    if done.returncode != 0:
        fail(f"{shlex.join(argv[:2])} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done


def stranger(venv: Path) -> None:
    ver, bindir = version(), venv.resolve() / "bin"
    with tempfile.TemporaryDirectory(prefix="indexer-dist-") as tmp:
        work, cache = Path(tmp) / "work", Path(tmp) / "cache"
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in UNSET}
        active = os.environ.get("VIRTUAL_ENV")  # .ci/run's: not on the stranger's PATH
        path = [
            p
            for p in env.get("PATH", "").split(os.pathsep)
            if p and not (active and Path(p).is_relative_to(active))
        ]
        env |= {"PATH": os.pathsep.join([str(bindir), *path]), "XDG_CACHE_HOME": str(cache)}
        if shutil.which("indexer", path=env["PATH"]) != str(bindir / "indexer"):
            fail(f"{bindir} holds no `indexer` command")
        done = run(["indexer", "--version"], work, env)
        said, want = done.stdout.strip(), f"indexer, version {ver}"
        if said != want:
            fail(f"indexer --version printed {said!r}, not {want!r}")
        where = "import indexer; print(indexer.__file__)"
        done = run([str(bindir / "python"), "-c", where], work, env)
        if not Path(done.stdout.strip()).is_relative_to(venv.resolve()):
            fail(f"the command imports indexer from {done.stdout.strip()}, not from {venv}")
        for argv in readme_commands():
            done = run(argv, work, env)
            if argv[1] == "eval":
                named = [b for a, b in pairwise(argv) if a in ("--strategy", "-s")]
                for strategy in named:
                    if not re.search(rf"^{re.escape(strategy)}\s", done.stdout, flags=re.M):
                        fail(f"indexer eval printed no row for {strategy}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["requirements"]:
        requirements()
    elif argv[:1] == ["contents"] and len(argv) == 2:
        contents(Path(argv[1]))
    elif argv[:1] == ["stranger"] and len(argv) == 2:
        stranger(Path(argv[1]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
