from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from organizations.models import Membership, Role, User
from tests.admin.conftest import StaffFactory
from tests.conftest import Tenant

Login = Callable[[User], Client]
CHANGELIST = "admin:organizations_membership_changelist"
ADD = "admin:organizations_membership_add"


def test_an_admin_lists_the_own_organizations_members_only(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))

    response = client.get(reverse(CHANGELIST))

    assert {m.user.username for m in response.context["cl"].result_list} == {"ada", "acme-person"}
    assert "globex" not in response.content.decode()


def test_an_admin_cannot_add_members_to_another_organization(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    newcomer = User.objects.create_user(username="newcomer", password="unused-password-1")

    form = client.get(reverse(ADD)).context["adminform"].form
    assert [str(o) for o in form.fields["organization"].queryset] == ["acme"]
    response = client.post(
        reverse(ADD), {"username": "newcomer", "organization": str(globex.organization.pk), "role": "admin"}
    )

    assert response.status_code == 200
    assert "organization" in response.context["adminform"].form.errors
    assert not Membership.objects.filter(user=newcomer).exists()


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT, Role.CURATOR])
def test_only_admins_manage_members(acme: Tenant, make_staff: StaffFactory, login: Login, role: str) -> None:
    user = make_staff("carol", acme.organization, role)
    client = login(user)
    membership = Membership.objects.get(user=user)

    assert client.get(reverse(ADD)).status_code == 403
    response = client.post(
        reverse("admin:organizations_membership_change", args=[membership.pk]),
        {"user": str(user.pk), "organization": str(acme.organization.pk), "role": "admin"},
    )
    assert response.status_code == 403
    membership.refresh_from_db()
    assert membership.role == role
