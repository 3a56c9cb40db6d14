"""An MCP host signs in with OAuth, as the official MCP Python SDK's client does it, against a live server.

From a 401 on /mcp the client discovers the protected-resource metadata (RFC 9728) and the
authorization server's (RFC 8414), registers itself (RFC 7591), sends the person to the consent
page with PKCE and a resource indicator (RFC 8707), exchanges the code, and calls tools in both
protocol revisions with the access token. A host that comes back with an expired token refreshes
it; after revocation it is refused. The consent page is driven headless, as a person would click
it, with a real login.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import get_access_token_model, get_application_model, get_grant_model

from organizations.models import Membership, Role, User
from tests.conftest import Tenant
from tests.identity.conftest import PASSWORD, REDIRECT_URI

pytestmark = [pytest.mark.django_db(transaction=True)]


@dataclass
class Storage(TokenStorage):
    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _hidden_fields(html: str) -> dict[str, str]:
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            fields[name.group(1)] = unescape(value.group(1)) if value else ""
    return fields


@dataclass
class Person:
    """Someone at a browser: signs in, reads the consent page, and answers it."""

    base: str
    username: str
    organization: str
    role: str
    allow: bool = True
    pages: list[str] = field(default_factory=list)
    answered: list[dict[str, str]] = field(default_factory=list)

    def consent(self, authorize_url: str) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as browser:
            page = browser.get(authorize_url)
            assert page.status_code == 302 and "/accounts/login/" in page.headers["location"]
            login = browser.get(page.headers["location"])
            form = _hidden_fields(login.text)
            signed_in = browser.post(
                page.headers["location"],
                data={**form, "username": self.username, "password": PASSWORD},
                headers={"Referer": f"{self.base}{page.headers['location']}"},
            )
            assert signed_in.status_code == 302, re.sub(r"\s+", " ", signed_in.text)[-3000:]
            consent = browser.get(signed_in.headers["location"])
            assert consent.status_code == 200, consent.text[:2000]
            self.pages.append(consent.text)
            answer = {**_hidden_fields(consent.text), "organization": self.organization, "role": self.role}
            if self.allow:
                answer["allow"] = "Allow"
            answered = browser.post(signed_in.headers["location"], data=answer, headers={"Referer": str(consent.url)})
        if answered.status_code != 302:
            self.pages.append(answered.text)
            raise AssertionError(f"the consent page answered {answered.status_code}, not a redirect")
        query = parse_qs(urlsplit(answered.headers["location"]).query)
        self.answered.append({key: values[0] for key, values in query.items()})


def _provider(
    mcp_url: str,
    person: Any,
    storage: Storage,
    client_metadata_url: str | None = None,
    *,
    client_name: str = "Test Host",
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token"),
) -> OAuthClientProvider:
    """The official SDK's OAuth client, sending ``person`` (``consent(url)``, ``answered``) to the consent page."""

    async def redirect(url: str) -> None:
        await asyncio.to_thread(person.consent, url)

    async def callback() -> AuthorizationCodeResult:
        # code, state, and the issuer (RFC 9207), which the client checks against the metadata.
        answer = person.answered[-1]
        return AuthorizationCodeResult(code=answer.get("code", ""), state=answer.get("state"), iss=answer.get("iss"))

    metadata = OAuthClientMetadata(
        client_name=client_name,
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        grant_types=list(grant_types),
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        mcp_url,
        metadata,
        storage,
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=client_metadata_url,
    )


def _status(mcp_url: str, provider: OAuthClientProvider, mode: str) -> dict[str, Any]:
    async def call() -> dict[str, Any]:
        import json

        async with (
            httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(60)) as http,
            Client(streamable_http_client(mcp_url, http_client=http), mode=mode, cache=None) as client,
        ):
            result = await client.call_tool("platform-status", {})
            assert not result.is_error, result.content
            return dict(json.loads(result.content[0].text))  # type: ignore[union-attr]

    return asyncio.run(call())


def _raw_status(mcp_url: str, token: str) -> int:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx.post(mcp_url, json=initialize, headers=headers, timeout=30).status_code


def test_an_mcp_host_signs_in_with_oauth_refreshes_and_is_refused_after_revocation(
    acme: Tenant, ada: User, mcp_server: str, mcp_url: str
) -> None:
    person = Person(base=mcp_server, username="ada", organization="acme", role=Role.AGENT)
    storage = Storage()

    status = _status(mcp_url, _provider(mcp_url, person, storage), "auto")

    # The token maps to the organization and role granted, for the person, naming the client.
    assert (status["organization"], status["role"]) == ("acme", "agent")
    assert "Test Host" in person.pages[0] and "acme" in person.pages[0]
    application = get_application_model().objects.get(name="Test Host")
    assert len(person.answered) == 1  # one sign-in
    token = get_access_token_model().objects.get(application=application, scope__contains="organization:")
    assert token.user == ada and token.resource == [mcp_url]
    assert "organization:acme" in token.scope and "role:agent" in token.scope
    # The registration's own token (RFC 7592, bound to no resource) does not open /mcp.
    assert _raw_status(mcp_url, _register(mcp_server)["registration_access_token"]) == 401
    # Tokens are stored hashed (RFC 9700): the database holds no usable one.
    assert storage.tokens is not None and token.token != storage.tokens.access_token
    # The 2025-11-25 revision takes the same token.
    assert _status(mcp_url, _provider(mcp_url, person, storage), "legacy")["role"] == "agent"

    # A host that comes back with an expired access token refreshes it without asking the person.
    assert storage.tokens is not None
    storage.tokens = storage.tokens.model_copy(update={"expires_in": 0})
    refreshed_by = len(person.answered)
    assert _status(mcp_url, _provider(mcp_url, person, storage), "auto")["role"] == "agent"
    assert len(person.answered) == refreshed_by
    assert get_access_token_model().objects.filter(application=application).count() >= 1

    # Revoked (the refresh token, and with it its access token): the token is refused, and the host
    # can only send the person back to the consent page.
    revoked = httpx.post(
        f"{mcp_server}/oauth/revoke_token/",
        data={"token": storage.tokens.refresh_token, "client_id": application.client_id},
        timeout=30,
    )
    assert revoked.status_code == 200
    person.allow = False
    with pytest.raises(Exception):  # noqa: B017 - the SDK raises its own flow errors
        _status(mcp_url, _provider(mcp_url, person, storage), "auto")
    assert len(person.answered) == refreshed_by + 1  # asked again, and denied


def test_the_role_granted_is_never_above_the_membership(acme: Tenant, ada: User, mcp_server: str) -> None:
    Membership.objects.filter(user=ada).update(role=Role.READER)
    person = Person(base=mcp_server, username="ada", organization="acme", role=Role.ADMIN)

    with pytest.raises(AssertionError):
        person.consent(_authorize_url(mcp_server))

    assert "you are reader in acme: you cannot grant admin" in unescape(person.pages[-1])
    assert not get_grant_model().objects.exists()  # no authorization code was issued


def _register(base: str) -> dict[str, Any]:
    registered = httpx.post(
        f"{base}/oauth/register/",
        json={"client_name": "Probe", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        timeout=30,
    )
    assert registered.status_code == 201, registered.text
    return dict(registered.json())


def _authorize_url(base: str) -> str:
    client_id = _register(base)["client_id"]
    return (
        f"/oauth/authorize/?response_type=code&client_id={client_id}&redirect_uri={REDIRECT_URI}"
        "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
        f"&resource={base}/mcp&state=s"
    )
