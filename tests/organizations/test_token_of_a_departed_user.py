"""A personal token acts for its person: when the person leaves the organization or their
account is deactivated, the token stops working with them."""

from __future__ import annotations

import pytest

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import Membership, Organization, Role, User
from organizations.tokens import principal_for_token, token_create
from tests.conftest import Tenant


def test_a_personal_token_works_while_its_user_is_a_member(acme: Tenant) -> None:
    principal = principal_for_token(acme.raw_tokens["person"])

    assert principal.user is not None and principal.user.username == "acme-person"


def test_removing_the_membership_stops_the_personal_token(acme: Tenant) -> None:
    Membership.objects.filter(user__username="acme-person", organization=acme.organization).delete()

    with pytest.raises(AuthenticationFailed) as refused:
        principal_for_token(acme.raw_tokens["person"])

    assert refused.value.message == (
        "the user of this token, acme-person, is no longer a member of acme; ask an organization admin"
    )


def test_membership_in_another_organization_does_not_count(acme: Tenant, globex: Tenant) -> None:
    person = User.objects.get(username="acme-person")
    Membership.objects.filter(user=person).update(organization=globex.organization)

    with pytest.raises(AuthenticationFailed, match="no longer a member of acme"):
        principal_for_token(acme.raw_tokens["person"])


def test_deactivating_the_user_stops_the_personal_token(acme: Tenant) -> None:
    User.objects.filter(username="acme-person").update(is_active=False)

    with pytest.raises(AuthenticationFailed) as refused:
        principal_for_token(acme.raw_tokens["person"])

    assert refused.value.message == "the user of this token, acme-person, is deactivated; ask an organization admin"


def test_tokens_without_a_user_are_unaffected(acme: Tenant) -> None:
    Membership.objects.filter(organization=acme.organization).delete()

    assert principal_for_token(acme.raw_tokens[Role.AGENT]).role == Role.AGENT


def test_a_superusers_token_needs_no_membership(acme: Tenant) -> None:
    root = User.objects.create_superuser(username="root", password="unused-password-1")
    issued = token_create(principal=acme.admin, role=Role.ADMIN, user=root)

    principal = principal_for_token(issued.raw)

    assert principal.is_superuser
    assert principal.organization == Organization.objects.get(slug="acme")
