"""`indexer`'s command line with the bench-only embedder (`bench-hash`) registered: what
`bench/scale.py` runs as a new process (cold `indexer query`, `indexer serve`).

    python -m bench.scale_cli query "..." -s fixed64 --db DIR/embedded-1M/db
"""



from bench import scale_kit  # noqa: F401  (registers bench-hash)
from indexer.cli import cli

if __name__ == "__main__":
    cli()
