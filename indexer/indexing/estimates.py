"""A build's clock: the time of each stage, and one line from the first embedding batches
saying how long the rest will take (at one rate per kind of text, which it names)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
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


@dataclass(kw_only=True)
class FirstBatch:
    """What a build knows once its first chunk batches are embedded (a few seconds'
    worth, `chunk_stream.ESTIMATE_AFTER`): the batches (`chunks` texts in `seconds` of
    embedding, the model already loaded), the text the files read
    so far hold (`chars`) against all of it (`total`, foreseen from the bytes), the
    queries the build will embed to measure its embedder (`probes`: a full build's
    `retrieval.worth`, one chunk's time each), and, when units are embedded at build
    time, how many of their texts took how long for how much text so far. The chunks
    still to come are foreseen from the tokens the batches cover against the tokens of all
    the text (at the density of the files read so far: a first batch of a man page's
    synopsis holds 0.32 tokens a character, the page 0.25, the folder 0.22), else from
    characters."""

    chunks: int
    seconds: float
    chars: float
    total: int
    tokens: int = 0  # of the text the batches' chunks cover (0: unknown)
    density: float = 0.0  # tokens per character of the files read so far (0: unknown)
    probes: int = 0
    unit_texts: int = 0
    unit_seconds: float = 0.0
    unit_chars: int = 0


def estimate_line(first: FirstBatch, over: float = 30.0) -> str | None:
    """One line after the first embedding batches: how many texts the whole input makes
    at the rate the first files did, and how long embedding them takes, each count
    divided by the one rate the line names (chunks and probes at the first batches'; the
    units still to come at theirs so far). None when that is under `over` seconds."""
    if first.chunks <= 0 or first.seconds <= 0 or first.chars <= 0:
        return None
    expected = max(first.chunks, round(first.chunks * _share(first)))
    probes = min(first.probes, expected)
    rate = first.chunks / first.seconds
    rest = (expected + probes) / rate
    what = f"~{expected:,} chunks" + (f" and {probes} probe queries" if probes else "")
    rates = f"{rate:.0f} texts/s"
    units = _units_to_come(first)
    if units:
        more, unit_rate = units
        rest += more / unit_rate
        what += f", then ~{more:,} more sentences"
        rates += f" and {unit_rate:.0f} sentences/s"
    if rest < over:
        return None
    return f"embedding {what}: about {duration(rest)} at {rates}"


def _share(first: FirstBatch) -> float:
    """How many times the batch's text the whole input holds."""
    if first.tokens > 0 and first.density > 0:
        return first.total * first.density / first.tokens
    return first.total / first.chars


class TextSample:
    """What a build learns of its text before it foresees the rest: the tokens per
    character of the files read so far (their first LIMIT characters each), and the tokens
    of the text the first batches' chunks newly cover."""

    LIMIT = 1_000_000

    def __init__(self, count: Callable[[str], int]) -> None:
        self.count = count
        self.chars = 0
        self.tokens = 0
        self.covered = 0
        self.open = True  # until the estimate is made

    def read(self, text: str) -> None:
        if self.open:
            head = text[: self.LIMIT]
            self.chars += len(head)
            self.tokens += self.count(head)

    def covers(self, text: str) -> None:
        if self.open:
            self.covered += self.count(text)

    @property
    def density(self) -> float:
        return self.tokens / self.chars if self.chars else 0.0


def _units_to_come(first: FirstBatch) -> tuple[int, float] | None:
    """(unit texts still to embed, their rate so far) when units are embedded at build
    time; None when they are not, or all are done."""
    if first.unit_texts <= 0 or first.unit_seconds <= 0 or first.unit_chars <= 0:
        return None
    left = max(first.total - first.unit_chars, 0)
    more = round(first.unit_texts * left / first.unit_chars)
    return (more, first.unit_texts / first.unit_seconds) if more else None


def duration(seconds: float) -> str:
    """`40 s`, `3 min`: how long something will take, as a build line says it."""
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
