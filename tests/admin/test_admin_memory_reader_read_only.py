from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.decisions import memory_lock
from memories.models import Memory
from organizations.models import Role, User
from tests.admin.conftest import StaffFactory, form_data
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT])
def test_readers_and_agents_view_memories_without_a_save_button(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login, role: str
) -> None:
    memory = make_memory(title="Deploys need approval")
    client = login(make_staff("rita", acme.organization, role))

    listing = client.get(reverse("admin:memories_memory_changelist"))
    page = client.get(reverse("admin:memories_memory_change", args=[memory.pk]))

    assert [m.title for m in listing.context["cl"].result_list] == [memory.title]
    assert page.status_code == 200
    assert "Deploys need approval" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    assert client.get(reverse("admin:memories_memory_add")).status_code == 403


def _curators_form(client: Client, acme: Tenant, make_staff: StaffFactory, memory: Memory) -> dict[str, object]:
    client.force_login(make_staff("carol", acme.organization, Role.CURATOR))
    data = form_data(client.get(reverse("admin:memories_memory_change", args=[memory.pk])), "memory_form")
    data["current_content"] = "Deploys need no approval any more."
    return data


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT])
def test_readers_and_agents_cannot_post_a_change(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, client: Client, role: str
) -> None:
    memory = make_memory(current_content="Deploys need approval.")
    data = _curators_form(client, acme, make_staff, memory)
    client.force_login(make_staff("rita", acme.organization, role))

    response = client.post(reverse("admin:memories_memory_change", args=[memory.pk]), data)

    assert response.status_code == 403
    memory.refresh_from_db()
    assert memory.current_content == "Deploys need approval."
    assert memory.version == 1


def test_a_reader_cannot_post_a_change_to_a_locked_memory(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, client: Client
) -> None:
    memory = make_memory(current_content="Deploys need approval.")
    memory_lock(principal=acme.curator, memory_id=memory.pk)
    data = _curators_form(client, acme, make_staff, memory)
    client.force_login(make_staff("rita", acme.organization, Role.READER))

    response = client.post(reverse("admin:memories_memory_change", args=[memory.pk]), data)

    assert response.status_code == 403
    memory.refresh_from_db()
    assert memory.current_content == "Deploys need approval."
    assert memory.status == "locked"
