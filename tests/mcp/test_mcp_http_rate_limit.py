"""/mcp counts against the same per-token allowance as REST (API_THROTTLE_RATE): a token over the
limit on one is over it on the other, and MCP answers 429 with Retry-After in JSON-RPC's shape."""

from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from tests.conftest import Tenant
from tests.mcp.http import INITIALIZE, bearer

pytestmark = pytest.mark.django_db

API = "/api/v1"


def _mcp(client: Client, token: str) -> object:
    headers = {
        f"HTTP_{name.upper().replace('-', '_')}": value
        for name, value in bearer(token).items()
        if name != "Content-Type"
    }
    return client.post("/mcp", json.dumps(INITIALIZE), content_type="application/json", **headers)


@override_settings(API_THROTTLE_RATE="3/min")
def test_rest_and_mcp_share_one_allowance(acme: Tenant) -> None:
    client = Client(HTTP_HOST="localhost")
    token = acme.raw_tokens["agent"]
    rest = client.get(f"{API}/status/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert rest.status_code == 200
    assert [_mcp(client, token).status_code for _ in range(2)] == [200, 200]  # type: ignore[attr-defined]

    refused = _mcp(client, token)

    assert refused.status_code == 429  # type: ignore[attr-defined]
    body = refused.json()  # type: ignore[attr-defined]
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32029
    assert 1 <= int(refused["Retry-After"]) <= 120  # type: ignore[index]  # a sliding minute: up to two away
    assert client.get(f"{API}/status/", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 429
    # Another token has its own allowance.
    assert _mcp(client, acme.raw_tokens["reader"]).status_code == 200  # type: ignore[attr-defined]
