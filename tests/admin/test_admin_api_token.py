"""Tokens in the admin: seen and revoked by organization admins, never created (a token's secret
is shown once, by the command or API that creates it)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import ApiToken, AuditEvent, Role, User
from organizations.tokens import principal_for_token
from tests.admin.conftest import StaffFactory, messages_of
from tests.conftest import Tenant

Login = Callable[[User], Client]
CHANGELIST = "admin:organizations_apitoken_changelist"


def _token(raw: str) -> ApiToken:
    return ApiToken.objects.get(prefix=raw.split("_")[1])


def _revoke(client: Client, *tokens: ApiToken, reason: str = "Laptop stolen") -> list[str]:
    """The action, its confirmation page, then the confirmed revocation with a reason."""
    action = {"action": "revoke", "_selected_action": [str(token.pk) for token in tokens]}
    page = client.post(reverse(CHANGELIST), {**action, "index": "0"})
    if page.status_code == 200 and 'id="confirm-revoke"' in page.content.decode():
        assert all(ApiToken.objects.get(pk=token.pk).revoked_at is None for token in tokens)  # nothing yet
    response = client.post(reverse(CHANGELIST), {**action, "post": "yes", "reason": reason}, follow=True)
    return messages_of(response)


def test_an_admin_revokes_a_token_and_it_stops_working(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    raw = acme.raw_tokens[Role.AGENT]

    assert _revoke(client, _token(raw)) == ["Revoked 1 token(s). Reason kept: “Laptop stolen”"]
    assert AuditEvent.objects.get(action="token.revoke", target_id=_token(raw).prefix).reason == "Laptop stolen"

    with pytest.raises(AuthenticationFailed, match="revoked"):
        principal_for_token(raw)
    assert principal_for_token(acme.raw_tokens[Role.READER]).role == Role.READER


def test_an_admin_lists_the_own_organizations_tokens_only(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))

    response = client.get(reverse(CHANGELIST))

    listed = {token.organization.slug for token in response.context["cl"].result_list}
    assert listed == {"acme"}
    assert len(response.context["cl"].result_list) == len(acme.raw_tokens)
    assert "globex" not in response.content.decode()


def test_another_organizations_admin_cannot_revoke_acme_tokens(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("gail", globex.organization, Role.ADMIN))
    raw = acme.raw_tokens[Role.AGENT]

    _revoke(client, _token(raw))

    assert principal_for_token(raw).organization == acme.organization
    page = client.get(reverse("admin:organizations_apitoken_change", args=[_token(raw).pk]))
    assert page.status_code == 302


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT, Role.CURATOR])
def test_only_organization_admins_see_tokens(acme: Tenant, make_staff: StaffFactory, login: Login, role: str) -> None:
    client = login(make_staff("carol", acme.organization, role))
    raw = acme.raw_tokens[Role.AGENT]

    assert client.get(reverse(CHANGELIST)).status_code == 403
    response = client.post(
        reverse(CHANGELIST), {"action": "revoke", "_selected_action": [str(_token(raw).pk)], "index": "0"}
    )
    assert response.status_code == 403
    assert principal_for_token(raw).role == Role.AGENT


def test_nobody_adds_tokens_in_the_admin_not_even_a_superuser(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    for user in (
        make_staff("ada", acme.organization, Role.ADMIN),
        User.objects.create_superuser(username="root", password="unused-password-1"),
    ):
        client = login(user)
        assert client.get(reverse("admin:organizations_apitoken_add")).status_code == 403
        assert 'href="/admin/organizations/apitoken/add/"' not in client.get(reverse(CHANGELIST)).content.decode()


def test_the_token_page_shows_neither_secret_nor_hash(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    raw = acme.raw_tokens[Role.AGENT]
    token = _token(raw)

    body = client.get(reverse("admin:organizations_apitoken_change", args=[token.pk])).content.decode()

    assert token.prefix in body
    assert raw.split("_", 2)[2] not in body
    assert token.secret_hash not in body


def test_a_superuser_revokes_any_organizations_token(acme: Tenant, globex: Tenant, login: Login) -> None:
    client = login(User.objects.create_superuser(username="root", password="unused-password-1"))

    assert _revoke(client, _token(acme.raw_tokens[Role.ADMIN]), _token(globex.raw_tokens[Role.ADMIN])) == [
        "Revoked 2 token(s). Reason kept: “Laptop stolen”"
    ]
    for raw in (acme.raw_tokens[Role.ADMIN], globex.raw_tokens[Role.ADMIN]):
        with pytest.raises(AuthenticationFailed):
            principal_for_token(raw)


def test_revoking_shows_the_tokens_and_asks_why_first(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    token = _token(acme.raw_tokens[Role.AGENT])
    action = {"action": "revoke", "_selected_action": [str(token.pk)]}

    page = client.post(reverse(CHANGELIST), {**action, "index": "0"}).content.decode()
    assert "acme-agent" in page and "agent in acme" in page
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None

    refused = client.post(reverse(CHANGELIST), {**action, "post": "yes", "reason": "  "}).content.decode()
    assert "Say why: the reason is kept in the audit log." in refused
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
