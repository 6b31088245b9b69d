"""`indexer serve`: the browser views and the JSON API over the stored collections."""

from __future__ import annotations

import socket

import click

from .common import handle_errors, note_function, settings_from
from .options import db_options, ollama_option, quiet_option

MIN_TOKEN = 16


def register(cli: click.Group) -> None:
    cli.add_command(serve)


def _read_token(token: str | None, token_file: str | None) -> str | None:
    from ..errors import UsageError

    if token and token_file:
        raise UsageError("give --token or --token-file, not both")
    if token_file:
        with open(token_file, encoding="utf-8") as f:
            token = f.readline().strip()
    if token is not None and len(token) < MIN_TOKEN:
        raise UsageError(
            f"the token is {len(token)} characters; use at least {MIN_TOKEN} random ones, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe())'"
        )
    return token


def _check_bind(host: str, token: str | None) -> None:
    from ..errors import UsageError
    from ..serve.guard import is_loopback

    if not is_loopback(host) and not token:
        raise UsageError(
            f"--host {host} lets other machines reach the index; pass --token SECRET as well (clients "
            "then send 'Authorization: Bearer SECRET'), or keep the default --host 127.0.0.1"
        )


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so a busy port is a one-line error."""
    from ..errors import UsageError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port or --host"
        ) from None
    return sock


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback needs --token.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port (0: any free one).",
)
@click.option(
    "--token",
    default=None,
    metavar="SECRET",
    help="Require 'Authorization: Bearer SECRET' on the API (the page asks for it once).",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Read the token from this file's first line (keeps it out of the process list).",
)
@click.option(
    "--cors",
    multiple=True,
    metavar="ORIGIN",
    help="Let pages from this origin call the API (repeatable; default: CORS off).",
)
@click.option(
    "--questions",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE",
    help="Question set for hit marks and the evaluation view (repeatable; questions*.jsonl files next "
    "to the indexed folders are offered too).",
)
@db_options
@ollama_option
@quiet_option
@handle_errors
def serve(
    host: str,
    port: int,
    token: str | None,
    token_file: str | None,
    cors: tuple[str, ...],
    questions: tuple[str, ...],
    db: str | None,
    chroma_url: str | None,
    ollama_host: str | None,
    quiet: bool,
) -> None:
    """A local web app over the stored collections — see where each strategy cuts a
    document, compare strategies and search modes on a query side by side, read the
    evaluation chart — and a read-only JSON API (GET /api/openapi.json) for applications."""
    import uvicorn

    from ..serve.app import create_app
    from ..serve.guard import LOOPBACK_HOSTS, is_loopback
    from ..serve.library import Library

    token = _read_token(token, token_file)
    _check_bind(host, token)
    note = note_function(quiet)
    library = Library(settings_from(db, chroma_url, None, ollama_host))
    sock = _listen(host, port)
    names = library.warm()
    app = create_app(
        library.store.settings,
        token=token,
        cors=tuple(cors),
        questions=list(questions),
        allowed_hosts=LOOPBACK_HOSTS if is_loopback(host) else None,
        library=library,
    )
    port = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    click.echo(f"indexer serve: {url}" + ("  (API and page need the token)" if token else ""))
    note(
        f"  {len(names)} collection(s): {', '.join(names) or 'none yet (indexer build PATH)'}; read-only"
        + (f"; CORS for {', '.join(cors)}" if cors else "")
        + "; Ctrl-C stops"
    )
    if not is_loopback(host):
        note(
            f"  listening on {host}: every API call needs the token; this is plain HTTP, so outside a trusted "
            "network put a TLS proxy in front"
        )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        server_header=False,
        lifespan="off",
        timeout_keep_alive=30,
    )
    uvicorn.Server(config).run(sockets=[sock])
