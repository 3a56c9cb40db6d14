from __future__ import annotations

import httpx
import pytest

from tests.conftest import Tenant
from tests.mcp.http import bearer

pytestmark = pytest.mark.django_db(transaction=True)

PARSE_ERROR = -32700


def test_invalid_json_is_a_json_rpc_parse_error(mcp_url: str, acme: Tenant) -> None:
    for content in (b"{not json", b'{"jsonrpc": "2.0", "method": ', b"\xff\xfe"):
        response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=content, timeout=10)

        assert response.status_code == 400, content
        payload = response.json()
        assert payload["jsonrpc"] == "2.0"
        assert payload["id"] is None
        assert payload["error"]["code"] == PARSE_ERROR


def test_json_that_is_not_a_request_is_an_invalid_request(mcp_url: str, acme: Tenant) -> None:
    response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=b'"hello"', timeout=10)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
