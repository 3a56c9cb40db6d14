"""The list actions run the same services as MCP and REST: each writes a version, and the
services' role rules decide, with their reasons shown as messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import Memory, MemoryVersion
from memories.services import memory_delete, memory_lock
from organizations.models import Role, User
from tests.admin.conftest import StaffFactory, messages_of
from tests.conftest import MemoryFactory, Tenant

if TYPE_CHECKING:
    from tests.admin.conftest import TestResponse

Login = Callable[[User], Client]
ClientAs = Callable[..., Client]


def _run(client: Client, action: str, *memories: Memory) -> TestResponse:
    """Run a list action like a curator would; returns the list page shown afterwards."""
    changelist = reverse("admin:memories_memory_changelist")
    response = client.post(
        changelist,
        {"action": action, "_selected_action": [str(memory.pk) for memory in memories], "index": "0"},
        follow=True,
    )
    assert response.redirect_chain == [(changelist, 302)]
    return response


@pytest.fixture
def curator_client(acme: Tenant, make_staff: StaffFactory, login: Login) -> Client:
    return login(make_staff("carol", acme.organization, Role.CURATOR))


def _latest_version(memory: Memory) -> MemoryVersion:
    return MemoryVersion.objects.filter(memory=memory).order_by("-version").first()  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("action", "status", "done"),
    [("verify", "verified", "Verified"), ("lock", "locked", "Locked"), ("deprecate", "deprecated", "Deprecated")],
)
def test_status_actions_change_the_status_and_write_a_version(
    make_memory: MemoryFactory, curator_client: Client, action: str, status: str, done: str
) -> None:
    first, second = make_memory(), make_memory()

    response = _run(curator_client, action, first, second)

    for memory in (first, second):
        memory.refresh_from_db()
        assert memory.status == status
        assert memory.version == 2
        version = _latest_version(memory)
        assert (version.version, version.change, version.reason) == (2, "status", "admin action")
        assert version.actor == "user carol"
        assert version.snapshot["status"] == status
    assert messages_of(response) == [f"{done} 2 memory(ies)."]


def test_unlock_leaves_the_memory_verified(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()
    memory_lock(principal=acme.curator, memory_id=memory.pk)

    response = _run(curator_client, "unlock", memory)

    memory.refresh_from_db()
    assert memory.status == "verified"
    assert memory.version == 3
    assert messages_of(response) == ["Unlocked 1 memory(ies)."]


def test_unlocking_a_memory_that_is_not_locked_says_so(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory(title="Plain draft")

    response = _run(curator_client, "unlock", memory)

    assert messages_of(response) == [f"Plain draft: memory {memory.pk} is not locked (status 'draft')"]
    memory.refresh_from_db()
    assert memory.version == 1


def test_soft_delete_and_restore(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()

    _run(curator_client, "soft_delete", memory)
    memory.refresh_from_db()
    assert memory.deleted_at is not None
    assert _latest_version(memory).change == "delete"
    # A deleted memory stays in the admin, so it can be restored.
    deleted = curator_client.get(reverse("admin:memories_memory_changelist"), {"deleted": "yes"})
    assert [m.pk for m in deleted.context["cl"].result_list] == [memory.pk]

    response = _run(curator_client, "restore", memory)
    memory.refresh_from_db()
    assert memory.deleted_at is None
    assert memory.version == 3
    assert _latest_version(memory).change == "restore"
    assert messages_of(response) == ["Restored 1 memory(ies)."]


@pytest.mark.parametrize(
    ("action", "needed"),
    [
        ("verify", "verifying a memory"),
        ("lock", "locking a memory"),
        ("deprecate", "deprecating a memory"),
        ("restore", "restoring a deleted memory"),
    ],
)
def test_an_agent_member_is_refused_with_the_reason(
    acme: Tenant, make_memory: MemoryFactory, client_as: ClientAs, action: str, needed: str
) -> None:
    memory = make_memory(title="Deploys need approval")
    if action == "restore":
        memory_delete(principal=acme.agent, memory_id=memory.pk)
    memory.refresh_from_db()
    before = (memory.status, memory.version, memory.deleted_at)
    client = client_as("alex", acme.organization, Role.AGENT)

    response = _run(client, action, memory)

    assert messages_of(response) == [
        f"Deploys need approval: {needed} needs the curator role or higher; "
        "this account has the agent role in acme. Ask an organization admin."
    ]
    memory.refresh_from_db()
    assert (memory.status, memory.version, memory.deleted_at) == before


def test_a_reader_cannot_soft_delete(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login
) -> None:
    memory = make_memory(title="Deploys need approval")
    client = login(make_staff("rita", acme.organization, Role.READER))

    response = _run(client, "soft_delete", memory)

    assert messages_of(response) == [
        "Deploys need approval: writing memories needs the agent role or higher; "
        "this account has the reader role in acme. Ask an organization admin."
    ]
    memory.refresh_from_db()
    assert memory.deleted_at is None


def test_one_refusal_does_not_stop_the_rest(make_memory: MemoryFactory, curator_client: Client) -> None:
    locked, draft = make_memory(title="Already locked"), make_memory(title="A draft")
    _run(curator_client, "lock", locked)

    response = _run(curator_client, "unlock", locked, draft)

    assert sorted(messages_of(response)) == sorted(
        [f"A draft: memory {draft.pk} is not locked (status 'draft')", "Unlocked 1 memory(ies)."]
    )
    locked.refresh_from_db()
    assert locked.status == "verified"
