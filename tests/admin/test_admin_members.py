"""Organization admins manage their members in the admin, through the membership services."""

from __future__ import annotations

from collections.abc import Callable

from django.test import Client
from django.urls import reverse

from organizations.models import AuditEvent, Membership, Role, User
from tests.admin.conftest import StaffFactory, messages_of
from tests.conftest import Tenant

Login = Callable[[User], Client]
CHANGELIST = "admin:organizations_membership_changelist"
ADD = "admin:organizations_membership_add"


def _add(client: Client, tenant: Tenant, **fields: str) -> object:
    data = {"organization": str(tenant.organization.pk), "role": "curator", "email": "", **fields}
    return client.post(reverse(ADD), data, follow=True)


def test_an_admin_adds_a_new_person_and_gets_their_set_password_link(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))

    response = _add(client, acme, username="carla", email="carla@acme.test", create="on")

    carla = User.objects.get(username="carla")
    assert (carla.is_staff, carla.has_usable_password(), carla.email) == (True, False, "carla@acme.test")
    assert Membership.objects.get(user=carla).role == "curator"
    said = " ".join(messages_of(response))  # type: ignore[arg-type]
    assert "http://testserver/accounts/set-password/" in said and "log in at http://testserver/admin/" in said
    assert AuditEvent.objects.filter(action="membership.set", data__user="carla").exists()


def test_an_existing_person_is_added_without_a_link(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    User.objects.create_user(username="bob", password="their-own-password-1")

    response = _add(client, acme, username="bob", role="reader")

    assert Membership.objects.get(user__username="bob").role == "reader"
    assert not any("set-password" in message for message in messages_of(response))  # type: ignore[arg-type]


def test_a_refused_addition_is_a_form_error_and_writes_nothing(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))

    response = client.post(
        reverse(ADD), {"organization": str(acme.organization.pk), "role": "curator", "username": "ghost"}
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.non_field_errors() == ["no user 'ghost'"]
    assert not User.objects.filter(username="ghost").exists()


def test_an_admin_changes_a_role_but_the_organization_keeps_an_admin(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    ada = make_staff("ada", acme.organization, Role.ADMIN)
    Membership.objects.filter(organization=acme.organization, role=Role.ADMIN).exclude(user=ada).delete()
    reader = make_staff("rita", acme.organization, Role.READER)
    client = login(ada)
    change = "admin:organizations_membership_change"

    unexplained = client.post(reverse(change, args=[Membership.objects.get(user=reader).pk]), {"role": "curator"})
    assert unexplained.context["adminform"].form.errors["reason"] == [
        "Say why the role changes: the reason is kept in the audit log."
    ]
    assert Membership.objects.get(user=reader).role == "reader"

    client.post(
        reverse(change, args=[Membership.objects.get(user=reader).pk]),
        {"role": "curator", "reason": "Runs reviews now"},
    )
    assert Membership.objects.get(user=reader).role == "curator"
    assert AuditEvent.objects.get(action="membership.set", data__user="rita").reason == "Runs reviews now"

    refused = client.post(
        reverse(change, args=[Membership.objects.get(user=ada).pk]), {"role": "reader", "reason": "Stepping back"}
    )
    assert "cannot demote the last admin" in refused.context["adminform"].form.non_field_errors()[0]
    assert Membership.objects.get(user=ada).role == "admin"


def test_remove_asks_why_then_removes_and_records_the_reason(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("ada", acme.organization, Role.ADMIN))
    leaver = make_staff("leo", acme.organization, Role.CURATOR)
    membership = Membership.objects.get(user=leaver)
    action = {"action": "remove_members", "_selected_action": [str(membership.pk)]}

    page = client.post(reverse(CHANGELIST), {**action, "index": "0"})
    assert "leo" in page.content.decode() and "leaves acme" in page.content.decode()
    assert Membership.objects.filter(pk=membership.pk).exists()

    client.post(reverse(CHANGELIST), {**action, "post": "yes", "reason": "left the company"})

    assert not Membership.objects.filter(pk=membership.pk).exists()
    leaver.refresh_from_db()
    assert leaver.is_staff is False  # a member of no organization cannot log in to the admin any more
    event = AuditEvent.objects.get(action="membership.remove", data__user="leo")
    assert event.reason == "left the company"


def test_another_organizations_admin_reaches_none_of_acmes_members(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    member = Membership.objects.get(user=make_staff("leo", acme.organization, Role.CURATOR))
    client = login(make_staff("gina", globex.organization, Role.ADMIN))

    page = client.get(reverse("admin:organizations_membership_change", args=[member.pk]))
    assert page.status_code == 302
    client.post(
        reverse(CHANGELIST),
        {"action": "remove_members", "_selected_action": [str(member.pk)], "post": "yes", "reason": "x"},
    )
    client.post(reverse("admin:organizations_membership_change", args=[member.pk]), {"role": "reader", "reason": "x"})

    member.refresh_from_db()
    assert member.role == "curator"


def test_a_users_page_lists_their_memberships(acme: Tenant, globex: Tenant, login: Login) -> None:
    root = User.objects.create_superuser(username="root", password="unused-password-1")
    both = User.objects.create_user(username="bea")
    Membership.objects.create(user=both, organization=acme.organization, role=Role.CURATOR)
    Membership.objects.create(user=both, organization=globex.organization, role=Role.READER)

    page = login(root).get(reverse("admin:organizations_user_change", args=[both.pk])).content.decode()

    assert "memberships" in page.lower()
    assert "acme" in page and "globex" in page and "Curator" in page
