from __future__ import annotations

import pytest

from memory_platform.exceptions import NotFound
from organizations.models import Membership, Role, User
from organizations.selectors import principal_for_user
from tests.conftest import Tenant


@pytest.mark.parametrize("role", Role.values)
def test_a_member_acts_with_the_role_of_the_membership(acme: Tenant, role: str) -> None:
    user = User.objects.create_user(username="member", password="unused-password-1")
    Membership.objects.create(user=user, organization=acme.organization, role=role)

    principal = principal_for_user(user=user, organization=acme.organization)

    assert principal.organization == acme.organization
    assert principal.role == role
    assert principal.user == user
    assert principal.token is None
    assert principal.is_superuser is False


def test_a_non_member_is_told_the_organization_does_not_exist(acme: Tenant, globex: Tenant) -> None:
    user = User.objects.create_user(username="outsider", password="unused-password-1")
    Membership.objects.create(user=user, organization=globex.organization, role=Role.ADMIN)

    with pytest.raises(NotFound) as refused:
        principal_for_user(user=user, organization=acme.organization)

    assert refused.value.message == "organization 'acme' not found"


def test_staff_status_alone_gives_no_membership(acme: Tenant) -> None:
    staff = User.objects.create_user(username="staff", password="unused-password-1", is_staff=True)

    with pytest.raises(NotFound):
        principal_for_user(user=staff, organization=acme.organization)


def test_a_superuser_is_admin_everywhere_without_membership(acme: Tenant, globex: Tenant) -> None:
    root = User.objects.create_superuser(username="root", password="unused-password-1")

    for organization in (acme.organization, globex.organization):
        principal = principal_for_user(user=root, organization=organization)
        assert principal.organization == organization
        assert principal.role == Role.ADMIN
        assert principal.is_superuser


def test_memberships_are_per_organization(acme: Tenant, globex: Tenant) -> None:
    user = User.objects.create_user(username="consultant", password="unused-password-1")
    Membership.objects.create(user=user, organization=acme.organization, role=Role.READER)
    Membership.objects.create(user=user, organization=globex.organization, role=Role.ADMIN)

    assert principal_for_user(user=user, organization=acme.organization).role == Role.READER
    assert principal_for_user(user=user, organization=globex.organization).role == Role.ADMIN
