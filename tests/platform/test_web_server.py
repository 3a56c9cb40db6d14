"""The web server: threads per web process (WEB_THREADS), the command that runs it, request bodies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memories.models import Memory
from memory_platform import web
from tests.conftest import Tenant
from tests.mcp.http import bearer


def test_threads_default_and_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEB_THREADS", raising=False)
    assert web.threads() == web.DEFAULT_THREADS
    monkeypatch.setenv("WEB_THREADS", "8")
    assert web.threads() == 8


@pytest.mark.parametrize("value", ["0", "-2", "four", "2.5"])
def test_a_bad_thread_count_says_what_to_fix(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("WEB_THREADS", value)
    with pytest.raises(SystemExit, match=f"WEB_THREADS must be a whole number of threads, 1 or more, not '{value}'"):
        web.threads()


def test_the_command_serves_the_wsgi_application_with_the_threads_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_THREADS", "3")
    command = web.command("127.0.0.1", 8123, workers=2)
    assert command[1:3] == ["-m", "granian"]
    assert command[-1] == "memory_platform.wsgi:application"
    options = dict(zip(command[3:-1:2], command[4:-1:2], strict=False))
    assert options["--interface"] == "wsgi"
    assert options["--port"] == "8123"
    assert options["--workers"] == "2"
    assert options["--blocking-threads"] == "3"


def _chunked(payload: dict[str, Any]) -> Iterator[bytes]:
    data = json.dumps(payload).encode()
    for start in range(0, len(data), 16):
        yield data[start : start + 16]


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_reaches_the_view_whole(mcp_server: str, acme: Tenant) -> None:
    """A client that streams its body without Content-Length is answered as if it had sent one."""
    headers = bearer(acme.raw_tokens["agent"])
    content = "Chunked request bodies reach the REST API whole."
    written = httpx.post(
        f"{mcp_server}/api/v1/memories/",
        headers=headers,
        content=_chunked({"scope_type": "organization", "memory_type": "fact", "current_content": content}),
        timeout=30,
    )
    assert written.status_code == 201, written.text
    assert Memory.objects.get(pk=written.json()["id"]).current_content == content

    listed = httpx.post(
        f"{mcp_server}/mcp", headers=headers, content=_chunked({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    )
    assert listed.status_code == 200, listed.text
    assert {tool["name"] for tool in listed.json()["result"]["tools"]} >= {"memory-search", "memory-write"}
