"""The list's bulk actions: a page first lists what will change and asks why; then the same
services as MCP and REST run, each writing a version and an audit event with that reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.test import Client
from django.urls import reverse

from memories.decisions import memory_delete, memory_lock, memory_verify
from memories.models import Memory, MemoryVersion
from organizations.models import AuditEvent, Role, User
from tests.admin.conftest import StaffFactory, messages_of
from tests.conftest import MemoryFactory, Tenant

if TYPE_CHECKING:
    from tests.admin.conftest import TestResponse

Login = Callable[[User], Client]
ClientAs = Callable[..., Client]
CHANGELIST = "admin:memories_memory_changelist"


def _ask(client: Client, action: str, *memories: Memory) -> TestResponse:
    """Choose an action in the list: the page that asks for a reason."""
    return client.post(
        reverse(CHANGELIST),
        {"action": f"{action}_selected", "_selected_action": [str(m.pk) for m in memories], "index": "0"},
    )


def _run(
    client: Client, action: str, *memories: Memory, reason: str = "reviewed in the admin", shown: str = ""
) -> TestResponse:
    """Confirm an action with a reason, as the reason page posts it; returns the list shown afterwards.
    ``shown``: the list's filter the memories are on (by default it shows what is in force)."""
    changelist = reverse(CHANGELIST) + (f"?shown={shown}" if shown else "")
    response = client.post(
        changelist,
        {
            "action": f"{action}_selected",
            "_selected_action": [str(m.pk) for m in memories],
            "post": "yes",
            "reason": reason,
        },
        follow=True,
    )
    assert response.redirect_chain == [(changelist, 302)], response.content[:500]
    return response


@pytest.fixture
def curator_client(acme: Tenant, make_staff: StaffFactory, login: Login) -> Client:
    return login(make_staff("carol", acme.organization, Role.CURATOR))


def _latest_version(memory: Memory) -> MemoryVersion:
    return MemoryVersion.objects.filter(memory=memory).order_by("-version").first()  # type: ignore[return-value]


def test_the_reason_page_lists_what_will_change_and_changes_nothing(
    make_memory: MemoryFactory, curator_client: Client
) -> None:
    draft = make_memory(title="Ruff is the linter")
    deprecated = make_memory(title="Flake8 is the linter", status="active")

    response = _ask(curator_client, "deprecate", draft, deprecated)

    assert response.status_code == 200
    page = response.content.decode()
    assert "Ruff is the linter" in page and "Flake8 is the linter" in page
    assert "Reason" in page and 'name="reason"' in page
    rows = {row.memory.title: (row.before, row.after) for row in response.context["rows"]}
    assert rows == {"Ruff is the linter": ("draft", "deprecated"), "Flake8 is the linter": ("active", "deprecated")}
    for memory in (draft, deprecated):
        memory.refresh_from_db()
        assert memory.version == 1


