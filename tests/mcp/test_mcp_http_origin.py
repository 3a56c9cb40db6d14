from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import Tenant
from tests.mcp.http import bearer, body


@pytest.mark.django_db(transaction=True)
def test_a_foreign_browser_origin_is_refused(mcp_url: str, acme: Tenant) -> None:
    own_host = urlsplit(mcp_url).netloc
    # ...the server's own host under another scheme included: a page on https://host is not this one.
    for origin in ("http://evil.example", "http://127.0.0.1.evil.example", "null", f"https://{own_host}"):
        headers = bearer(acme.raw_tokens["agent"]) | {"Origin": origin}

        response = httpx.post(mcp_url, headers=headers, content=body(), timeout=10)

        assert response.status_code == 403, origin
        assert "Origin" in response.json()["error"]["message"]


def test_the_origin_is_checked_before_the_token(mcp_url: str) -> None:
    response = httpx.post(mcp_url, headers={"Origin": "http://evil.example"}, content=body(), timeout=10)

    assert response.status_code == 403


@pytest.mark.django_db(transaction=True)
def test_the_servers_own_origin_is_allowed(mcp_url: str, acme: Tenant) -> None:
    own = "http://" + urlsplit(mcp_url).netloc
    headers = bearer(acme.raw_tokens["agent"]) | {"Origin": own}

    response = httpx.post(mcp_url, headers=headers, content=body(), timeout=10)

    assert response.status_code == 200
    assert "Memory MCP Server" in response.text


@pytest.mark.django_db(transaction=True)
def test_no_origin_at_all_is_allowed(mcp_url: str, acme: Tenant) -> None:
    response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=body(), timeout=10)

    assert response.status_code == 200
