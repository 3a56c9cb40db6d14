"""Adding a memory in the admin goes through memory_create, like any other writer."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import Memory, MemoryVersion
from organizations.models import Membership, Role, User
from tests.admin.conftest import StaffFactory, form_data, messages_of
from tests.conftest import Tenant

Login = Callable[[User], Client]
ADD_URL = "admin:memories_memory_add"


def _add_form(client: Client) -> dict[str, object]:
    response = client.get(reverse(ADD_URL))
    assert response.status_code == 200
    return form_data(response, "memory_form")


def test_a_memory_added_without_title_gets_one_derived(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))
    data = _add_form(client)
    data.update(
        organization=str(acme.organization.pk),
        memory_type="business_rule",
        current_content="All deployments must pass acceptance tests. Otherwise they are rolled back.",
        tags="deploy",
    )

    response = client.post(reverse(ADD_URL), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    memory = Memory.objects.get()
    assert memory.title == "All deployments must pass acceptance tests"
    assert memory.organization == acme.organization
    assert (memory.status, memory.version, memory.tags) == ("draft", 1, ["deploy"])
    assert memory.created_by is not None and memory.created_by.username == "carol"
    version = MemoryVersion.objects.get(memory=memory)
    assert (version.change, version.actor, version.reason) == ("create", "user carol", "written in the admin")


def test_a_given_title_is_kept(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))
    data = _add_form(client)
    data.update(
        organization=str(acme.organization.pk),
        memory_type="fact",
        title="Acceptance tests gate deploys",
        current_content="All deployments must pass acceptance tests.",
    )

    assert client.post(reverse(ADD_URL), data).status_code == 302

    assert Memory.objects.get().title == "Acceptance tests gate deploys"


def test_a_personal_memory_added_in_the_admin_belongs_to_its_author(
    acme: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))
    data = _add_form(client)
    data.update(
        organization=str(acme.organization.pk),
        scope_type="user",
        memory_type="preference",
        current_content="I review database migrations myself.",
    )

    response = client.post(reverse(ADD_URL), data)

    assert response.status_code == 302
    memory = Memory.objects.get()
    assert memory.owner is not None and memory.owner.username == "carol"
    link = f'<a href="{reverse("admin:memories_memory_change", args=[memory.pk])}">{memory.title}</a>'
    # The message names the memory as saved, not the form's blank copy.
    assert messages_of(client.get(response["Location"])) == [f"The memory “{link}” was added successfully."]


def test_the_services_rules_apply_to_the_add_form(acme: Tenant, make_staff: StaffFactory, login: Login) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))
    data = _add_form(client)
    data.update(
        organization=str(acme.organization.pk),
        scope_type="system",
        memory_type="fact",
        current_content="Every organization must see this.",
    )

    response = client.post(reverse(ADD_URL), data)

    assert response.status_code == 200
    errors = response.context["adminform"].form.non_field_errors()
    assert errors[0].startswith("only platform administrators may write system-scope memories")
    assert not Memory.objects.exists()


def test_a_memory_cannot_be_added_to_another_organization(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("gary", globex.organization, Role.CURATOR))
    data = _add_form(client)
    data.update(organization=str(acme.organization.pk), memory_type="fact", current_content="Planted in acme.")

    response = client.post(reverse(ADD_URL), data)

    assert response.status_code == 200
    assert "organization" in response.context["adminform"].form.errors
    assert not Memory.objects.exists()


def test_a_curator_in_one_and_reader_in_another_can_add_only_to_the_first(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    user = make_staff("casey", acme.organization, Role.CURATOR)
    Membership.objects.create(user=user, organization=globex.organization, role=Role.READER)
    client = login(user)

    choices = _add_form(client)
    page = client.get(reverse(ADD_URL)).context["adminform"].form
    assert [str(o) for o in page.fields["organization"].queryset] == ["acme"]
    choices.update(organization=str(globex.organization.pk), memory_type="fact", current_content="Sneaky.")

    assert client.post(reverse(ADD_URL), choices).status_code == 200
    assert not Memory.objects.exists()


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT])
def test_readers_and_agents_cannot_open_the_add_form(
    acme: Tenant, make_staff: StaffFactory, login: Login, role: str
) -> None:
    client = login(make_staff("rita", acme.organization, role))

    assert client.get(reverse(ADD_URL)).status_code == 403
    response = client.post(
        reverse(ADD_URL),
        {"organization": str(acme.organization.pk), "scope_type": "organization", "memory_type": "fact"},
    )
    assert response.status_code == 403
