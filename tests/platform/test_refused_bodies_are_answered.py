"""A request refused before its body is read (too large, no token, a foreign Origin) still gets its
answer: the rest of the body is read and dropped first, so the connection is not reset under a
client that is still sending (which then saw "server disconnected without sending a response")."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


def test_every_early_refusal_reaches_the_client(mcp_server: str, acme: Tenant) -> None:
    cases = {
        "MCP body over its limit": ("/mcp", {"Authorization": f"Bearer {acme.raw_tokens['agent']}"}, b"x" * 3_000_000),
        "REST body over its limit": ("/api/v1/memories/", {"Authorization": f"Bearer {acme.raw_tokens['agent']}"},
                                     b"x" * 12_000_000),
        "no token, a large body": ("/mcp", {}, b" " * 500_000 + TOOLS_LIST),
        "a foreign Origin": ("/mcp", {"Origin": "http://evil.example"}, b" " * 500_000 + TOOLS_LIST),
    }  # fmt: skip
    answered: dict[str, set[int]] = {}
    with httpx.Client(base_url=mcp_server, timeout=30) as client:  # one keep-alive connection throughout
        for name, (path, headers, body) in cases.items():
            statuses = set()
            for _ in range(40):
                response = client.post(path, content=body, headers={**headers, "Content-Type": "application/json"})
                statuses.add(response.status_code)
            answered[name] = statuses

    assert answered == {
        "MCP body over its limit": {413},
        "REST body over its limit": {413},
        "no token, a large body": {401},
        "a foreign Origin": {403},
    }


def test_answers_say_how_long_an_idle_connection_is_kept(mcp_server: str) -> None:
    # The server closes a connection idle for 30 s; clients that read the hint close theirs first.
    assert httpx.get(f"{mcp_server}/healthz").headers["keep-alive"] == "timeout=25"
