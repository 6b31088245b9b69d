"""A STAND-IN for an Ollama server, for tests only.

No Ollama server can run on our machines (no binary, no model downloads), so the tests
exercise the real `ollama` Python client against this small HTTP server. It speaks
Ollama's real wire format for `/api/embed`, `/api/chat`, `/api/generate` and `/api/tags`
(JSON bodies and field names as in Ollama's API documentation). Its "models" are toys:
embeddings are hashed bags of words, chat replies are built from the prompt. It records
every request so tests can check what the client sent (prefixes, options, seeds).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

DIM = 64


def toy_embedding(text: str) -> list[float]:
    vec = np.zeros(DIM, dtype=np.float64)
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
        vec[h % DIM] += 1.0 if (h >> 8) & 1 else -1.0
    norm = np.linalg.norm(vec) or 1.0
    return (vec / norm).tolist()


class StandInOllama:
    def __init__(self, models=("nomic-embed-text:latest", "gemma3:4b"), chat_reply=None) -> None:
        self.models = list(models)
        self.requests: list[tuple[str, dict]] = []
        self.chat_reply = chat_reply  # callable(messages) -> str, or None for the default
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == "/api/tags":
                    outer.requests.append(("tags", {}))
                    self._send(200, {"models": [{"name": m, "model": m, "size": 1} for m in outer.models]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                data = json.loads(self.rfile.read(length) or b"{}")
                route = self.path.rstrip("/")
                outer.requests.append((route, data))
                model = data.get("model", "")
                if not outer.has(model):
                    self._send(404, {"error": f"model \"{model}\" not found, try pulling it first"})
                    return
                if route == "/api/embed":
                    inputs = data.get("input")
                    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
                    self._send(200, {"model": model, "embeddings": [toy_embedding(t) for t in inputs],
                                     "prompt_eval_count": sum(len(t.split()) for t in inputs)})
                elif route == "/api/chat":
                    messages = data.get("messages", [])
                    reply = outer.reply(messages)
                    prompt_tokens = sum(len(m.get("content", "").split()) for m in messages)
                    self._send(200, {
                        "model": model, "created_at": "2026-01-01T00:00:00Z",
                        "message": {"role": "assistant", "content": reply}, "done": True, "done_reason": "stop",
                        "prompt_eval_count": prompt_tokens, "eval_count": len(reply.split()),
                    })
                elif route == "/api/generate":
                    reply = outer.reply([{"role": "user", "content": data.get("prompt", "")}])
                    self._send(200, {"model": model, "response": reply, "done": True,
                                     "prompt_eval_count": len(data.get("prompt", "").split()),
                                     "eval_count": len(reply.split())})
                else:
                    self._send(404, {"error": "not found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def has(self, model: str) -> bool:
        names = {m for m in self.models} | {m.split(":")[0] for m in self.models if m.endswith(":latest")}
        return model in names

    def reply(self, messages: list[dict]) -> str:
        if self.chat_reply is not None:
            return self.chat_reply(messages)
        user = messages[-1].get("content", "") if messages else ""
        match = re.search(r"<chunk>\s*(.+?)\s*</chunk>", user, re.S)
        first = (match.group(1) if match else user).strip().split("\n")[0][:80]
        return f"Bu bölüm şu konuyu anlatır: {first}"

    def __enter__(self) -> StandInOllama:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
