"""What stands between the network and the index: bearer-token auth, a cap on request
bodies, read-only methods, POSTs only from the server's own pages (or `--cors` origins) and
only as JSON, and JSON errors. Plain ASGI middleware, so each check runs before any route
reads a byte of the body."""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Sequence
from typing import NamedTuple

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY = 64 * 1024  # bytes: a query is at most 20,000 characters
PUBLIC = ("/api/health", "/api/openapi.json")  # no index data: open for liveness probes and clients
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"]
JSON = "application/json"
DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def error_body(status: int, message: str) -> bytes:
    return json.dumps({"error": message, "status": status}, ensure_ascii=False).encode("utf-8")


async def send_error(
    send: Send, status: int, message: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = error_body(status, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class TooLarge(Exception):
    pass


class Refusal(NamedTuple):
    """A request turned away before the app sees it: the status, the message, and any
    headers the answer needs."""

    status: int
    message: str
    headers: Sequence[tuple[bytes, bytes]] = ()


def origin_of(scheme: str, host: str) -> str:
    """`scheme://host[:port]` as a browser writes an Origin: lower case, no default port."""
    host = host.strip().lower().rstrip("/")
    default = DEFAULT_PORTS.get(scheme)
    return f"{scheme}://{host.removesuffix(default) if default else host}"


def own_origin(scope: Scope) -> str:
    """The origin of the server's own pages as this request reached it (its Host)."""
    host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
    return origin_of(scope.get("scheme", "http"), host)


def foreign_origin(scope: Scope, allowed: frozenset[str]) -> Refusal | None:
    """A POST a web page of another origin sent (its Origin header names that page's
    origin): refused, because a browser sends a simple cross-site POST without asking
    first. No Origin (curl, a script) is not a browser's cross-site request."""
    header = dict(scope["headers"]).get(b"origin")
    if scope["method"] != "POST" or header is None:
        return None
    given = header.decode("latin-1").strip().lower().rstrip("/")
    scheme, _, host = given.partition("://")
    if given in allowed or origin_of(scheme, host) == own_origin(scope):
        return None
    return Refusal(
        403,
        f"a POST from the web page at {given[:80]!r} is refused: the API takes POSTs "
        "from this server's own page, from a client that sends no Origin, "
        "or from an origin given to indexer serve --cors",
    )


def not_json(scope: Scope) -> Refusal | None:
    """A POST whose body is not declared JSON (a form or text/plain: what a web page can
    send to another site without a CORS preflight)."""
    if scope["method"] != "POST":
        return None
    header = dict(scope["headers"]).get(b"content-type", b"")
    media = header.decode("latin-1").split(";", 1)[0].strip().lower()
    if media == JSON:
        return None
    given = repr(media[:60]) if media else "no Content-Type"
    return Refusal(
        415,
        f"the body must be sent as {JSON} (the header 'Content-Type: {JSON}', "
        f"or curl --json), not with {given}",
    )


def host_name(header: bytes) -> str:
    """The host of a Host header, without its port (`[::1]:8765` -> `::1`)."""
    text = header.decode("latin-1").strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.split(":", 1)[0]


class Guard:
    """Bearer auth on /api (when a token is set), GET/HEAD/POST/OPTIONS only, request
    bodies capped at `max_body` bytes (by Content-Length, and while streaming), and with
    `hosts` (a loopback bind) the Host header checked: a web page must not reach this
    server through a DNS name rebound to 127.0.0.1. The address the server listens on
    (`127.0.0.2`, ASGI's `scope["server"]`) is always accepted besides `hosts`. A POST
    must be JSON and, when it carries an Origin, come from the server's own origin or one
    of `origins` (`--cors`): another site's page cannot make it search or write questions."""

    def __init__(
        self,
        app: ASGIApp,
        token: str | None = None,
        max_body: int = MAX_BODY,
        hosts: list[str] | None = None,
        origins: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.origins = frozenset(o.strip().lower().rstrip("/") for o in origins)
        self.token = token.encode("utf-8") if token else None
        self.max_body = max_body
        self.hosts = {h.strip("[]").lower() for h in hosts} if hosts else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        checks = (
            self._wrong_host,
            self._wrong_method,
            self._foreign,
            not_json,
            self._unauthorised,
            self._too_long,
        )
        for check in checks:
            refusal = check(scope)
            if refusal is not None:
                return await send_error(send, *refusal)
        return await self._capped(scope, receive, send)

    def _wrong_host(self, scope: Scope) -> Refusal | None:
        """With `hosts`: a Host header naming another host (DNS rebinding)."""
        if self.hosts is None:
            return None
        host = host_name(dict(scope["headers"]).get(b"host", b""))
        bound, port = scope.get("server") or ("127.0.0.1", None)  # the address it listens on
        hosts = self.hosts | {bound.lower()}
        if host in hosts:
            return None
        shown = f"[{bound}]:" if ":" in bound else f"{bound}:"
        return Refusal(
            400,
            f"this server answers to "
            f"{', '.join(sorted(hosts))}, not {host[:60]!r}: open it as "
            f"http://{shown}{port or '<port>'}/",
        )

    def _foreign(self, scope: Scope) -> Refusal | None:
        return foreign_origin(scope, self.origins)

    @staticmethod
    def _wrong_method(scope: Scope) -> Refusal | None:
        """A method that could change something: the server is read-only."""
        method = scope["method"]
        if method in ("GET", "HEAD", "POST", "OPTIONS"):
            return None
        return Refusal(
            405,
            f"{method} is not allowed: the server is read-only",
            [(b"allow", b"GET, HEAD, POST")],
        )

    def _unauthorised(self, scope: Scope) -> Refusal | None:
        """With a token: an API call (but the public ones and a CORS preflight) without it."""
        path = scope["path"]
        if (
            not self.token
            or not path.startswith("/api/")
            or path in PUBLIC
            or scope["method"] == "OPTIONS"
        ):
            return None
        if self._authorised(scope):
            return None
        return Refusal(
            401,
            "missing or wrong token: send the header "
            "'Authorization: Bearer <token>' (the token given to indexer serve --token)",
            [(b"www-authenticate", b'Bearer realm="indexer"')],
        )

    def _too_long(self, scope: Scope) -> Refusal | None:
        """A Content-Length that is not a number, or over the cap."""
        length = dict(scope["headers"]).get(b"content-length")
        if length is None:
            return None
        try:
            declared = int(length)
        except ValueError:
            return Refusal(400, "the Content-Length header is not a number")
        return Refusal(413, self._too_large(declared)) if declared > self.max_body else None

    def _authorised(self, scope: Scope) -> bool:
        header = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, given = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)

    def _too_large(self, size: int) -> str:
        return f"the request body is {size:,} bytes; the limit is {self.max_body:,} (send a query, not a document)"

    async def _capped(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise TooLarge
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, watched_send)
        except TooLarge:
            if not started:
                await send_error(send, 413, self._too_large(received))
