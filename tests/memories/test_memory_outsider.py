"""Another organization's principals can neither see nor touch acme's memories: every selector and
service answers them exactly as for a memory that does not exist. System memories are the one
shared exception, readable by all and writable by platform superusers only."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from memories.decisions import (
    memory_delete,
    memory_deprecate,
    memory_lock,
    memory_restore,
    memory_set_status,
    memory_unlock,
    memory_verify,
)
from memories.models import Memory, MemoryVersion
from memories.selectors import MemoryFilters, memory_get, memory_get_many, memory_list, memory_versions
from memories.services import memory_create, memory_update
from memory_platform.exceptions import Conflict, DomainError, NotFound, PermissionDenied, ValidationError
from organizations.models import AuditEvent
from organizations.principal import Principal
from organizations.services import repository_get_or_create
from tests.conftest import MemoryFactory, Tenant

ROLES = ["admin", "curator", "agent", "reader", "person"]
ALL_STATUSES = ["draft", "active", "verified", "locked", "deprecated"]

Operation = Callable[[Principal, uuid.UUID], object]

OPERATIONS: dict[str, Operation] = {
    "get": memory_get,
    "get_including_deleted": lambda p, i: memory_get(p, i, include_deleted=True),
    "versions": memory_versions,
    "update": lambda p, i: memory_update(principal=p, memory_id=i, data={"current_content": "Hijacked."}),
    "set_status": lambda p, i: memory_set_status(principal=p, memory_id=i, status="active"),
    "verify": lambda p, i: memory_verify(principal=p, memory_id=i),
    "lock": lambda p, i: memory_lock(principal=p, memory_id=i),
    "unlock": lambda p, i: memory_unlock(principal=p, memory_id=i),
    "deprecate": lambda p, i: memory_deprecate(principal=p, memory_id=i),
    "delete": lambda p, i: memory_delete(principal=p, memory_id=i),
    "restore": lambda p, i: memory_restore(principal=p, memory_id=i),
}


def _outcome(operation: Operation, principal: Principal, memory_id: uuid.UUID) -> tuple[str, str]:
    """What the caller learns: the error type and message, with the id itself blanked out."""
    try:
        operation(principal, memory_id)
    except DomainError as exc:
        return type(exc).__name__, exc.message.replace(str(memory_id), "<id>")
    return "ok", ""


@pytest.fixture
def acme_memories(acme: Tenant, make_memory: MemoryFactory) -> list[Memory]:
    org = make_memory(current_content="Acme's margin target is 40%.", importance=9)
    repo = make_memory(scope_type="repository", repository="web", current_content="Acme web uses Next.js.")
    private = make_memory(acme.person, scope_type="user", memory_type="preference", current_content="Acme person.")
    locked = make_memory(current_content="Acme's locked rule.")
    memory_lock(principal=acme.curator, memory_id=locked.id)
    verified = make_memory(current_content="Acme's verified fact.")
    memory_verify(principal=acme.curator, memory_id=verified.id)
    deleted = make_memory(current_content="Acme's deleted fact.")
    memory_delete(principal=acme.agent, memory_id=deleted.id)
    deprecated = make_memory(current_content="Acme's deprecated fact.")
    memory_deprecate(principal=acme.curator, memory_id=deprecated.id)
    return [org, repo, private, locked, verified, deleted, deprecated]


def _state(memories: list[Memory]) -> list[tuple[Any, ...]]:
    rows = Memory.objects.filter(pk__in=[m.id for m in memories]).order_by("id")
    return [
        (m.id, m.current_content, m.status, m.version, m.deleted_at, m.updated_at, m.versions.count()) for m in rows
    ]


@pytest.mark.parametrize("role", ROLES)
def test_outsider_gets_the_answer_of_a_nonexistent_memory(
    globex: Tenant, acme_memories: list[Memory], role: str
) -> None:
    outsider: Principal = getattr(globex, role)
    before = _state(acme_memories)

    for name, operation in OPERATIONS.items():
        for memory in acme_memories:
            seen = _outcome(operation, outsider, memory.id)
            assert seen[0] != "ok", f"{role} could {name} acme memory {memory.title!r}"
            assert seen == _outcome(operation, outsider, uuid.uuid4()), f"{role} {name} on {memory.title!r}"
            # A principal allowed to attempt the action must not learn more than "not found".
            if seen[0] != "PermissionDenied":
                assert seen[0] == "NotFound", (role, name, seen)
            assert memory.current_content not in seen[1]

    assert _state(acme_memories) == before
    assert not AuditEvent.objects.filter(organization=globex.organization, target_type="memory").exists()


@pytest.mark.parametrize("role", ["admin", "curator"])
def test_outsiders_who_may_act_get_not_found_for_everything(
    globex: Tenant, acme_memories: list[Memory], role: str
) -> None:
    outsider: Principal = getattr(globex, role)
    for operation in OPERATIONS.values():
        for memory in acme_memories:
            assert _outcome(operation, outsider, memory.id)[0] == "NotFound"


@pytest.mark.parametrize("role", ROLES)
def test_outsider_lists_and_batch_reads_nothing(globex: Tenant, acme_memories: list[Memory], role: str) -> None:
    outsider: Principal = getattr(globex, role)
    ids = [m.id for m in acme_memories]

    assert memory_get_many(outsider, ids) == []
    everything = MemoryFilters.from_mapping({"include_deleted": True, "status": ALL_STATUSES})
    assert list(memory_list(outsider, everything)) == []
    by_repository = MemoryFilters.from_mapping({"repository": "web"})
    # acme's repository "web" is unknown to the outsider, and the refusal lists only its own.
    with pytest.raises(ValidationError) as unknown:
        memory_list(outsider, by_repository)
    assert unknown.value.details["known"] == []
    # An outsider's repository of the same name shows nothing of acme's.
    repository_get_or_create(principal=globex.admin, slug="web")
    assert list(memory_list(outsider, by_repository)) == []


@pytest.mark.parametrize("role", ["admin", "curator", "agent", "person"])
def test_outsider_cannot_take_over_an_id_through_upsert(globex: Tenant, acme_memories: list[Memory], role: str) -> None:
    outsider: Principal = getattr(globex, role)
    before = _state(acme_memories)
    data = {"scope_type": "organization", "memory_type": "fact", "current_content": "Globex owns this now."}

    for memory in acme_memories:
        with pytest.raises(Conflict) as exc:
            memory_create(principal=outsider, memory_id=memory.id, data=data)
        assert exc.value.message == f"id {memory.id} cannot be used; omit id and the server will choose one"

    assert _state(acme_memories) == before
    assert not Memory.objects.filter(organization=globex.organization).exists()


def test_organization_argument_must_be_the_principals_own(acme: Tenant, globex: Tenant) -> None:
    with pytest.raises(NotFound) as named_other:
        acme.agent.check_organization("globex")
    with pytest.raises(NotFound) as named_missing:
        acme.agent.check_organization("initech")
    # A real organization and a missing one get the same answer.
    assert named_other.value.message.replace("globex", "<org>") == named_missing.value.message.replace(
        "initech", "<org>"
    )
    acme.agent.check_organization("acme")
    acme.agent.check_organization(None)

    data = {"scope_type": "organization", "memory_type": "fact", "current_content": "Written for globex."}
    with pytest.raises(NotFound, match="organization 'globex' not found"):
        memory_create(principal=acme.agent, data=data, organization="globex")
    assert not Memory.objects.exists()
    assert memory_create(principal=acme.agent, data=data, organization="acme")[0].organization == acme.organization


# --- system memories ------------------------------------------------------------------------------


@pytest.fixture
def system_memory(superuser_principal: Principal) -> Memory:
    return memory_create(
        principal=superuser_principal,
        data={"scope_type": "system", "memory_type": "fact", "current_content": "Timestamps are ISO 8601 in UTC."},
    )[0]


@pytest.mark.parametrize("role", ROLES)
def test_system_memories_are_visible_to_every_organization(globex: Tenant, system_memory: Memory, role: str) -> None:
    outsider: Principal = getattr(globex, role)
    assert memory_get(outsider, system_memory.id).id == system_memory.id
    assert memory_get_many(outsider, [system_memory.id]) == [system_memory]
    assert list(memory_list(outsider)) == [system_memory]
    assert [v.version for v in memory_versions(outsider, system_memory.id)] == [1]


WRITES = [
    "update",
    "set_status",
    "verify",
    "lock",
    "deprecate",
    "delete",
]


@pytest.mark.parametrize("role", ROLES)
def test_outsider_cannot_modify_system_memories(
    globex: Tenant, superuser_principal: Principal, system_memory: Memory, role: str
) -> None:
    outsider: Principal = getattr(globex, role)
    for name in WRITES:
        with pytest.raises(PermissionDenied):
            OPERATIONS[name](outsider, system_memory.id)
    with pytest.raises(PermissionDenied):
        memory_create(
            principal=outsider,
            memory_id=system_memory.id,
            data={"scope_type": "organization", "memory_type": "fact", "current_content": "Timestamps are local."},
        )

    # Locked or deleted by the platform, it stays out of the outsider's hands too.
    memory_lock(principal=superuser_principal, memory_id=system_memory.id)
    for name in ("update", "unlock", "delete"):
        with pytest.raises(PermissionDenied):
            OPERATIONS[name](outsider, system_memory.id)
    memory_delete(principal=superuser_principal, memory_id=system_memory.id)
    with pytest.raises(PermissionDenied):
        memory_restore(principal=outsider, memory_id=system_memory.id)

    stored = Memory.objects.get(pk=system_memory.id)
    assert (stored.current_content, stored.scope_type, stored.status, stored.version) == (
        "Timestamps are ISO 8601 in UTC.",
        "system",
        "locked",
        3,
    )
    assert stored.deleted_at is not None
    assert MemoryVersion.objects.filter(memory=system_memory).count() == 3
