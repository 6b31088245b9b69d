"""The bare model pass: what a build cannot go below. A fresh process imports the embedder,
loads it and embeds a collection's distinct indexed texts in the model's batches, and
nothing else (no chunking, no store). `bench.run` times it as it times a build, in a
process of its own (start-up, imports and the model's loading included).

    python -m bench.model_pass TEXTS.json [--embedder use-m3]    # a JSON list of texts
    python -m bench.model_pass --smoke

`write_texts(db, strategy, path)` writes the texts of a built collection (each distinct
`indexed_text` once, as the build's cache embeds them) for it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.common import smoke_option


def write_texts(db: Path, strategy: str, path: Path) -> int:
    """The distinct indexed texts of `strategy`'s collection in the index at `db`, as a
    JSON list in `path`; returns how many."""
    from indexer.retrieval import Index
    from indexer.settings import Settings

    index = Index.open(strategy, settings=Settings.load(db=db))
    texts = list(dict.fromkeys(c.indexed_text for c in index.chunks()))
    path.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    return len(texts)


def embed_all(texts: list[str], embedder: str) -> dict:
    """Load the model and embed the texts in its batches: the seconds of each."""
    t0 = time.perf_counter()
    from indexer.embeddings import get_embedder

    model = get_embedder(embedder)
    model.embed_documents(texts[:1])  # the model is loaded on first use
    loaded = time.perf_counter() - t0
    for i in range(1, len(texts), model.batch_size):
        model.embed_documents(texts[i : i + model.batch_size])
    return {"texts": len(texts), "load_s": round(loaded, 3), "seconds": round(time.perf_counter() - t0, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("texts", type=Path, nargs="?", help="a JSON list of texts (not with --smoke)")
    parser.add_argument("--embedder", default="use-m3")
    smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="indexer-model-pass-") as tmp:
            path = Path(tmp) / "texts.json"
            path.write_text(json.dumps(["Kargo ücreti 39,90 TL'dir.", "İade 14 gündür."]), encoding="utf-8")
            print(json.dumps(embed_all(json.loads(path.read_text(encoding="utf-8")), args.embedder)))
        return
    if args.texts is None:
        parser.error("TEXTS is needed (or --smoke)")
    print(json.dumps(embed_all(json.loads(args.texts.read_text(encoding="utf-8")), args.embedder)))


if __name__ == "__main__":
    main()
