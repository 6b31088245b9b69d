"""A build's clock: the time of each stage, and one line from the first embedding batch
saying how long the rest will take."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


class Timer:
    """Seconds spent per stage, summed over every time the stage runs."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, seconds: float) -> None:
        self.totals[name] = self.totals.get(name, 0.0) + seconds

    def each(self, name: str, items: Iterable[T]) -> Iterator[T]:
        """The items of a lazy iterable, the time spent making them counted to `name`
        (not the time the caller spends on each)."""
        it = iter(items)
        while True:
            t0 = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                self.add(name, time.perf_counter() - t0)
                return
            self.add(name, time.perf_counter() - t0)
            yield item


def estimate_line(
    chunks: int,
    done_bytes: float,
    seconds: float,
    total_bytes: int,
    over: float = 30.0,
    units: tuple[float, float] = (0.0, 0.0),
    probes: int = 0,
) -> str | None:
    """One line after the first embedding batch: how many chunks the whole input makes
    at the rate the first files did, and how long embedding them takes at the first
    batch's speed, plus the rest of the files' units (the sentences answer-sized context
    packs, embedded file by file before its chunks) at the rate the files so far took:
    `units` is (seconds, bytes) of the files whose units are done. None when that is
    under `over` seconds. Bytes stand for any one measure of the input: a build passes
    characters of text (`chunk_stream`), which markup does not inflate. `probes`: the
    queries the build embeds to measure the embedder once its chunks are in (a full
    build's `retrieval.worth`; e5-small: a third of a stranger's small build), one chunk's
    time each."""
    if chunks <= 0 or seconds <= 0 or done_bytes <= 0:
        return None
    expected = max(chunks, round(chunks * total_bytes / done_bytes))
    rest = (expected + min(probes, expected)) / (chunks / seconds)
    unit_seconds, unit_bytes = units
    if unit_seconds > 0 and unit_bytes > 0:
        rest += unit_seconds / unit_bytes * max(total_bytes - unit_bytes, 0)
    if rest < over:
        return None
    return (
        f"embedding ~{expected:,} chunks and the files' sentences, about {duration(rest)} at the "
        f"first batch's rate ({chunks / seconds:.0f} chunks/s)"
    )


def duration(seconds: float) -> str:
    """`40 s`, `3 min`: how long something will take, as a build line says it."""
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
