"""The official MCP client served in-process: the real /mcp view, without a socket or a server.

``InProcessMcpClient`` is ``McpClient`` (same official ``mcp.Client``, same methods) whose HTTP
requests are not sent anywhere: each is handed to the test's own thread, which runs it through
``django.test.Client`` (middleware, URL routing, the /mcp view: Origin check, body limit, bearer
authentication, JSON-RPC dispatch, error mapping). The test thread holds the test's database
connection, and the view's tools run on it (``async_to_sync`` sends ``sync_to_async`` work back to
the calling thread), so a plain ``@pytest.mark.django_db`` test sees what a tool wrote and all of it
is rolled back afterwards.

The session itself runs on the client's background event loop, as in ``McpClient``; while the test
waits for a call, it serves the requests that call makes (see ``_wait``).
"""

from __future__ import annotations

import queue
from concurrent.futures import Future
from typing import Any, TypeVar

import httpx2 as httpx
from django.test import Client

from tests.mcp.client import McpClient

T = TypeVar("T")

# Any name in ALLOWED_HOSTS; the MCP client sends it as Host, and Origin checks compare with it.
IN_PROCESS_URL = "http://localhost/mcp"

_Pending = tuple[httpx.Request, "Future[httpx.Response]"]


class _Relay(httpx.AsyncBaseTransport):
    """An httpx transport that queues each request for the test thread and awaits its response."""

    def __init__(self, requests: queue.SimpleQueue[_Pending | None]) -> None:
        self._requests = requests

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        import asyncio

        await request.aread()
        answered: Future[httpx.Response] = Future()
        self._requests.put((request, answered))
        return await asyncio.wrap_future(answered)


def _to_django(client: Client, request: httpx.Request) -> Any:
    headers = {name: value for name, value in request.headers.items() if name.lower() not in ("content-length",)}
    content_type = headers.pop("content-type", "application/octet-stream")
    return client.generic(
        request.method,
        request.url.raw_path.decode(),
        data=request.content,
        content_type=content_type,
        headers=headers,
    )


def _to_httpx(response: Any, request: httpx.Request) -> httpx.Response:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return httpx.Response(
        response.status_code, headers=list(response.headers.items()), content=content, request=request
    )


class InProcessMcpClient(McpClient):
    """``McpClient`` whose requests the calling (test) thread serves through Django's test client."""

    def __init__(self, token: str, url: str = IN_PROCESS_URL, mode: str = "auto") -> None:
        super().__init__(url, token, mode)
        self._requests: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._django = Client()

    def _http_client(self, headers: dict[str, str]) -> httpx.AsyncClient:
        return httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60), transport=_Relay(self._requests))

    def _wait(self, future: Future[T], timeout: float) -> T:
        # The loop thread cannot run the view: the test's connection (and transaction) is this
        # thread's. So serve its requests here until the awaited work is done.
        future.add_done_callback(lambda _: self._requests.put(None))
        while not future.done():
            pending = self._requests.get(timeout=timeout)
            if pending is None:
                continue
            request, answered = pending
            try:
                answered.set_result(_to_httpx(_to_django(self._django, request), request))
            except BaseException as error:
                # The view raised (a live server would answer 500): fail the test now, with the
                # view's traceback, rather than after the session's timeout.
                answered.set_exception(error)
                raise
        return future.result()
