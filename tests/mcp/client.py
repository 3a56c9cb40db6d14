"""A small synchronous face on the official MCP client, for tests.

``McpClient`` keeps one connected ``mcp.Client`` open on an event loop of its own (a background
thread), so a test can call tools one after the other without paying for a new connection each
time. ``mode`` is the client's: ``"auto"`` (the default) speaks 2026-07-28 (``server/discover``,
then every request with its ``_meta`` envelope), ``"legacy"`` the ``initialize`` handshake of
2025-11-25. Every tool result is checked for leaked stack traces.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

T = TypeVar("T")


@dataclass
class ToolResult:
    is_error: bool
    texts: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    def json(self, block: int = 0) -> Any:
        return json.loads(self.texts[block])


def tool_result(result: CallToolResult) -> ToolResult:
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    assert len(texts) == len(result.content), f"only text blocks expected, got {result.content!r}"
    outcome = ToolResult(is_error=bool(result.is_error), texts=texts)
    assert "Traceback" not in outcome.text, outcome.text
    return outcome


async def call_tool(session: Client, name: str, arguments: dict[str, Any]) -> ToolResult:
    return tool_result(await session.call_tool(name, arguments))


class McpClient:
    """The official Streamable HTTP client, authenticated with one bearer token."""

    def __init__(self, url: str, token: str, mode: str = "auto") -> None:
        self.url = url
        self.token = token
        self.mode = mode
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: Client | None = None
        self._stop: asyncio.Event | None = None
        self._held: Future[None] | None = None

    async def _hold(self, ready: Future[Client]) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            async with (
                self._http_client(headers) as http,
                Client(streamable_http_client(self.url, http_client=http), mode=self.mode, cache=None) as session,
            ):
                self._stop = asyncio.Event()
                ready.set_result(session)
                await self._stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    def _http_client(self, headers: dict[str, str]) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60))

    def _wait(self, future: Future[T], timeout: float) -> T:
        """The result of work running on the client's loop (the in-process client serves requests meanwhile)."""
        return future.result(timeout=timeout)

    def _open(self) -> Client:
        if self._session is None:
            loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=loop.run_forever, name="mcp-client", daemon=True)
            self._thread.start()
            self._loop = loop
            ready: Future[Client] = Future()
            self._held = asyncio.run_coroutine_threadsafe(self._hold(ready), loop)
            self._session = self._wait(ready, 60)
        return self._session

    def run(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        """Run ``operation(session)`` on this client's initialized session and return its result."""
        session = self._open()
        assert self._loop is not None

        async def wrapped() -> T:
            return await operation(session)

        return self._wait(asyncio.run_coroutine_threadsafe(wrapped(), self._loop), 120)

    def close(self) -> None:
        if self._loop is None:
            return
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._held is not None:
            # A session that failed has nothing left to tidy.
            with contextlib.suppress(Exception):
                self._wait(self._held, 30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join(timeout=30)
        self._loop.close()
        self._loop = self._thread = self._session = self._stop = self._held = None

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        return self.run(lambda session: call_tool(session, name, arguments or {}))

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call a tool that must succeed; return its first block, parsed when it is JSON."""
        result = self.call(name, arguments)
        assert not result.is_error, result.text
        try:
            return result.json()
        except json.JSONDecodeError:
            return result.texts[0]

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Call a tool that must fail; return its message."""
        result = self.call(name, arguments)
        assert result.is_error, f"{name} was expected to fail but returned {result.text[:500]}"
        return result.text

    def read_resource(self, uri: str) -> str:
        async def read(session: Client) -> str:
            contents = (await session.read_resource(uri)).contents  # type: ignore[arg-type]
            assert len(contents) == 1
            return str(contents[0].text)  # type: ignore[union-attr]

        return self.run(read)

    def read_resource_error(self, uri: str) -> str:
        """Read a resource that must not be readable; return the error message."""

        async def read(session: Client) -> str:
            try:
                result = await session.read_resource(uri)  # type: ignore[arg-type]
            except MCPError as error:
                return error.error.message
            raise AssertionError(f"{uri} was readable: {result.contents!r}"[:500])

        message = self.run(read)
        assert "Traceback" not in message, message
        return message

    def get_prompt(self, name: str) -> str:
        async def get(session: Client) -> str:
            messages = (await session.get_prompt(name)).messages
            assert len(messages) == 1
            assert messages[0].role == "user"
            return str(messages[0].content.text)  # type: ignore[union-attr]

        return self.run(get)
