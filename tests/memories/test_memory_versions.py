"""Every change writes a full snapshot as a new version and an audit event; no change, no version."""

from __future__ import annotations

import pytest

from memories.decisions import memory_delete, memory_lock, memory_restore, memory_set_status
from memories.models import Memory, MemoryVersion
from memories.selectors import memory_versions
from memories.services import memory_create, memory_update
from memory_platform.exceptions import PermissionDenied
from organizations.models import AuditEvent
from tests.conftest import MemoryFactory, Tenant

SNAPSHOT_KEYS = {
    "author",
    "review",
    "id",
    "organization",
    "repository",
    "scope_type",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "metadata",
    "tags",
    "source",
    "owner",
    "valid_from",
    "valid_until",
    "superseded_by",
    "deleted_at",
    "version",
    "created_at",
    "updated_at",
}


def _memory_audit(memory: Memory) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(target_type="memory", target_id=str(memory.id)).order_by("created_at", "id"))


def test_each_change_writes_a_full_version(acme: Tenant) -> None:
    memory, _ = memory_create(
        principal=acme.agent,
        data={
            "scope_type": "repository",
            "repository": "web",
            "memory_type": "architecture",  # a type agents may make active (the write policy)
            "current_content": "Components use PascalCase file names.",
            "importance": 4,
            "tags": ["frontend"],
            "metadata": {"lang": "ts"},
        },
        reason="learned from review",
        create_repository=True,
    )
    memory_update(
        principal=acme.agent,
        memory_id=memory.id,
        data={"current_content": "Components use kebab-case file names.", "importance": 6},
        reason="convention changed",
    )
    memory_set_status(principal=acme.agent, memory_id=memory.id, status="active", reason="confirmed")
    memory_delete(principal=acme.agent, memory_id=memory.id, reason="obsolete")
    memory_restore(principal=acme.curator, memory_id=memory.id, reason="still used")

    stored = Memory.objects.get(pk=memory.id)
    assert stored.version == 5
    versions = list(memory_versions(acme.agent, memory.id))
    assert [v.version for v in versions] == [5, 4, 3, 2, 1]
    by_number = {v.version: v for v in versions}
    assert [by_number[n].change for n in range(1, 6)] == ["create", "update", "status", "delete", "restore"]
    assert [by_number[n].reason for n in range(1, 6)] == [
        "learned from review",
        "convention changed",
        "confirmed",
        "obsolete",
        "still used",
    ]
    for version in versions:
        assert set(version.snapshot) == SNAPSHOT_KEYS
        assert version.snapshot["id"] == str(memory.id)
        assert version.snapshot["version"] == version.version
        assert version.snapshot["organization"] == "acme"
        assert version.snapshot["repository"] == "web"
        assert version.snapshot["tags"] == ["frontend"]
        assert version.snapshot["metadata"] == {"lang": "ts"}

    v1, v2, v3, v4, v5 = (by_number[n].snapshot for n in range(1, 6))
    assert (v1["current_content"], v1["importance"], v1["status"]) == (
        "Components use PascalCase file names.",
        4,
        "draft",
    )
    assert (v2["current_content"], v2["importance"], v2["status"]) == (
        "Components use kebab-case file names.",
        6,
        "draft",
    )
    assert by_number[2].changed_fields == ["current_content", "importance", "title"]
    assert v3["status"] == "active"
    assert by_number[3].changed_fields == ["status"]
    assert v4["deleted_at"] is not None
    assert v5["deleted_at"] is None
    assert v5["current_content"] == "Components use kebab-case file names."

    assert [by_number[n].actor for n in range(1, 5)] == [acme.agent.label] * 4
    assert by_number[5].actor == acme.curator.label
    assert by_number[5].token == acme.curator.token


def test_each_change_writes_an_audit_event(acme: Tenant) -> None:
    memory, _ = memory_create(
        principal=acme.agent,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "Backups run nightly."},
    )
    memory_update(principal=acme.agent, memory_id=memory.id, data={"importance": 7}, reason="critical")
    memory_set_status(principal=acme.agent, memory_id=memory.id, status="active")
    memory_delete(principal=acme.agent, memory_id=memory.id, reason="moved to runbook")
    memory_restore(principal=acme.curator, memory_id=memory.id)

    events = _memory_audit(memory)
    assert [e.action for e in events] == [
        "memory.create",
        "memory.update",
        "memory.status",
        "memory.delete",
        "memory.restore",
    ]
    assert {e.organization_id for e in events} == {acme.organization.id}
    assert [e.data["version"] for e in events] == [1, 2, 3, 4, 5]
    assert events[1].data["fields"] == ["importance"]
    assert (events[1].reason, events[3].reason) == ("critical", "moved to runbook")
    assert events[0].actor == acme.agent.label
    assert events[4].token == acme.curator.token


def test_update_that_changes_nothing_writes_no_version(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(
        current_content="Logs are kept for 30 days.",
        importance=3,
        tags=["ops", "logging"],
        metadata={"source": "policy"},
    )
    before = Memory.objects.get(pk=memory.id)

    # Same values, written the way a client might resend them.
    same = memory_update(
        principal=acme.agent,
        memory_id=memory.id,
        data={
            "current_content": "  Logs are kept for 30 days.  ",
            "importance": 3,
            "tags": ["OPS", " logging ", "ops"],
            "metadata": {"source": "policy"},
            "scope_type": "organization",
            "memory_type": "fact",
        },
    )
    memory_set_status(principal=acme.agent, memory_id=memory.id, status="draft")

    after = Memory.objects.get(pk=memory.id)
    assert same.version == after.version == 1
    assert after.updated_at == before.updated_at
    assert MemoryVersion.objects.filter(memory=memory).count() == 1
    assert [e.action for e in _memory_audit(memory)] == ["memory.create"]


def test_refused_change_writes_no_version_or_audit_event(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_lock(principal=acme.curator, memory_id=memory.id)
    with pytest.raises(PermissionDenied):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"importance": 9})
    with pytest.raises(PermissionDenied):
        memory_update(principal=acme.reader, memory_id=memory.id, data={"importance": 9})

    assert Memory.objects.get(pk=memory.id).version == 2
    assert MemoryVersion.objects.filter(memory=memory).count() == 2
    assert [e.action for e in _memory_audit(memory)] == ["memory.create", "memory.status"]


def test_versions_keep_history_while_memory_moves_on(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="The cache TTL is 60 seconds.")
    for ttl in (120, 300):
        memory_update(
            principal=acme.agent, memory_id=memory.id, data={"current_content": f"The cache TTL is {ttl} seconds."}
        )
    contents = [v.snapshot["current_content"] for v in memory_versions(acme.reader, memory.id)]
    assert contents == [
        "The cache TTL is 300 seconds.",
        "The cache TTL is 120 seconds.",
        "The cache TTL is 60 seconds.",
    ]
    assert MemoryVersion.objects.filter(memory=memory).values_list("version", flat=True).distinct().count() == 3
