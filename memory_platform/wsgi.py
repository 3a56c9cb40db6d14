"""The WSGI application: what the web server (memory_platform.web, granian) runs in each web process."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

from memory_platform.balance import ConnectionBalancer
from memory_platform.heap import FrozenHeap, WSGIApp
from memory_platform.worker import die_with_server

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")


class ChunkedBodies:
    """Gives Django the body of a request sent without Content-Length (``Transfer-Encoding: chunked``).

    Django reads CONTENT_LENGTH bytes of a body, and so would read none of a chunked one: the view
    would answer as if nothing had been sent. This reads it first, at most one byte more than the
    largest body any view accepts (so a memory cannot be flooded), and hands Django the bytes with
    their length: a view whose limit they exceed refuses them in its own error shape (413).
    """

    def __init__(self, application: WSGIApp, largest: Callable[[], int]) -> None:
        self.application = application
        self.largest = largest

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not environ.get("CONTENT_LENGTH") and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            body = environ["wsgi.input"].read(self.largest() + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.application(environ, start_response)


def _load_views() -> None:
    """Import every view now, not on the first request, so that their modules are frozen too."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and the views it names


def _largest_body() -> int:
    from django.conf import settings

    return max(settings.MCP_MAX_BODY_BYTES, settings.API_MAX_BODY_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)


_django = get_wsgi_application()
_load_views()
application = FrozenHeap(ConnectionBalancer(ChunkedBodies(_django, _largest_body)))

# A web process a server started (`manage.py serve` runs one per core) ends with that server.
die_with_server()
