"""An LLM through an Ollama server: one chat client (host from `Settings.ollama_host`,
temperature 0, a fixed seed), a cache of its replies, and its errors as one-line
messages. The contextual strategy (`chunkers/contexts.py`) and question making
(`questions/llm.py`) both use it."""

from .cache import ReplyCache
from .chat import LANGUAGE_NAMES, ChatClient, Reply
from .server import ollama_errors, resolve_host

__all__ = ["LANGUAGE_NAMES", "ChatClient", "Reply", "ReplyCache", "ollama_errors", "resolve_host"]
