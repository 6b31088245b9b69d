"""`indexer`'s command line with the bench-only embedder (`bench-hash`) registered: what
`bench/scale.py` runs as a new process (cold `indexer query`, `indexer serve`).

    python -m bench.scale_cli query "..." -s fixed64 --db DIR/embedded-1M/db
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_kit  # noqa: E402,F401  (registers bench-hash)

from indexer.cli import cli  # noqa: E402

if __name__ == "__main__":
    cli()
