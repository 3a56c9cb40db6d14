from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import Memory
from memories.services import memory_create
from organizations.models import Role, User
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]


@pytest.fixture
def personal_memory(acme: Tenant) -> Memory:
    return memory_create(
        principal=acme.person,
        data={
            "scope_type": "user",
            "memory_type": "preference",
            "title": "I prefer tabs over spaces",
            "current_content": "I prefer tabs over spaces in every repository.",
        },
    )[0]


def _listed(client: Client) -> set[str]:
    response = client.get(reverse("admin:memories_memory_changelist"))
    assert response.status_code == 200
    return {memory.title for memory in response.context["cl"].result_list}


@pytest.mark.parametrize("role", [Role.CURATOR, Role.ADMIN])
def test_curators_and_admins_do_not_see_someone_elses_personal_memory(
    acme: Tenant,
    personal_memory: Memory,
    make_memory: MemoryFactory,
    client_as: Callable[..., Client],
    role: str,
) -> None:
    shared = make_memory(title="Shared knowledge")
    client = client_as("carol", acme.organization, role)

    assert _listed(client) == {shared.title}
    response = client.get(reverse("admin:memories_memory_change", args=[personal_memory.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:index")


def test_the_owner_sees_the_own_personal_memory(acme: Tenant, personal_memory: Memory, login: Login) -> None:
    owner = personal_memory.owner
    assert owner is not None
    owner.is_staff = True
    owner.save(update_fields=["is_staff"])

    client = login(owner)

    assert _listed(client) == {personal_memory.title}
    assert client.get(reverse("admin:memories_memory_change", args=[personal_memory.pk])).status_code == 200


def test_a_superuser_sees_personal_memories(acme: Tenant, personal_memory: Memory, login: Login) -> None:
    client = login(User.objects.create_superuser(username="root", password="unused-password-1"))

    assert personal_memory.title in _listed(client)
