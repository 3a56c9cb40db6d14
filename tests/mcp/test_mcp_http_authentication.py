from __future__ import annotations

import httpx
import pytest

from organizations.tokens import token_create, token_revoke
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.http import MCP_HEADERS, bearer, body

UNAUTHORIZED = -32001


def assert_unauthorized(response: httpx.Response) -> str:
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    error = response.json()["error"]
    assert error["code"] == UNAUTHORIZED
    return str(error["message"])


def test_a_request_without_a_token_gets_a_bearer_challenge(mcp_url: str) -> None:
    message = assert_unauthorized(httpx.post(mcp_url, headers=MCP_HEADERS, content=body(), timeout=10))

    assert "bearer token" in message


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Basic dXNlcjpwYXNz", "unsupported authorization scheme 'Basic'; send 'Authorization: Bearer <token>'"),
        ("Bearer", "the Bearer credential is empty; send 'Authorization: Bearer <token>'"),
    ],
)
def test_another_scheme_or_no_credential_is_explained_as_rest_explains_it(
    mcp_url: str, header: str, message: str
) -> None:
    headers = MCP_HEADERS | {"Authorization": header}

    assert assert_unauthorized(httpx.post(mcp_url, headers=headers, content=body(), timeout=10)) == message


@pytest.mark.django_db(transaction=True)
def test_a_bad_token_is_refused(mcp_url: str, acme: Tenant) -> None:
    for token in ("not-a-token", "mp_deadbeef_0000000000000000000000000000000000"):
        response = httpx.post(mcp_url, headers=bearer(token), content=body(), timeout=10)

        assert_unauthorized(response)
        assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


@pytest.mark.django_db(transaction=True)
def test_a_revoked_token_is_refused(mcp_url: str, acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role="agent", name="soon revoked")
    assert httpx.post(mcp_url, headers=bearer(issued.raw), content=body(), timeout=10).status_code == 200
    token_revoke(principal=acme.admin, prefix=issued.token.prefix)

    message = assert_unauthorized(httpx.post(mcp_url, headers=bearer(issued.raw), content=body(), timeout=10))

    assert "revoked" in message


def test_the_official_client_fails_with_a_bad_token(mcp_url: str) -> None:
    client = McpClient(mcp_url, "mp_deadbeef_0000000000000000000000000000000000")
    try:
        with pytest.raises(Exception) as raised:
            client.call("platform-status")
        assert "invalid token" in repr(raised.value), repr(raised.value)
    finally:
        client.close()
