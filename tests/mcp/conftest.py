"""MCP clients for the tests in this package, in-process by default, and a real server for the rest.

``connect(raw_token)`` (and ``agent``, ``curator``, ``outsider``) gives the official MCP client
served in-process through the real /mcp view (tests/mcp/inprocess.py): a plain
``@pytest.mark.django_db`` test, one transaction, rolled back.

Tests of the transports themselves talk to real processes: ``mcp_url`` is the web server (granian) serving the
project on the test database (started once per worker), and a test marked ``mcp_live`` gets its
``connect`` clients from it; the stdio tests spawn ``manage.py mcp_stdio``. Those processes use
connections of their own, so these tests are ``@pytest.mark.django_db(transaction=True)``: what the
test writes (organizations, tokens) is committed where the server can read it, and every table is
emptied after each test.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings

from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.inprocess import IN_PROCESS_URL, InProcessMcpClient

Connect = Callable[..., McpClient]  # (raw token, mode="auto" | "legacy")


@pytest.fixture
def endpoint(request: pytest.FixtureRequest) -> str:
    """The URL ``connect``'s clients call: the live server's if ``mcp_live``, else the in-process one
    (what OAuth access tokens for them are bound to)."""
    if request.node.get_closest_marker("mcp_live"):
        return str(request.getfixturevalue("mcp_url"))
    return IN_PROCESS_URL


@pytest.fixture
def connect(request: pytest.FixtureRequest, endpoint: str) -> Iterator[Connect]:
    """``connect(raw_token, mode="auto")``: an MCP client acting with that token (of the live server if
    ``mcp_live``), speaking 2026-07-28 (``"auto"``) or 2025-11-25 (``"legacy"``)."""
    clients: list[McpClient] = []
    live_url = endpoint if request.node.get_closest_marker("mcp_live") else None

    def make(token: str, mode: str = "auto") -> McpClient:
        clients.append(McpClient(live_url, token, mode) if live_url else InProcessMcpClient(token, mode=mode))
        return clients[-1]

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def agent(acme: Tenant, connect: Connect) -> McpClient:
    return connect(acme.raw_tokens["agent"])


@pytest.fixture
def curator(acme: Tenant, connect: Connect) -> McpClient:
    return connect(acme.raw_tokens["curator"])


@pytest.fixture
def outsider(globex: Tenant, connect: Connect) -> McpClient:
    return connect(globex.raw_tokens["admin"])


WriteMemory = Callable[..., dict[str, Any]]


@pytest.fixture
def write_memory(agent: McpClient) -> WriteMemory:
    """Create an acme memory through memory-write (as the agent unless ``client`` is given)."""

    def write(client: McpClient | None = None, **arguments: Any) -> dict[str, Any]:
        payload = {
            "organization": "acme",
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": "The payments service runs on PostgreSQL 18.",
        } | arguments
        memory: dict[str, Any] = (client or agent).ok("memory-write", payload)
        return memory

    return write


# --- stdio -----------------------------------------------------------------------------------------

STDIO_COMMAND = [sys.executable, "manage.py", "mcp_stdio"]


@pytest.fixture
def stdio_env(server_env: dict[str, str]) -> Callable[..., dict[str, str]]:
    """``stdio_env(token=None, **extra)``: environment for a ``manage.py mcp_stdio`` child."""

    def make(token: str | None = None, **extra: str) -> dict[str, str]:
        env = dict(server_env)
        if token is not None:
            env["MEMORY_PLATFORM_TOKEN"] = token
        env.update(extra)
        return env

    return make


@pytest.fixture
def spawn_stdio() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start ``manage.py mcp_stdio`` with pipes; whatever is still running at the end is killed."""
    started: list[subprocess.Popen[bytes]] = []

    def spawn(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [*STDIO_COMMAND, *args],
            cwd=settings.BASE_DIR,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Unbuffered: read_message waits on the pipe with select(), which cannot see lines a
            # buffered reader already took in (two answers written at once would leave one there).
            bufsize=0,
        )
        started.append(process)
        return process

    yield spawn
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
