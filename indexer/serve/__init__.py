"""`indexer serve`: a local web app over the stored collections (where the cuts fall,
strategies side by side, evaluation with intervals) and a JSON API for applications.

`create_app(settings, ...)` in `app.py` builds the ASGI app; `indexer.cli.serve` runs it
with uvicorn. Starlette is imported only here, never by `import indexer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings import Settings
    from .guard import Guard
    from .library import Library


def create_app(
    settings: Settings,
    *,
    token: str | None = None,
    cors: tuple[str, ...] = (),
    questions: Sequence[str] = (),
    allowed_hosts: list[str] | None = None,
    library: Library | None = None,
) -> Guard:
    """`app.create_app`, imported when called (Starlette stays out of `import indexer`)."""
    from .app import create_app as make

    return make(
        settings,
        token=token,
        cors=cors,
        questions=questions,
        allowed_hosts=allowed_hosts,
        library=library,
    )


__all__ = ["create_app"]