def test_confirming_without_a_reason_asks_again(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()

    response = curator_client.post(
        reverse(CHANGELIST),
        {"action": "verify_selected", "_selected_action": [str(memory.pk)], "post": "yes", "reason": "  "},
    )

    assert response.status_code == 200
    assert "Say why" in response.content.decode()
    memory.refresh_from_db()
    assert memory.version == 1


def test_a_reason_over_the_limit_is_refused(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()

    response = curator_client.post(
        reverse(CHANGELIST),
        {"action": "lock_selected", "_selected_action": [str(memory.pk)], "post": "yes", "reason": "x" * 2001},
    )

    assert "keep it to 2000" in response.content.decode()
    memory.refresh_from_db()
    assert memory.version == 1


@pytest.mark.parametrize(
    ("action", "status", "done"),
    [("verify", "verified", "Verified"), ("lock", "locked", "Locked"), ("deprecate", "deprecated", "Deprecated")],
)
def test_status_actions_keep_the_reason_in_the_version_and_the_audit_event(
    make_memory: MemoryFactory, curator_client: Client, action: str, status: str, done: str
) -> None:
    first, second = make_memory(), make_memory()

    response = _run(curator_client, action, first, second, reason="agreed at the Monday review")

    for memory in (first, second):
        memory.refresh_from_db()
        assert (memory.status, memory.version) == (status, 2)
        version = _latest_version(memory)
        assert (version.change, version.reason) == ("status", "agreed at the Monday review")
        assert version.actor == "user carol"
        assert version.snapshot["status"] == status
        event = AuditEvent.objects.get(target_id=str(memory.pk), action="memory.status")
        assert event.reason == "agreed at the Monday review"
    assert messages_of(response) == [f"{done} 2 memories. Reason kept: “agreed at the Monday review”"]


def test_unlock_leaves_the_memory_verified(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()
    memory_lock(principal=acme.curator, memory_id=memory.pk)

    response = _run(curator_client, "unlock", memory)

    memory.refresh_from_db()
    assert (memory.status, memory.version) == ("verified", 3)
    assert messages_of(response) == ["Unlocked 1 memory. Reason kept: “reviewed in the admin”"]


def test_what_an_action_does_not_apply_to_is_listed_as_unchanged_and_left_alone(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    locked, draft = make_memory(title="Already locked"), make_memory(title="A draft")
    memory_lock(principal=acme.curator, memory_id=locked.pk)

    page = _ask(curator_client, "unlock", locked, draft)
    rows = {row.memory.title: row.after for row in page.context["rows"]}
    assert rows == {"Already locked": "verified", "A draft": None}
    assert "no change" in page.content.decode()

    _run(curator_client, "unlock", locked, draft)
    draft.refresh_from_db()
    assert draft.version == 1


def test_deprecate_then_reactivate_brings_back_the_status_it_had(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory(title="Ruff is the linter")
    memory_verify(principal=acme.curator, memory_id=memory.pk)

    _run(curator_client, "deprecate", memory, reason="looked like a duplicate")
    response = _run(curator_client, "reactivate", memory, reason="it is the canonical rule", shown="retired")

    memory.refresh_from_db()
    assert (memory.status, memory.version) == ("verified", 4)
    latest = _latest_version(memory)
    assert (latest.change, latest.reason) == ("reactivate", "it is the canonical rule")
    assert messages_of(response) == ["Reactivated 1 memory. Reason kept: “it is the canonical rule”"]


def test_soft_delete_and_restore(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()

    _run(curator_client, "delete", memory)
    memory.refresh_from_db()
    assert memory.deleted_at is not None
    assert _latest_version(memory).change == "delete"
    # A deleted memory stays in the admin, so it can be restored.
    deleted = curator_client.get(reverse(CHANGELIST), {"shown": "deleted"})
    assert [m.pk for m in deleted.context["cl"].result_list] == [memory.pk]

    response = _run(curator_client, "restore", memory, shown="deleted")
    memory.refresh_from_db()
    assert (memory.deleted_at, memory.version) == (None, 3)
    assert _latest_version(memory).change == "restore"
    assert messages_of(response) == ["Restored 1 memory. Reason kept: “reviewed in the admin”"]


@pytest.mark.parametrize("role", [Role.AGENT, Role.READER])
@pytest.mark.parametrize("action", ["verify", "lock", "deprecate", "delete", "restore"])
def test_members_below_curator_get_no_curation_actions(
    acme: Tenant, make_memory: MemoryFactory, client_as: ClientAs, role: str, action: str
) -> None:
    memory = make_memory(title="Deploys need approval")
    if action == "restore":
        memory_delete(principal=acme.agent, memory_id=memory.pk)
    memory.refresh_from_db()
    before = (memory.status, memory.version, memory.deleted_at)
    client = client_as("alex", acme.organization, role)

    listed = client.get(reverse(CHANGELIST))
    assert f"{action}_selected" not in listed.content.decode()
    client.post(
        reverse(CHANGELIST),
        {"action": f"{action}_selected", "_selected_action": [str(memory.pk)], "post": "yes", "reason": "x"},
    )

    memory.refresh_from_db()
    assert (memory.status, memory.version, memory.deleted_at) == before
