"""Build a folder with each strategy in one process, cold then again with `--full`
(every vector from the embedding cache), each strategy in its own index folder (so no
strategy reads another's vectors from the cache). Prints one JSON line per strategy.

    python -m bench.build_probe FOLDER WORKDIR STRATEGY...

The model is loaded before the first build and its loading time printed apart: the
builds measure chunking, embedding, writing and indexing, not start-up.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from bench.common import folder_size
from indexer.indexing.options import BuildOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("work", type=Path, help="one index folder per strategy is made in it")
    parser.add_argument("strategies", nargs="+")
    args = parser.parse_args()
    folder, work, strategies = args.folder, args.work, args.strategies
    from indexer.embeddings import get_embedder
    from indexer.indexing.building import build
    from indexer.settings import Settings
    from indexer.store import Store

    t0 = time.perf_counter()
    get_embedder().embed_documents(["warm up"])
    print(json.dumps({"model_load_s": round(time.perf_counter() - t0, 3)}), flush=True)
    for strategy in strategies:
        db = work / f"build-{strategy.replace(':', '-')}"
        shutil.rmtree(db, ignore_errors=True)
        [cold] = build([folder], [strategy], settings=Settings.load(db=db))
        [warm] = build([folder], [strategy], BuildOptions(full=True), settings=Settings.load(db=db))
        disk = folder_size(db)
        cache = Store(Settings.load(db=db)).cache_dir / "embeddings.sqlite"
        print(json.dumps({"strategy": strategy, "cold": cold.to_dict(), "warm": warm.to_dict(), "disk": disk,
                          "cache_bytes": cache.stat().st_size if cache.exists() else 0}), flush=True)


if __name__ == "__main__":
    main()
