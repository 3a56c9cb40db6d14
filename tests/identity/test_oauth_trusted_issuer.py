"""The platform trusts an organization's own authorization server instead of being one.

With ``OAUTH_TRUSTED_ISSUER`` set, /mcp's protected-resource metadata names that issuer; an MCP host
(the official MCP Python SDK's OAuth client) registers there, the person signs in there, and the
JWT access token it gets for this server's resource (RFC 8707) opens /mcp as that person, in
their organization, with their membership's role. A token for another audience, one of another
issuer, or one for a person this platform does not know is refused.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from organizations.models import Membership, Role, User
from tests.conftest import Tenant
from tests.identity.conftest import REDIRECT_URI
from tests.identity.oidc import Provider, log_in_and_consent, oidc_provider
from tests.identity.test_oauth_mcp_flow import Storage, _provider
from tests.identity.test_oauth_mcp_flow import _status as status_with
from tests.live_server import free_port, start_server, stop

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Trusting:
    base: str
    provider: Provider

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"


@pytest.fixture
def trusting(server_env: dict[str, str], tmp_path: Path) -> Iterator[Trusting]:
    port = free_port()
    env = server_env | {"OAUTH_TRUSTED_ISSUER": f"http://127.0.0.1:{port}"}
    server, base = start_server(env, tmp_path / "server.log")
    try:
        with oidc_provider(port, f"{base}/oidc/callback/", tmp_path) as provider:
            yield Trusting(base=base, provider=provider)
    finally:
        stop(server)


@dataclass
class Browser:
    """A person at a browser, on the external provider's pages."""

    login: str
    answered: list[dict[str, str]] = field(default_factory=list)

    def consent(self, authorize_url: str) -> None:
        def stop_at_the_host(request: httpx.Request) -> None:
            if str(request.url).startswith(REDIRECT_URI):  # the host's callback: what it would receive
                raise ReachedCallback(str(request.url))

        hooks = {"request": [stop_at_the_host]}
        with httpx.Client(timeout=30, follow_redirects=True, event_hooks=hooks) as browser:
            try:
                log_in_and_consent(browser, browser.get(authorize_url), self.login)
            except ReachedCallback as reached:
                query = urlsplit(reached.url).query
                self.answered.append({key: values[0] for key, values in parse_qs(query).items()})
                return
        raise AssertionError("the provider did not send the person back to the host")


class ReachedCallback(Exception):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


def _status(mcp_url: str, browser: Browser) -> dict[str, Any]:
    # The organization's issuer grants no refresh tokens here, so the host does not ask for them.
    provider = _provider(mcp_url, browser, Storage(), client_name="Team Host", grant_types=("authorization_code",))
    return status_with(mcp_url, provider, "auto")


def test_a_host_signed_in_at_the_organizations_issuer_acts_as_the_person(acme: Tenant, trusting: Trusting) -> None:
    person = User.objects.create_user("grace")
    Membership.objects.create(user=person, organization=acme.organization, role=Role.CURATOR)
    trusting.provider.set_accounts({"grace": {"organization": "acme"}})

    metadata = httpx.get(f"{trusting.base}/.well-known/oauth-protected-resource/mcp", timeout=30).json()
    assert metadata["authorization_servers"] == [trusting.provider.issuer]

    status = _status(trusting.mcp_url, Browser(login="grace"))

    assert (status["organization"], status["role"]) == ("acme", Role.CURATOR)


def _issued(provider: Provider, login: str, resource: str) -> str:
    """An access token the provider issues to a registered host for ``login``, for ``resource``."""
    registered = httpx.post(
        f"{provider.issuer}/reg",
        json={
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "scope": "openid mcp",
        },
        timeout=30,
    )
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    person = Browser(login=login)
    query = {
        "client_id": client_id, "response_type": "code", "redirect_uri": REDIRECT_URI, "scope": "openid mcp",
        "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource, "state": "state-1",
    }  # fmt: skip
    person.consent(str(httpx.URL(f"{provider.issuer}/auth", params=query)))
    token = httpx.post(
        f"{provider.issuer}/token",
        data={
            "grant_type": "authorization_code",
            "code": person.answered[-1]["code"],
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": resource,
        },
        timeout=30,
    )
    assert token.status_code == 200, token.text
    return str(token.json()["access_token"])


def _refusal(mcp_url: str, token: str) -> str:
    response = httpx.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        timeout=30,
    )
    assert response.status_code == 401, response.text
    return str(response.json()["error"]["message"])


def test_tokens_for_another_audience_issuer_or_an_unknown_person_are_refused(acme: Tenant, trusting: Trusting) -> None:
    person = User.objects.create_user("grace")
    Membership.objects.create(user=person, organization=acme.organization, role=Role.AGENT)
    trusting.provider.set_accounts({"grace": {"organization": "acme"}, "mallory": {"organization": "acme"}})

    assert "no active account 'mallory'" in _refusal(
        trusting.mcp_url, _issued(trusting.provider, "mallory", trusting.mcp_url)
    )
    elsewhere = _issued(trusting.provider, "grace", "http://elsewhere.example/mcp")
    assert f"not issued for {trusting.mcp_url}" in _refusal(trusting.mcp_url, elsewhere)
    forged = jwt.encode(
        {"iss": trusting.provider.issuer, "aud": trusting.mcp_url, "sub": "grace", "exp": 4_000_000_000},
        "not-the-issuer's-key-but-long-enough-for-hs256",
        algorithm="HS256",
    )
    assert "invalid token" in _refusal(trusting.mcp_url, forged)
    # The same person's token for this server works: the refusals above were about the tokens.
    good = _issued(trusting.provider, "grace", trusting.mcp_url)
    assert _refusal_or_none(trusting.mcp_url, good) is None


def _refusal_or_none(mcp_url: str, token: str) -> str | None:
    response = httpx.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        timeout=30,
    )
    return None if response.status_code == 200 else response.text
