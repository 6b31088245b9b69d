"""How close a PDF extraction is to the text drawn into the test fixture (tests/test_pdf.py):
the columns of bench/pdf_compare.py's table."""

from __future__ import annotations

import difflib
import re
import unicodedata

from tests.test_pdf import (
    COL_LEFT,
    COL_RIGHT,
    EXPECTED_PAGES,
    HEADER_LEFT,
    HEADER_RIGHT,
    P1,
    P2,
    P3,
    P4,
    TABLE,
    expected_text,
)


def unstyled(text: str) -> str:
    """NFC, without bold/italic markers (pymupdf4llm writes `## **Title**`)."""
    return re.sub(r"\*\*|__", "", unicodedata.normalize("NFC", text))


def plain(text: str) -> str:
    """Words only: Markdown heading marks, table pipes and rules, whitespace aside."""
    text = unstyled(text)
    text = re.sub(r"^#{1,6} ", "", text, flags=re.M)
    text = re.sub(r"^\|?(\s*:?-{3,}:?\s*\|)+\s*$", " ", text, flags=re.M)
    text = text.replace("|", " ")
    return " ".join(text.split())


def similarity(got: str, expected: str) -> float:
    return difflib.SequenceMatcher(None, plain(got), plain(expected), autojunk=False).ratio()


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row per character of `a`: the insertion chain
    along a row is a running minimum of (value - index) + index."""
    import numpy as np

    if not a or not b:
        return len(a) or len(b)
    bs = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    row = idx.copy()
    for i, ch in enumerate(a, start=1):
        cost = (bs != ord(ch)).astype(np.int64)
        new = np.empty_like(row)
        new[0] = i
        new[1:] = np.minimum(row[1:] + 1, row[:-1] + cost)
        row = np.minimum.accumulate(new - idx) + idx
    return int(row[-1])


def cer(got: str, expected: str) -> float:
    """Character error rate: edits to turn the extracted words into the expected ones,
    per expected character (Markdown syntax and whitespace aside)."""
    want = plain(expected)
    return edit_distance(plain(got), want) / max(1, len(want))


COLUMN_LINES = [" ".join(line.split()[:3]) for col in (COL_LEFT, COL_RIGHT) for para in col for line in para]


def reading_order(got: str) -> float:
    """Share of the pairs of lines of the two-column page (12 lines, 66 pairs) that come
    in reading order: the left column top to bottom, then the right one."""
    flat = plain(got)
    pos = [flat.find(m) for m in COLUMN_LINES]
    pairs = [(a, b) for i, a in enumerate(pos) for b in pos[i + 1:]]
    return sum(1 for a, b in pairs if 0 <= a < b) / len(pairs)


def furniture_removed(got: str, n_pages: int = 3) -> int:
    left = got.count(HEADER_LEFT) + got.count(HEADER_RIGHT) + len(re.findall(r"Sayfa \d+ / \d+", got))
    return 3 * n_pages - left


def hyphens(got: str) -> int:
    flat = plain(got)
    checks = ["kullanım koşullarını", "süre uzayabilir.", "size e-posta ile", "Ar-Ge ekibimiz"]
    return sum(1 for c in checks if c in flat)


def headings(got: str) -> int:
    want = [line for page in EXPECTED_PAGES for line in page.splitlines() if line.startswith("#")]
    lines = {line.strip() for line in unstyled(got).splitlines()}
    return sum(1 for h in want if h in lines)


def table_rows(got: str) -> tuple[int, bool]:
    lines = [" ".join(plain(line).split()) for line in got.splitlines()]
    together = sum(1 for row in TABLE if any(re.search(r"\s+".join(map(re.escape, row)), line) for line in lines))
    markdown = all(any(ln.replace(" ", "") == ("|" + "|".join(row) + "|").replace(" ", "")
                       for ln in unstyled(got).splitlines()) for row in TABLE)
    return together, markdown


# words with Turkish letters, as drawn whole on one line (a hyphen-split word counts under `hyphens`)
HEADINGS = [line.lstrip("# ") for page in EXPECTED_PAGES for line in page.splitlines() if line.startswith("#")]
DRAWN = set(re.findall(r"\w+", "\n".join(
    P1 + P2 + P3 + P4 + HEADINGS + [t for col in COL_LEFT + COL_RIGHT for t in col] + [c for r in TABLE for c in r]
)))
TURKISH_WORDS = sorted(w for w in set(re.findall(r"\w+", expected_text())) & DRAWN if re.search(r"[çğıİöşüÇĞÖŞÜ]", w))


def turkish(got: str) -> float:
    words = set(re.findall(r"\w+", unicodedata.normalize("NFC", got)))
    return sum(1 for w in TURKISH_WORDS if w in words) / len(TURKISH_WORDS)
