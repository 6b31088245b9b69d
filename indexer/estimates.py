"""What a build says about its own duration: one line from the first embedding batch."""

from __future__ import annotations


def estimate_line(chunks: int, done_bytes: float, seconds: float, total_bytes: int, over: float = 30.0) -> str | None:
    """One line after the first embedding batch: how many chunks the whole input makes
    at the rate the first files did, and how long embedding them takes at the first
    batch's speed; None when that is under `over` seconds."""
    if chunks <= 0 or seconds <= 0 or done_bytes <= 0:
        return None
    expected = max(chunks, round(chunks * total_bytes / done_bytes))
    rest = expected / (chunks / seconds)
    if rest < over:
        return None
    when = f"{rest / 60:.0f} min" if rest >= 90 else f"{rest:.0f} s"
    return f"embedding ~{expected:,} chunks, about {when} at the first batch's rate ({chunks / seconds:.0f} chunks/s)"
