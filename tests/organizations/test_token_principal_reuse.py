"""A token's principal is built once per process and used again while the token's state in the
database is what it was built from: one small query a request, and any change made anywhere (another
process, the admin, a plain UPDATE) is seen by the next request."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import ApiToken, Membership, Organization, Role, User
from organizations.tokens import principal_for_token, recent_principals, token_create
from tests.conftest import Tenant


def test_the_second_request_reuses_the_principal_in_one_query(acme: Tenant, django_assert_num_queries: Any) -> None:
    raw = acme.raw_tokens[Role.AGENT]
    first = principal_for_token(raw)

    with django_assert_num_queries(1):
        again = principal_for_token(raw)

    assert again == first and again.token is not None and again.token.pk == first.token.pk


def test_callers_of_one_token_share_no_model_instance(acme: Tenant) -> None:
    raw = acme.raw_tokens["person"]
    first, second = principal_for_token(raw), principal_for_token(raw)
    assert first.token is not None and second.token is not None

    first.organization.name = "Renamed in one request"
    first.token.last_used_at = None

    assert second.organization.name == "Acme" and second.token.last_used_at is not None
    assert principal_for_token(raw).organization.name == "Acme"
    assert second.token.organization is second.organization and second.token.user is second.user
    assert {id(first.organization), id(first.user), id(first.token)}.isdisjoint(
        {id(second.organization), id(second.user), id(second.token)}
    )


def test_a_fresh_process_builds_the_principal_again(acme: Tenant) -> None:
    raw = acme.raw_tokens[Role.AGENT]
    first = principal_for_token(raw)
    recent_principals.clear()

    again = principal_for_token(raw)

    assert again is not first
    assert again.token == first.token and again.role == Role.AGENT


def test_a_revocation_written_behind_the_services_back_is_seen_at_once(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    principal_for_token(issued.raw)

    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())

    with pytest.raises(AuthenticationFailed, match="has been revoked"):
        principal_for_token(issued.raw)


def test_a_changed_role_gives_a_new_principal(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.READER)
    assert principal_for_token(issued.raw).role == Role.READER

    ApiToken.objects.filter(pk=issued.token.pk).update(role=Role.CURATOR)

    assert principal_for_token(issued.raw).role == Role.CURATOR


def test_a_renamed_organization_shows_its_new_slug(acme: Tenant) -> None:
    raw = acme.raw_tokens[Role.AGENT]
    principal_for_token(raw)

    Organization.objects.filter(pk=acme.organization.pk).update(slug="acme-corp")

    assert principal_for_token(raw).organization.slug == "acme-corp"


def test_a_departed_person_is_refused_after_having_been_let_in(acme: Tenant) -> None:
    raw = acme.raw_tokens["person"]
    principal_for_token(raw)
    Membership.objects.filter(user__username="acme-person").delete()

    with pytest.raises(AuthenticationFailed, match="no longer a member of acme"):
        principal_for_token(raw)


def test_a_deactivated_person_is_refused_after_having_been_let_in(acme: Tenant) -> None:
    raw = acme.raw_tokens["person"]
    principal_for_token(raw)
    User.objects.filter(username="acme-person").update(is_active=False)

    with pytest.raises(AuthenticationFailed, match="is deactivated"):
        principal_for_token(raw)


def test_a_token_that_expires_while_remembered_is_refused(acme: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    expires = timezone.now() + timedelta(minutes=5)
    issued = token_create(principal=acme.admin, role=Role.AGENT, expires_at=expires)
    principal_for_token(issued.raw)

    later = expires + timedelta(seconds=1)
    monkeypatch.setattr("organizations.tokens.timezone.now", lambda: later)

    with pytest.raises(AuthenticationFailed, match="has expired"):
        principal_for_token(issued.raw)


def test_a_wrong_secret_with_a_remembered_prefix_is_invalid(acme: Tenant) -> None:
    raw = acme.raw_tokens[Role.AGENT]
    principal_for_token(raw)
    prefix = raw.split("_")[1]

    with pytest.raises(AuthenticationFailed, match=r"^invalid token$"):
        principal_for_token(f"mp_{prefix}_{'x' * 43}")
