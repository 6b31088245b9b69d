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
| embedder | INDEXER_EMBEDDER | auto (per collection: bge-small-en for English and code, else use-m3) |
| ollama_host | OLLAMA_HOST | http://127.0.0.1:11434 |
| cache_dir | INDEXER_CACHE_DIR, else $XDG_CACHE_HOME/indexer | ~/.cache/indexer |
| tiktoken_cache | TIKTOKEN_CACHE_DIR | cache_dir/tiktoken |
| lease_ttl | INDEXER_LEASE_TTL | 30 (seconds a dead builder's lease on a server lasts) |
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

DEFAULT_DB_DIR = ".indexer"
# `auto`: no model named, so each build chooses by its documents (`embeddings.choose_embedder`:
# the English model for English and source code, the multilingual one for the rest)
AUTO_EMBEDDER = "auto"
DEFAULT_EMBEDDER = AUTO_EMBEDDER
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

PathArg = str | os.PathLike[str]
T = TypeVar("T")
D = TypeVar("D")


def _or(value: T | None, default: T) -> T:
    """`value` when given (not None), else `default`."""
    return default if value is None else value


def _path_or(value: PathArg | None, default: D) -> Path | D:
    """`value` as a path (`~` expanded) when given (not None), else `default`."""
    return default if value is None else Path(value).expanduser()


def _given(value: T) -> T | None:
    """None for an empty string: to `load`, "" means not given."""
    return None if value == "" else value


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
    def load(
        cls,
        *,
        db: PathArg | None = None,
        chroma_url: str | None = None,
        embedder: str | None = None,
        ollama_host: str | None = None,
        cache_dir: PathArg | None = None,
        tiktoken_cache: PathArg | None = None,
        lease_ttl: float | None = None,
    ) -> Settings:
        """Explicit values (None or "" = not given) over the environment over the defaults."""
        env = from_environment(os.environ)
        return cls(
            db=_path_or(_given(db), env.db),
            chroma_url=_or(_given(chroma_url), env.chroma_url),
            embedder=_or(_given(embedder), env.embedder),
            ollama_host=_or(_given(ollama_host), env.ollama_host),
            cache_dir=_path_or(_given(cache_dir), env.cache_dir),
            tiktoken_cache=_path_or(_given(tiktoken_cache), env.tiktoken_cache),
            lease_ttl=_or(_given(lease_ttl), env.lease_ttl),
        )

    def with_(
        self,
        *,
        db: PathArg | None = None,
        chroma_url: str | None = None,
        embedder: str | None = None,
        ollama_host: str | None = None,
        cache_dir: PathArg | None = None,
        tiktoken_cache: PathArg | None = None,
        lease_ttl: float | None = None,
    ) -> Settings:
        """A copy with the given (non-None) values replaced (itself when none is given)."""
        copy = replace(
            self,
            db=_path_or(db, self.db),
            chroma_url=_or(chroma_url, self.chroma_url),
            embedder=_or(embedder, self.embedder),
            ollama_host=_or(ollama_host, self.ollama_host),
            cache_dir=_path_or(cache_dir, self.cache_dir),
            tiktoken_cache=_path_or(tiktoken_cache, self.tiktoken_cache),
            lease_ttl=_or(lease_ttl, self.lease_ttl),
        )
        return self if copy == self else copy

    @property
    def tiktoken_dir(self) -> Path:
        return self.tiktoken_cache or self.cache_dir / "tiktoken"


def from_environment(env: Mapping[str, str]) -> Settings:
    """The settings `env` (the environment) gives, defaults where it says nothing."""
    cache_home = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tiktoken = env.get(ENV["tiktoken_cache"])
    return Settings(
        db=Path(env.get(ENV["db"]) or DEFAULT_DB_DIR).expanduser(),
        chroma_url=env.get(ENV["chroma_url"]) or None,
        embedder=(env.get(ENV["embedder"]) or DEFAULT_EMBEDDER).strip(),
        ollama_host=env.get(ENV["ollama_host"]) or DEFAULT_OLLAMA_HOST,
        cache_dir=Path(
            env.get(ENV["cache_dir"]) or os.path.join(cache_home, "indexer")
        ).expanduser(),
        tiktoken_cache=Path(tiktoken) if tiktoken else None,
        lease_ttl=float(env.get("INDEXER_LEASE_TTL") or 30.0),
    )


def settings_for(settings: Settings | None = None) -> Settings:
    """The settings a library call runs with: the ones given, else the environment's
    (`Settings.load()`). Called where the library is entered; inner code receives them."""
    return settings if settings is not None else Settings.load()


def index_options(db: Path, url: str | None = None) -> list[str]:
    """The options a command line needs to reach the index at `db` (and the Chroma server
    at `url`): none for the one it reaches without them (the default folder, or the
    environment's), else `--db PATH` and `--chroma-url URL`."""
    default = from_environment(os.environ)
    options = []
    if Path(db).expanduser().resolve() != default.db.resolve():
        options += ["--db", str(db)]
    if url and url != default.chroma_url:
        options += ["--chroma-url", url]
    return options


def build_command(*args: str, db: Path, url: str | None = None) -> str:
    """`indexer build ARGS` as a message advises it, naming the index when the command
    would not reach it otherwise: run from another folder, `indexer build a b` alone
    would build `./.indexer` instead."""
    return indexer_command("build", *args, db=db, url=url)


def indexer_command(verb: str, *args: str, db: Path, url: str | None = None) -> str:
    """`indexer VERB ARGS` as a message advises it, naming the index (`build_command`)."""
    return shlex.join(["indexer", verb, *args, *index_options(db, url)])
