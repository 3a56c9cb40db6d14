from __future__ import annotations

import httpx
import pytest

from tests.conftest import Tenant
from tests.mcp.http import MCP_HEADERS, bearer


@pytest.mark.django_db(transaction=True)
def test_only_post_is_answered_and_no_stream_is_held_open(mcp_url: str, acme: Tenant) -> None:
    headers = bearer(acme.raw_tokens["agent"]) | {"Accept": "text/event-stream"}
    for method in ("GET", "PUT", "DELETE"):
        # A held-open event stream would run into the read timeout instead of answering.
        response = httpx.request(method, mcp_url, headers=headers, timeout=httpx.Timeout(5))

        assert response.status_code == 405, method
        assert response.headers["Allow"] == "POST"
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.json()["error"]["message"]


def test_get_without_a_token_is_refused_the_same_way(mcp_url: str) -> None:
    response = httpx.get(mcp_url, headers=MCP_HEADERS, timeout=5)

    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
