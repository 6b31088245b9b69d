"""The layout holds: Chroma is reached only through store/, the environment is read only
by settings.py, and modules stay small enough to have one job."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "indexer"
SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))


def _code(path: Path) -> str:
    """The file without comments and docstrings' prose is not needed: imports and calls are
    matched on whole lines."""
    return path.read_text(encoding="utf-8")


def test_only_the_store_imports_chromadb():
    pattern = re.compile(r"^\s*(import chromadb|from chromadb\b)", re.M)
    outside = [str(p.relative_to(PACKAGE)) for p in SOURCES
               if pattern.search(_code(p)) and p.relative_to(PACKAGE).parts[0] != "store"]
    assert outside == []


def test_only_settings_reads_the_environment():
    pattern = re.compile(r"os\.environ(\.get|\[)|os\.getenv")
    readers = [str(p.relative_to(PACKAGE)) for p in SOURCES if pattern.search(_code(p))]
    # text/tokens.py sets TIKTOKEN_CACHE_DIR for tiktoken (a write, not a read of ours)
    assert set(readers) <= {"settings.py", "text/tokens.py"}
    writes = [line for line in (PACKAGE / "text" / "tokens.py").read_text().splitlines() if "os.environ" in line]
    assert writes and all(re.search(r'os\.environ\["TIKTOKEN_CACHE_DIR"\] = ', line) for line in writes)


def test_modules_stay_small():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in SOURCES}
    assert {name: n for name, n in sizes.items() if n > 450} == {}
