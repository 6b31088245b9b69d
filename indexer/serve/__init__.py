"""`indexer serve`: a local web app over the stored collections (where the cuts fall,
strategies side by side, evaluation with intervals) and a JSON API for applications.

`create_app(settings, ...)` in `app.py` builds the ASGI app; `indexer.cli.serve` runs it
with uvicorn. Starlette is imported only here, never by `import indexer`.
"""

from __future__ import annotations


def create_app(*args, **kwargs):
    from .app import create_app as make

    return make(*args, **kwargs)


__all__ = ["create_app"]
