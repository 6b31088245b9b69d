"""`python -m tests.pausing ARGS...`: the `indexer` command, whose builds pause at a stage
for the crash tests (tests/faultkit.py `paused`, tests/test_reliability.py).

With INDEXER_PAUSE_AT=<stage> (one of `indexer.indexing.options.STAGES`: locked,
embedding, publish, published) in the environment, a build writes <stage> to the file
INDEXER_PAUSE_FILE names when it first reaches that stage, then waits there until the
file is removed or the process is killed; `<stage>:<seconds>` waits that long and goes
on. It does so through the extension point builds offer, `BuildOptions.on_stage`: the
hook is added to the options of every `build` the command runs, after the command's own
hook; nothing else changes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import indexer.indexing.building as building
from indexer.indexing.options import STAGES, BuildOptions


def pause_at(point: str, marker: Path) -> Callable[[str], None]:
    """An `on_stage` hook that pauses once at `point` (`stage` or `stage:seconds`)."""
    stage, _, seconds = point.partition(":")
    if stage not in STAGES:
        raise SystemExit(f"INDEXER_PAUSE_AT: {stage!r} is not a stage ({', '.join(STAGES)})")
    reached: set[str] = set()

    def on_stage(name: str) -> None:
        if name != stage or name in reached:  # once: `embedding` comes with every batch
            return
        reached.add(name)
        marker.write_text(name)
        if seconds:
            time.sleep(float(seconds))
            return
        while marker.exists():
            time.sleep(0.05)

    return on_stage


def install(hook: Callable[[str], None]) -> None:
    """Every `indexer.indexing.building.build` call from now on runs with `hook` as its
    options' `on_stage` (the CLI looks `build` up when a command runs)."""
    real = building.build

    def build(paths, strategies, options: BuildOptions | None = None, **kw):
        options = options or BuildOptions()
        own = options.on_stage  # the command's own hook (what Ctrl-C says) is told first

        def both(name: str) -> None:
            if own is not None:
                own(name)
            hook(name)

        return real(paths, strategies, replace(options, on_stage=both), **kw)

    building.build = build


def main() -> None:
    point = os.environ.get("INDEXER_PAUSE_AT", "")
    if point:
        install(pause_at(point, Path(os.environ["INDEXER_PAUSE_FILE"])))
    from indexer.cli import cli

    cli(prog_name="indexer")


if __name__ == "__main__":
    main()
