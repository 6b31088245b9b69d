"""Chat with one model on an Ollama server, through the official client: a system and a
user message, temperature 0 and a fixed seed (the same prompt gives the same reply), the
reply's text and its token counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .server import ollama_errors, resolve_host

# the language a prompt asks the reply in, by the code `detect_language` gives
LANGUAGE_NAMES = {"tr": "Turkish", "en": "English"}
SEED = 42


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model wrote, and the tokens it read and wrote."""

    text: str
    input_tokens: int
    output_tokens: int


class ChatClient:
    """One model on one Ollama server. `purpose` and `fallback` word its errors: "cannot
    reach the Ollama server at URL{purpose}: ...{fallback}"."""

    def __init__(
        self,
        model: str,
        host: str | None,
        *,
        purpose: str = "",
        fallback: str = "",
        missing: str = "give the Ollama model: ollama:<model>",
    ) -> None:
        if not model:
            raise UsageError(missing)
        self.model = model
        self.backend = f"ollama:{model}"
        self.host = resolve_host(host)
        self.purpose = purpose
        self.fallback = fallback
        self._client: Any = None

    def chat(self, system: str, user: str, *, max_tokens: int, json: bool = False) -> Reply:
        """The model's reply to `user` under `system`, at most `max_tokens` long; `json`
        asks for one JSON object."""
        import ollama

        if self._client is None:
            self._client = ollama.Client(host=self.host)
        extra = {"format": "json"} if json else {}
        with ollama_errors(self.host, self.model, self.purpose, self.fallback):
            response = self._client.chat(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                options={"temperature": 0, "seed": SEED, "num_predict": max_tokens},
                **extra,
            )
        return Reply(
            response.message.content or "",
            int(getattr(response, "prompt_eval_count", 0) or 0),
            int(getattr(response, "eval_count", 0) or 0),
        )
