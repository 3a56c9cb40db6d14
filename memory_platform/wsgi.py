"""The WSGI application: what the web server (memory_platform.web, granian) runs in each web process."""

from __future__ import annotations

import gc
import io
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

from memory_platform.balance import ConnectionBalancer
from memory_platform.worker import die_with_server

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


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


class FrozenHeap:
    """Keeps the collector's full passes off a web process's long-lived objects (gc.freeze).

    A full collection walks every object the process holds: about 100,000 once Django, the MCP
    server and the embedding model are loaded, which took 50 to 130 ms, with the GIL held, every
    few hundred requests (the process answers nothing meanwhile). What is alive when the process
    has started, and again once its first ``after`` requests have loaded what loads on first use
    (views, the model, caches), is moved out of the collector's sight: later full passes walk only
    what came after, about a millisecond. Frozen objects are still freed when nothing refers to
    them; only a reference cycle among them would outlive the process.
    """

    def __init__(self, application: WSGIApp, *, after: int = 200) -> None:
        self.application = application
        self.after = after
        self._served = 0
        self._lock = threading.Lock()
        freeze_heap()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if self._served < self.after:
            with self._lock:
                self._served += 1
                if self._served == self.after:
                    freeze_heap()
        return self.application(environ, start_response)


def freeze_heap() -> None:
    """Collect what is garbage now, then freeze every object still alive (see FrozenHeap)."""
    gc.collect()
    gc.freeze()


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
