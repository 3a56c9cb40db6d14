"""An OAuth access token maps to the Principal its grant names, bound to its resource, never above the membership."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from oauth2_provider.models import get_application_model, get_grant_model

from memory_platform.exceptions import AuthenticationFailed
from organizations.grants import grant_scope, parse_grant
from organizations.models import AuditEvent, Membership, Role, User
from organizations.tokens import principal_for_token
from tests.conftest import Tenant
from tests.oauth import oauth_access_token

pytestmark = pytest.mark.django_db

RESOURCE = "http://testserver/mcp"


@pytest.fixture
def ada(acme: Tenant) -> User:
    user = User.objects.create_user("ada")
    Membership.objects.create(user=user, organization=acme.organization, role=Role.CURATOR)
    return user


def _token(user: User, *, scope: str, resource: list[str] | None = None, expires_in: int = 3600) -> str:
    return oauth_access_token(
        user,
        organization="acme",
        role=Role.AGENT,
        scope=scope,
        resource=[RESOURCE] if resource is None else resource,
        expires_in=expires_in,
    )


def test_the_grant_travels_in_the_scope() -> None:
    assert parse_grant(grant_scope("acme", "agent")) == parse_grant("mcp organization:acme role:agent")
    assert parse_grant("mcp") is None
    assert parse_grant("mcp organization:acme organization:globex role:agent") is None


def test_a_token_acts_as_the_person_in_the_organization_and_role_granted(acme: Tenant, ada: User) -> None:
    principal = principal_for_token(_token(ada, scope=grant_scope("acme", Role.AGENT)), resource=RESOURCE)

    assert (principal.organization, principal.role, principal.user) == (acme.organization, Role.AGENT, ada)
    assert principal.label == "oauth client Test Host for ada"
    assert principal.rate_key == f"oauth:Test Host:{ada.pk}"


def test_the_role_follows_the_membership_down_and_out(acme: Tenant, ada: User) -> None:
    raw = _token(ada, scope=grant_scope("acme", Role.CURATOR))

    Membership.objects.filter(user=ada).update(role=Role.READER)
    assert principal_for_token(raw, resource=RESOURCE).role == Role.READER

    Membership.objects.filter(user=ada).delete()
    with pytest.raises(AuthenticationFailed, match="no longer a member of acme"):
        principal_for_token(raw, resource=RESOURCE)


@pytest.mark.parametrize(
    ("resource", "expires_in", "said"),
    [
        (["http://elsewhere.example/mcp"], 3600, "not issued for http://testserver/mcp"),
        (["http://testserver/mcp/elsewhere"], 3600, "not issued for"),
        ([], 3600, "not issued for"),
        (None, -5, "expired"),
    ],
)
def test_a_token_for_another_audience_or_expired_is_refused(
    ada: User, resource: list[str] | None, expires_in: int, said: str
) -> None:
    raw = _token(ada, scope=grant_scope("acme", Role.AGENT), resource=resource, expires_in=expires_in)

    with pytest.raises(AuthenticationFailed, match=said):
        principal_for_token(raw, resource=RESOURCE)


def test_a_token_without_a_grant_or_a_deactivated_person_is_refused(ada: User) -> None:
    with pytest.raises(AuthenticationFailed, match="grants no organization"):
        principal_for_token(_token(ada, scope="mcp"), resource=RESOURCE)
    raw = _token(ada, scope=grant_scope("acme", Role.AGENT), expires_in=3599)
    User.objects.filter(pk=ada.pk).update(is_active=False)
    with pytest.raises(AuthenticationFailed, match="deactivated"):
        principal_for_token(raw, resource=RESOURCE)


def test_oauth_tokens_open_mcp_only(ada: User) -> None:
    raw = _token(ada, scope=grant_scope("acme", Role.AGENT))

    with pytest.raises(AuthenticationFailed, match="malformed token"):
        principal_for_token(raw)  # REST and stdio take API tokens
    refused = Client().get("/api/v1/memories/", headers={"Authorization": f"Bearer {raw}"})
    assert refused.status_code == 401


def test_what_an_oauth_client_writes_is_audited_as_the_client_for_the_person(acme: Tenant, ada: User) -> None:
    raw = _token(ada, scope=grant_scope("acme", Role.AGENT))
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "memory-write",
            "arguments": {
                "scope_type": "organization",
                "memory_type": "fact",
                "current_content": "The staging database is refreshed every Sunday night.",
            },
        },
    }

    response = Client().post(
        "/mcp",
        data=json.dumps(call),
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}", "Accept": "application/json, text/event-stream"},
    )

    assert response.status_code == 200 and response.json()["result"]["isError"] is False, response.content
    event = AuditEvent.objects.filter(organization=acme.organization, action="memory.create").latest("created_at")
    assert event.actor == "oauth client Test Host for ada"


def test_a_401_says_where_to_sign_in(acme: Tenant) -> None:
    response = Client().post("/mcp", data="{}", content_type="application/json")

    assert response.status_code == 401
    challenge = response["WWW-Authenticate"]
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"' in challenge
    metadata = Client().get("/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["resource"] == RESOURCE
    assert metadata["authorization_servers"] == ["http://testserver"]
    server = Client().get("/.well-known/oauth-authorization-server").json()
    assert server["authorization_endpoint"] == "http://testserver/oauth/authorize/"
    assert server["registration_endpoint"] == "http://testserver/oauth/register/"
    assert "S256" in server["code_challenge_methods_supported"]


@pytest.mark.parametrize(
    ("redirect_uri", "allowed"),
    [("http://127.0.0.1:8123/callback", True), ("https://host.example/cb", True), ("http://host.example/cb", False)],
)
def test_plain_http_redirects_go_to_loopback_only(ada: User, redirect_uri: str, allowed: bool) -> None:
    application = get_application_model().objects.create(
        name="Host", client_type="public", authorization_grant_type="authorization-code", redirect_uris=redirect_uri
    )
    browser = Client()
    browser.force_login(ada)

    page = browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": application.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
            "resource": RESOURCE,
        },
    )

    # Refused: an error page for the person, and no redirect anywhere.
    assert page.status_code == (200 if allowed else 400)
    assert ('id="consent"' in page.content.decode()) is allowed


def test_the_consent_page_grants_no_organization_the_person_is_not_in(acme: Tenant, globex: Tenant, ada: User) -> None:
    application = get_application_model().objects.create(
        name="Host",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:8123/callback",
    )
    browser = Client()
    browser.force_login(ada)
    answer = {
        "client_id": application.client_id,
        "redirect_uri": "http://127.0.0.1:8123/callback",
        "response_type": "code",
        "scope": "mcp",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "organization": "globex",
        "role": Role.READER,
        "allow": "Allow",
    }

    page = browser.post("/oauth/authorize/", answer)

    assert page.status_code == 200 and "globex" not in _choices(page.content.decode())
    assert not get_grant_model().objects.exists()


def _choices(html: str) -> str:
    return " ".join(re.findall(r'<option value="([^"]*)"', html))
