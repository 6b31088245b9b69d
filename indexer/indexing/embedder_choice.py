"""Which embedder a build uses: the one named, else the one `embeddings.choose_embedder`
picks from what discovery found (the share of source code, the analyzer's language and
how English a sample of the files reads). `build` and `indexer chunk` ask here.

A choice by the rule sticks: a later build of the same folders keeps the embedder the
last one chose (`kept_choice`), though the files now read otherwise, until `--full`
chooses again: a folder near the rule's line would otherwise flip models, and embed
everything again, on the day a few files change.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..chunkers import StrategySpec
from ..embeddings import (
    ENGLISH_EMBEDDER,
    EmbedderChoice,
    choose_embedder,
    english_installed,
    english_share,
)
from ..loaders import Discovery, sample_text
from ..settings import Settings
from ..store import Entry, Store

SAMPLE = 25  # files read to tell the language...
# ...their first characters each, about two pages: so each file weighs alike, and one long
# English page does not outvote ten short Turkish ones
SAMPLE_CHARS = 5_000


def samples(found: Discovery, encoding: str | None) -> list[str]:
    """Some text of SAMPLE files spread evenly over those found (in path order): what
    telling their language reads. Spread, so a folder of English notes and Turkish
    reports is told by both, not by whichever sorts first; SAMPLE_CHARS of each."""
    files = found.files
    step = max(1.0, len(files) / SAMPLE)
    picked = sorted({int(i * step) for i in range(min(SAMPLE, len(files)))})
    return [sample_text(files[i], encoding)[:SAMPLE_CHARS] for i in picked]


def code_share(found: Discovery) -> float:
    """The share of the found files' bytes that are source code."""
    total = sum(f.size for f in found.files)
    code = sum(f.size for f in found.files if f.format == "code")
    return code / total if total else 0.0


def embedder_for(
    settings: Settings,
    found: Discovery,
    lang: str,
    sample: list[str] | None,
    kept: EmbedderChoice | None = None,
) -> EmbedderChoice:
    """The build's embedder: `settings.embedder` when named, else chosen from the files
    (`lang`: the analyzer's language; `sample`: the texts it was detected from, None when
    the language was given), else `kept`, the last build's choice, when it differs."""
    choice = choose_embedder(
        settings.embedder,
        lang=lang,
        code_share=code_share(found),
        english=None if sample is None else english_share(sample),
    )
    if choice.by != "rule" or kept is None or kept.name == choice.name:
        return choice
    if kept.name == ENGLISH_EMBEDDER and not english_installed():
        return choice  # its package is gone: the rule's fallback says so
    now = choice.why.split(":")[0]
    return EmbedderChoice(
        name=kept.name,
        by="rule",
        reason=kept.reason,
        why=f"{kept.why}; kept from the last build, though the files now read as {now}, "
        "until a --full build chooses again",
    )


def rule_chosen(store: Store, specs: Sequence[StrategySpec], source: list[str]) -> list[Entry]:
    """The collections of the strategies `specs` built from the folders `source` whose
    embedder the rule chose."""
    folders = sorted(source)
    strategies = {spec.name for spec in specs}
    return [
        e
        for e in store.catalogue.entries()
        if e.strategy in strategies
        and sorted(e.source) == folders
        and isinstance(e.extra.get("embedder_choice"), dict)
        and e.extra["embedder_choice"].get("by") == "rule"
    ]


def kept_choice(
    store: Store,
    specs: Sequence[StrategySpec],
    source: list[str],
    *,
    lang: str,
    again: bool = False,
) -> EmbedderChoice | None:
    """The embedder the last build of one of the strategies `specs` from the folders
    `source` chose by the rule (the newest such collection's). None when there is none,
    when the build chooses `again` (`--full`), or when the files' language (`lang`, the
    analyzer's) changed since: the build reads everything again then, and keeping the
    model would save nothing."""
    chosen = [] if again else rule_chosen(store, specs, source)
    if not chosen:
        return None
    last = max(chosen, key=lambda e: e.built_at)
    if (last.extra.get("analyzer") or {}).get("lang", lang) != lang:
        return None
    said = last.extra["embedder_choice"]
    why = str(said.get("why", "")).split("; kept from the last build")[0]
    return EmbedderChoice(
        name=last.embedder, by="rule", reason=str(said.get("reason", "")), why=why
    )


def superseded(
    store: Store, specs: Sequence[StrategySpec], source: list[str], choice: EmbedderChoice
) -> list[Entry]:
    """The collections the rule chose another embedder for before this build's `choice`:
    they stay beside the new ones until dropped."""
    if choice.by != "rule":
        return []
    return [e for e in rule_chosen(store, specs, source) if e.embedder != choice.name]
