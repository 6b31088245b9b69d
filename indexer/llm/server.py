"""An Ollama server: its host, and its errors as one-line messages that say what to do.

The chat client here and the Ollama embedder (`embeddings/ollama.py`) reach the same
server the same way."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..errors import EmbedderError
from ..settings import DEFAULT_OLLAMA_HOST


def resolve_host(host: str | None) -> str:
    """The server's URL: the one given (`Settings.ollama_host`), else Ollama's default."""
    return host or DEFAULT_OLLAMA_HOST


@contextlib.contextmanager
def ollama_errors(
    host: str, model: str, purpose: str, unreachable_hint: str = ""
) -> Iterator[None]:
    """Turn the ollama client's errors into one-line messages that say what to do.

    `purpose` follows the model in messages (" for questions"); `unreachable_hint` ends
    the unreachable-server message (", or use --llm extractive")."""
    import ollama

    try:
        yield
    except ConnectionError:
        raise EmbedderError(
            f"cannot reach the Ollama server at {host}{purpose}: start it with `ollama serve`, "
            f"or pass --ollama-host / set OLLAMA_HOST{unreachable_hint}"
        ) from None
    except ollama.ResponseError as exc:
        if exc.status_code == 404 or "not found" in str(exc.error).lower():
            raise EmbedderError(
                f"the Ollama server at {host} has no model {model!r}: run `ollama pull {model}`"
            ) from None
        raise EmbedderError(f"Ollama failed with {model}{purpose}: {exc.error}") from None
