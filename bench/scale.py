"""The cost curve from 10k to 1M chunks, on one machine and on a Chroma server.

    python -m bench.scale --data DIR            # 10k, 100k, 1M (the 1M builds take hours)
    python -m bench.scale --data DIR --quick    # 10k and 100k
    python -m bench.scale --data DIR --report   # the tables from the figures kept in DIR
    python -m bench.scale --data DIR --sizes 10000 --only embedded
    python -m bench.scale --smoke               # 200 chunks of the smoke documents, embedded and the BM25 side,
                                                # in a temporary folder (numbers mean nothing)

Per size: a corpus of that many `fixed64` chunks (Turkish XQuAD sentences recombined,
`bench/scale_kit.py`), built with the bench-only `bench-hash` embedder (pseudo-random
512-d unit vectors from a hash of the text: the model is not what is measured) into the
embedded database and into a `chroma run` server. Built once: the corpora, databases and
the build's figures are kept in `--data` and reused by later runs (delete a size's folders
to build it again). Measured per size:

- the build, per record and stage, and its peak RSS; the index folder, its HNSW index and
  its BM25 index on disk;
- a cold `indexer query` (a new process: start, imports, opening, one query) per mode;
- warm p50/p99 per mode in-process (`indexer.Index`) and through `indexer serve` (HTTP),
  and the serving process's RSS against its HNSW + BM25 size;
- one edited file's incremental build (twice: the first of a large collection makes its
  delta collection, the next writes into it), and `indexer gc`;
- with the server: two readers with their own `--db` (BM25 not there yet: rebuilt from the
  stored texts on first use and saved; then a cold query that finds it).

Then each figure's growth exponent between sizes, log(t2/t1) / log(n2/n1): 1 is linear.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from bench.common import CACHE, smoke_option, xquad_dir
from bench.scale_report import measure_all
from bench.scale_steps import warm_worker
from bench.xquad_set import smoke_xquad

SIZES = (10_000, 100_000, 1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=CACHE / "scale",
                        help="where corpora, databases and figures are kept (reused across runs)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--quick", action="store_true", help="stop at 100k chunks")
    parser.add_argument("--only", choices=("embedded", "server"), default=None, help="one kind of store")
    parser.add_argument("--build-only", action="store_true", help="build what is not built yet, measure nothing")
    parser.add_argument("--report", action="store_true", help="print the tables from the figures kept in --data")
    parser.add_argument("--bm25", action="store_true", help="the BM25 side alone (no Chroma): minutes, not hours")
    parser.add_argument("--queries", type=int, default=200, help="timed warm queries per mode")
    parser.add_argument("--xquad", type=Path, default=None, help="the XQuAD folder (xquad.tr.json)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--query-json", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--chroma-url", help=argparse.SUPPRESS)
    smoke_option(parser)
    args = parser.parse_args()
    if args.worker == "warm":
        return warm_worker(args.db, args.chroma_url, json.loads(args.query_json))
    if args.smoke:
        return smoke(args)
    sizes = [int(s) for s in args.sizes.split(",") if not args.quick or int(s) <= 100_000]
    xquad = (args.xquad or xquad_dir()) / "xquad.tr.json"
    args.data.mkdir(parents=True, exist_ok=True)
    measure_all(args, sizes, xquad)


def smoke(args: argparse.Namespace) -> None:
    """Every step once on 200 chunks of the smoke documents (xquad_set.smoke_xquad), in a
    temporary folder: the embedded store, then the BM25 side."""
    args.data = Path(tempfile.mkdtemp(prefix="indexer-scale-smoke-"))
    try:
        xquad = smoke_xquad(args.data / "xquad") / "xquad.tr.json"
        args.only, args.queries = "embedded", 3
        measure_all(args, [200], xquad)
        args.bm25 = True
        measure_all(args, [200], xquad)
    finally:
        shutil.rmtree(args.data, ignore_errors=True)


if __name__ == "__main__":
    main()
