"""A locked memory is immutable to anyone below curator; unlocking leaves it verified."""

from __future__ import annotations

import pytest

from memories.decisions import memory_delete, memory_lock, memory_set_status, memory_unlock
from memories.models import Memory, MemoryVersion
from memories.selectors import memory_get
from memories.services import memory_create, memory_update
from memory_platform.exceptions import Conflict, Locked, PermissionDenied
from tests.conftest import MemoryFactory, Tenant


@pytest.fixture
def locked(acme: Tenant, make_memory: MemoryFactory) -> Memory:
    memory = make_memory(current_content="Releases happen on Tuesdays.", importance=6)
    return memory_lock(principal=acme.curator, memory_id=memory.id, reason="agreed in the release review")


def _unchanged(memory: Memory) -> None:
    stored = Memory.objects.get(pk=memory.id)
    assert (stored.current_content, stored.status, stored.importance, stored.deleted_at, stored.version) == (
        memory.current_content,
        "locked",
        memory.importance,
        None,
        memory.version,
    )
    assert MemoryVersion.objects.filter(memory=memory).count() == memory.version


def test_agent_cannot_update_locked_memory(acme: Tenant, locked: Memory) -> None:
    with pytest.raises(Locked) as exc:
        memory_update(principal=acme.agent, memory_id=locked.id, data={"current_content": "Releases on Fridays."})
    assert exc.value.code == "locked"
    assert "is locked" in exc.value.message
    assert "ask a curator" in exc.value.message.lower()
    _unchanged(locked)


@pytest.mark.parametrize("status", ["draft", "active"])
def test_agent_cannot_change_status_of_locked_memory(acme: Tenant, locked: Memory, status: str) -> None:
    with pytest.raises(Locked, match=r"(?i)ask a curator"):
        memory_set_status(principal=acme.agent, memory_id=locked.id, status=status)
    with pytest.raises(Locked, match=r"(?i)ask a curator"):
        memory_update(principal=acme.agent, memory_id=locked.id, data={"status": status})
    _unchanged(locked)


def test_agent_cannot_delete_locked_memory(acme: Tenant, locked: Memory) -> None:
    with pytest.raises(Locked, match=r"(?i)ask a curator"):
        memory_delete(principal=acme.agent, memory_id=locked.id)
    _unchanged(locked)
    assert memory_get(acme.agent, locked.id).id == locked.id


def test_agent_cannot_overwrite_locked_memory_through_upsert(acme: Tenant, locked: Memory) -> None:
    with pytest.raises(Locked):
        memory_create(
            principal=acme.agent,
            memory_id=locked.id,
            data={"scope_type": "organization", "memory_type": "fact", "current_content": "Releases on Fridays."},
        )
    _unchanged(locked)


def test_locked_is_a_permission_error_for_interfaces(acme: Tenant, locked: Memory) -> None:
    # Interfaces that only know PermissionDenied still refuse the write.
    with pytest.raises(PermissionDenied):
        memory_update(principal=acme.agent, memory_id=locked.id, data={"importance": 2})


def test_curator_may_update_locked_memory(acme: Tenant, locked: Memory) -> None:
    updated = memory_update(
        principal=acme.curator, memory_id=locked.id, data={"current_content": "Releases happen on Wednesdays."}
    )
    stored = Memory.objects.get(pk=locked.id)
    assert stored.current_content == "Releases happen on Wednesdays."
    assert stored.status == "locked"
    assert stored.version == updated.version == locked.version + 1


def test_unlock_returns_memory_to_verified(acme: Tenant, locked: Memory) -> None:
    unlocked = memory_unlock(principal=acme.curator, memory_id=locked.id, reason="needs a revision")
    assert unlocked.status == "verified"
    assert Memory.objects.get(pk=locked.id).status == "verified"
    latest = MemoryVersion.objects.filter(memory=locked).order_by("-version").first()
    assert latest is not None
    assert (latest.change, latest.snapshot["status"], latest.reason) == ("status", "verified", "needs a revision")

    # Unlocked, an agent may edit it again; the changed memory waits as a draft until a curator
    # reviews the change (curators stand behind what they read, not what it became).
    memory_update(principal=acme.agent, memory_id=locked.id, data={"current_content": "Releases on Fridays."})
    stored = Memory.objects.get(pk=locked.id)
    assert (stored.current_content, stored.status, stored.reviewed_by) == ("Releases on Fridays.", "draft", "")
    assert "reviewed_changed" in [flag["code"] for flag in stored.review_flags]


def test_unlock_of_unlocked_memory_is_a_conflict(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(Conflict, match="not locked"):
        memory_unlock(principal=acme.curator, memory_id=memory.id)
    assert Memory.objects.get(pk=memory.id).version == 1


def test_agent_cannot_unlock(acme: Tenant, locked: Memory) -> None:
    with pytest.raises(PermissionDenied, match="curator"):
        memory_unlock(principal=acme.agent, memory_id=locked.id)
    _unchanged(locked)


def test_curator_may_delete_locked_memory(acme: Tenant, locked: Memory) -> None:
    memory_delete(principal=acme.curator, memory_id=locked.id)
    assert Memory.objects.get(pk=locked.id).deleted_at is not None
