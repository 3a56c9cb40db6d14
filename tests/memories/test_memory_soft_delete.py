"""Deleting hides a memory but never removes it; only a curator brings it back."""

from __future__ import annotations

import pytest

from memories.decisions import memory_delete, memory_restore, memory_set_status
from memories.models import Memory, MemoryVersion
from memories.selectors import MemoryFilters, memory_get, memory_get_many, memory_list, memory_versions
from memories.services import memory_update
from memory_platform.exceptions import Conflict, NotFound, PermissionDenied
from tests.conftest import MemoryFactory, Tenant


def test_delete_keeps_the_row_and_its_versions(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_update(principal=acme.agent, memory_id=memory.id, data={"importance": 5})

    deleted = memory_delete(principal=acme.agent, memory_id=memory.id, reason="duplicate")

    stored = Memory.objects.get(pk=memory.id)
    assert stored.deleted_at is not None
    assert stored.is_deleted
    assert stored.current_content == memory.current_content
    assert deleted.version == stored.version == 3
    assert list(MemoryVersion.objects.filter(memory=memory).order_by("version").values_list("change", flat=True)) == [
        "create",
        "update",
        "delete",
    ]


def test_deleted_memory_vanishes_from_reads(acme: Tenant, make_memory: MemoryFactory) -> None:
    kept = make_memory()
    gone = make_memory()
    memory_delete(principal=acme.agent, memory_id=gone.id)

    with pytest.raises(NotFound, match=str(gone.id)):
        memory_get(acme.agent, gone.id)
    assert memory_get_many(acme.agent, [gone.id, kept.id]) == [kept]
    assert [m.id for m in memory_list(acme.agent)] == [kept.id]


def test_deleted_memory_is_readable_when_asked_for(acme: Tenant, make_memory: MemoryFactory) -> None:
    kept = make_memory()
    gone = make_memory()
    memory_delete(principal=acme.agent, memory_id=gone.id)

    assert memory_get(acme.reader, gone.id, include_deleted=True).deleted_at is not None
    listed = memory_list(acme.reader, MemoryFilters.from_mapping({"include_deleted": True}))
    assert {m.id for m in listed} == {kept.id, gone.id}
    # Its history stays readable too.
    assert [v.change for v in memory_versions(acme.reader, gone.id)] == ["delete", "create"]


def test_deleting_twice_is_not_found(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_delete(principal=acme.agent, memory_id=memory.id)
    first_deleted_at = Memory.objects.get(pk=memory.id).deleted_at

    with pytest.raises(NotFound, match="not found"):
        memory_delete(principal=acme.agent, memory_id=memory.id)

    stored = Memory.objects.get(pk=memory.id)
    assert stored.deleted_at == first_deleted_at
    assert stored.version == 2
    assert MemoryVersion.objects.filter(memory=memory).count() == 2


def test_deleted_memory_cannot_be_changed(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_delete(principal=acme.agent, memory_id=memory.id)
    with pytest.raises(NotFound):
        memory_update(principal=acme.curator, memory_id=memory.id, data={"importance": 9})
    with pytest.raises(NotFound):
        memory_set_status(principal=acme.curator, memory_id=memory.id, status="verified")
    stored = Memory.objects.get(pk=memory.id)
    assert (stored.importance, stored.status, stored.version) == (1, "draft", 2)


@pytest.mark.parametrize("role", ["reader", "agent", "person"])
def test_restore_needs_a_curator(acme: Tenant, make_memory: MemoryFactory, role: str) -> None:
    memory = make_memory()
    memory_delete(principal=acme.agent, memory_id=memory.id)
    with pytest.raises(PermissionDenied, match="curator"):
        memory_restore(principal=getattr(acme, role), memory_id=memory.id)
    assert Memory.objects.get(pk=memory.id).deleted_at is not None


def test_curator_restores_a_deleted_memory(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(importance=4)
    memory_delete(principal=acme.agent, memory_id=memory.id)

    restored = memory_restore(principal=acme.curator, memory_id=memory.id, reason="deleted by mistake")

    assert restored.deleted_at is None
    assert memory_get(acme.agent, memory.id).importance == 4
    assert [m.id for m in memory_list(acme.agent)] == [memory.id]
    assert Memory.objects.get(pk=memory.id).version == 3


def test_restoring_a_memory_that_is_not_deleted_is_a_conflict(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(Conflict, match="not deleted"):
        memory_restore(principal=acme.curator, memory_id=memory.id)
    assert Memory.objects.get(pk=memory.id).version == 1


def test_restoring_an_unknown_memory_is_not_found(acme: Tenant) -> None:
    with pytest.raises(NotFound):
        memory_restore(principal=acme.curator, memory_id="6f1b7a8e-5a0e-4a57-9d0a-0c9f1d3e2b11")
