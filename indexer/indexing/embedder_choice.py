"""Which embedder a build uses: the one named, else the one `embeddings.choose_embedder`
picks from what discovery found (the share of source code, the analyzer's language and
how English a sample of the files reads). `build` and `indexer chunk` ask here."""

from __future__ import annotations

from ..embeddings import EmbedderChoice, choose_embedder, english_share
from ..loaders import Discovery, sample_text
from ..settings import Settings

SAMPLE = 25  # files read to tell the language (their first 20,000 characters each)


def samples(found: Discovery, encoding: str | None) -> list[str]:
    """Some text of the first files found: what telling their language reads."""
    return [sample_text(src, encoding) for src in found.files[:SAMPLE]]


def code_share(found: Discovery) -> float:
    """The share of the found files' bytes that are source code."""
    total = sum(f.size for f in found.files)
    code = sum(f.size for f in found.files if f.format == "code")
    return code / total if total else 0.0


def embedder_for(
    settings: Settings, found: Discovery, lang: str, sample: list[str] | None
) -> EmbedderChoice:
    """The build's embedder: `settings.embedder` when named, else chosen from the files
    (`lang`: the analyzer's language; `sample`: the texts it was detected from, None when
    the language was given)."""
    return choose_embedder(
        settings.embedder,
        lang=lang,
        code_share=code_share(found),
        english=None if sample is None else english_share(sample),
    )
