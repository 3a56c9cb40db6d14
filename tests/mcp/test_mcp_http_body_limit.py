from __future__ import annotations

import json

import httpx
import pytest
from django.conf import settings

from tests.conftest import Tenant
from tests.mcp.http import MCP_HEADERS, bearer


def write_call(content: str) -> bytes:
    arguments = {
        "organization": "acme",
        "scope_type": "organization",
        "memory_type": "fact",
        "current_content": content,
    }
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "memory-write", "arguments": arguments},
    }
    return json.dumps(message).encode()


@pytest.mark.django_db(transaction=True)
def test_a_body_over_the_limit_is_refused(mcp_url: str, acme: Tenant) -> None:
    oversized = write_call("x" * settings.MCP_MAX_BODY_BYTES)

    response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=oversized, timeout=30)

    assert response.status_code == 413
    assert str(settings.MCP_MAX_BODY_BYTES) in response.json()["error"]["message"]


def test_the_limit_applies_before_authentication(mcp_url: str) -> None:
    oversized = write_call("x" * settings.MCP_MAX_BODY_BYTES)

    assert httpx.post(mcp_url, headers=MCP_HEADERS, content=oversized, timeout=30).status_code == 413


@pytest.mark.django_db(transaction=True)
def test_a_body_without_content_length_is_measured_too(mcp_url: str, acme: Tenant) -> None:
    oversized = write_call("x" * settings.MCP_MAX_BODY_BYTES)

    def chunks():  # type: ignore[no-untyped-def]
        for start in range(0, len(oversized), 64 * 1024):
            yield oversized[start : start + 64 * 1024]

    response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=chunks(), timeout=30)

    assert response.status_code == 413
