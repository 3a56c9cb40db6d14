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


class _Counted:
    """A request body that counts what the application read of it."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.stream.read(size) if size is not None and size >= 0 else self.stream.read()
        self.read_bytes += len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data: bytes = self.stream.readline(size)
        self.read_bytes += len(data)
        return data

    def __iter__(self) -> Any:
        return iter(self.readline, b"")


class DrainedBodies:
    """Reads what the application left of a request's body before the answer goes out.

    A view that refuses a request early (413 for a body too large, 401 without a token, 403 for a
    foreign Origin) does not read its body. Were the connection then closed with those bytes unread,
    the kernel would reset it, and the client, still sending, would lose the answer: "server
    disconnected without sending a response" (6 in 200 requests of 3 MB, before this). So the rest
    is read and dropped, up to ``DRAIN_MAX_BYTES``; past that the answer closes the connection
    (a client sending more than that to a refusal is not one to keep talking to).
    """

    DRAIN_MAX_BYTES = 64 * 1024 * 1024
    CHUNK = 256 * 1024

    def __init__(self, application: WSGIApp) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response = _with_keep_alive_hint(start_response)
        length = environ.get("CONTENT_LENGTH") or ""
        chunked = not length and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not (chunked or (length.isdigit() and int(length) > 0)):
            return self.application(environ, start_response)
        body = _Counted(environ["wsgi.input"])
        environ["wsgi.input"] = body
        answer_with = start_response
        if length.isdigit() and int(length) > self.DRAIN_MAX_BYTES:

            def answer_with(status: str, headers: list[tuple[str, str]], *args: Any) -> Any:
                kept = [(name, value) for name, value in headers if name.lower() != "connection"]
                return start_response(status, [*kept, ("Connection", "close")], *args)

        answer = self.application(environ, answer_with)
        left = int(length) - body.read_bytes if length.isdigit() else self.DRAIN_MAX_BYTES
        drained = 0
        while left > 0 and drained < self.DRAIN_MAX_BYTES:
            data = body.stream.read(min(self.CHUNK, left))
            if not data:
                break
            drained += len(data)
            left -= len(data)
        return answer


# The web server closes a keep-alive connection idle for 30 s (granian's header read timeout). A
# client reusing one at that moment loses its request to the close; said in every answer, clients
# that read the hint (fetch/undici, most browsers) close theirs first.
KEEP_ALIVE_HINT = ("Keep-Alive", "timeout=25")


def _with_keep_alive_hint(start_response: Callable[..., Any]) -> Callable[..., Any]:
    def start(status: str, headers: list[tuple[str, str]], *args: Any) -> Any:
        if not any(name.lower() in ("connection", "keep-alive") for name, _ in headers):
            headers = [*headers, KEEP_ALIVE_HINT]
        return start_response(status, headers, *args)

    return start


def _load_views() -> None:
    """Import every view now, not on the first request, so that their modules are frozen too: the
    URLconf's and the MCP endpoint's, which the URLconf loads on its first request."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and the views it names
    import mcp_api.views  # noqa: F401


def _largest_body() -> int:
    from django.conf import settings

    return max(settings.MCP_MAX_BODY_BYTES, settings.API_MAX_BODY_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)


_django = get_wsgi_application()
_load_views()
application = FrozenHeap(DrainedBodies(ConnectionBalancer(ChunkedBodies(_django, _largest_body))))

# A web process a server started (`manage.py serve` runs one per core) ends with that server.
die_with_server()
