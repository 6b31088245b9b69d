"""One `Settings` object: where the index lives, which Chroma and embedder to use, where
caches go. It alone reads the environment; the CLI and the library pass it around.

Library functions take it as their one configuration parameter, `settings: Settings |
None = None` (None: `Settings.load()`, resolved where the library is entered), with
nothing loose beside it. `embedder` is what a build embeds with; read-side functions
choose a collection by the embedder it was built with through their own `built_with`.

    Settings.load()                       # environment, then defaults
    Settings.load(db="idx", embedder="e5-small")   # explicit values win over the environment

| setting | environment | default |
|---|---|---|
| db | INDEXER_DB | ./.indexer |
| chroma_url | INDEXER_CHROMA_URL | none (the embedded database in db) |
| embedder | INDEXER_EMBEDDER | use-m3 |
| ollama_host | OLLAMA_HOST | http://127.0.0.1:11434 |
| cache_dir | INDEXER_CACHE_DIR, else $XDG_CACHE_HOME/indexer | ~/.cache/indexer |
| tiktoken_cache | TIKTOKEN_CACHE_DIR | cache_dir/tiktoken |
| lease_ttl | INDEXER_LEASE_TTL | 30 (seconds a dead builder's lease on a server lasts) |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_DB_DIR = ".indexer"
DEFAULT_EMBEDDER = "use-m3"
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024
DEFAULT_MAX_PDF_PAGES = 2000

ENV = {
    "db": "INDEXER_DB",
    "chroma_url": "INDEXER_CHROMA_URL",
    "embedder": "INDEXER_EMBEDDER",
    "ollama_host": "OLLAMA_HOST",
    "cache_dir": "INDEXER_CACHE_DIR",
    "tiktoken_cache": "TIKTOKEN_CACHE_DIR",
}


@dataclass(frozen=True)
class Settings:
    db: Path = Path(DEFAULT_DB_DIR)
    chroma_url: str | None = None
    embedder: str = DEFAULT_EMBEDDER
    ollama_host: str = DEFAULT_OLLAMA_HOST
    cache_dir: Path = Path("~/.cache/indexer").expanduser()
    tiktoken_cache: Path | None = None
    lease_ttl: float = 30.0  # seconds a build lease on a Chroma server outlives its last heartbeat

    @classmethod
    def load(cls, **overrides) -> Settings:
        """Explicit values (None = not given) over the environment over the defaults."""
        env = os.environ
        base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        values = {
            "db": Path(env.get(ENV["db"]) or DEFAULT_DB_DIR).expanduser(),
            "chroma_url": env.get(ENV["chroma_url"]) or None,
            "embedder": (env.get(ENV["embedder"]) or DEFAULT_EMBEDDER).strip(),
            "ollama_host": env.get(ENV["ollama_host"]) or DEFAULT_OLLAMA_HOST,
            "cache_dir": Path(env.get(ENV["cache_dir"]) or os.path.join(base, "indexer")).expanduser(),
            "tiktoken_cache": Path(env[ENV["tiktoken_cache"]]) if env.get(ENV["tiktoken_cache"]) else None,
            "lease_ttl": float(env.get("INDEXER_LEASE_TTL") or 30.0),
        }
        for key, value in overrides.items():
            if key not in values:
                raise TypeError(f"unknown setting {key!r}")
            if value is not None and value != "":
                values[key] = Path(value).expanduser() if key in ("db", "cache_dir", "tiktoken_cache") else value
        return cls(**values)

    def with_(self, **overrides) -> Settings:
        """A copy with the given (non-None) values replaced."""
        given = {k: (Path(v).expanduser() if k in ("db", "cache_dir") else v) for k, v in overrides.items()
                 if v is not None}
        return replace(self, **given) if given else self

    @property
    def tiktoken_dir(self) -> Path:
        return self.tiktoken_cache or self.cache_dir / "tiktoken"


def settings_for(settings: Settings | None = None) -> Settings:
    """The settings a library call runs with: the ones given, else the environment's
    (`Settings.load()`). Called where the library is entered; inner code receives them."""
    return settings if settings is not None else Settings.load()
