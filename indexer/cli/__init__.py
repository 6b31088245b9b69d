"""The `indexer` command line: parse options, call the library, format the result.

Commands live by what they touch: `corpus` (chunk, build, gc), `search` (query, list,
dump, drop), `measure` (eval, tune), `datasets` (import-beir), `questions` (make a question
set), `serve` (the web app and JSON API), `live` (watch, mcp). Heavy libraries (chromadb,
embedding models, starlette, mcp) are imported inside
commands, so `indexer --help` stays fast.
"""

from __future__ import annotations

import click

from ..version import VERSION as __version__
from . import corpus, datasets, listing, live, measure, questions, search, serve


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="indexer")
def cli() -> None:
    """Chunk documents with several strategies, store each in Chroma, search with
    embeddings, BM25 or both, and measure which strategy wins on your own questions."""


for _module in (corpus, search, listing, measure, datasets, questions, serve, live):
    _module.register(cli)
