"""Who may write what: readers nothing, agents drafts and active memories, curators the workflow,
platform superusers alone the system scope; user scope belongs to one person."""

from __future__ import annotations

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
from memories.selectors import memory_get, memory_get_many, memory_list
from memories.services import memory_create, memory_update
from memory_platform.exceptions import Conflict, NotFound, PermissionDenied, ValidationError
from organizations.models import Membership, Role, User
from organizations.principal import Principal
from organizations.tokens import principal_for_token, token_create
from tests.conftest import MemoryFactory, Tenant

ORG_FACT = {
    "scope_type": "organization",
    "memory_type": "fact",
    "current_content": "The API gateway listens on port 8443.",
}


def _second_person(tenant: Tenant) -> Principal:
    """Another person of the same organization, with a personal token."""
    operator = Principal.for_operator(tenant.organization, "tests")
    user = User.objects.create_user(username=f"{tenant.organization.slug}-other", password="unused-password-1")
    Membership.objects.create(user=user, organization=tenant.organization, role=Role.ADMIN)
    issued = token_create(principal=operator, role=Role.ADMIN, name="other-person", user=user)
    return principal_for_token(issued.raw)


# --- readers -----------------------------------------------------------------------------------


def test_reader_cannot_create_update_change_status_or_delete(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()

    with pytest.raises(PermissionDenied, match="needs the agent role") as exc:
        memory_create(principal=acme.reader, data=ORG_FACT)
    assert "reader role" in exc.value.message
    with pytest.raises(PermissionDenied, match="agent role"):
        memory_update(principal=acme.reader, memory_id=memory.id, data={"current_content": "Changed."})
    with pytest.raises(PermissionDenied, match="agent role"):
        memory_set_status(principal=acme.reader, memory_id=memory.id, status="active")
    with pytest.raises(PermissionDenied, match="agent role"):
        memory_delete(principal=acme.reader, memory_id=memory.id)

    stored = Memory.objects.get()
    assert (stored.current_content, stored.status, stored.version, stored.deleted_at) == (
        memory.current_content,
        "draft",
        1,
        None,
    )


def test_reader_can_read(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    assert memory_get(acme.reader, memory.id).id == memory.id
    assert [m.id for m in memory_list(acme.reader)] == [memory.id]


# --- agents ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["draft", "active"])
def test_agent_may_create_draft_or_active(acme: Tenant, status: str) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**ORG_FACT, "status": status})
    assert Memory.objects.get(pk=memory.id).status == status


@pytest.mark.parametrize("status", ["verified", "locked", "deprecated"])
def test_agent_cannot_create_curated_status(acme: Tenant, status: str) -> None:
    with pytest.raises(PermissionDenied, match="curator") as exc:
        memory_create(principal=acme.agent, data={**ORG_FACT, "status": status})
    assert f"'{status}'" in exc.value.message
    assert not Memory.objects.exists()


@pytest.mark.parametrize("status", ["verified", "locked", "deprecated"])
def test_agent_cannot_set_curated_status(acme: Tenant, make_memory: MemoryFactory, status: str) -> None:
    memory = make_memory()
    with pytest.raises(PermissionDenied, match="curator"):
        memory_set_status(principal=acme.agent, memory_id=memory.id, status=status)
    with pytest.raises(PermissionDenied, match="curator"):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"status": status})
    assert Memory.objects.get(pk=memory.id).status == "draft"


def test_agent_moves_between_draft_and_active(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    assert memory_set_status(principal=acme.agent, memory_id=memory.id, status="active").status == "active"
    assert memory_update(principal=acme.agent, memory_id=memory.id, data={"status": "draft"}).status == "draft"
    assert Memory.objects.get(pk=memory.id).status == "draft"


@pytest.mark.parametrize("curated", ["verified", "deprecated"])
@pytest.mark.parametrize("target", ["active", "draft"])
def test_agent_cannot_move_curated_memory_back(
    acme: Tenant, make_memory: MemoryFactory, curated: str, target: str
) -> None:
    memory = make_memory()
    memory_set_status(principal=acme.curator, memory_id=memory.id, status=curated)

    # A deprecated memory is not changed below the curator role at all: a curator reactivates it.
    refused = (Conflict, "reactivate") if curated == "deprecated" else (PermissionDenied, "only a curator")
    with pytest.raises(refused[0], match=refused[1]) as exc:
        memory_set_status(principal=acme.agent, memory_id=memory.id, status=target)
    assert curated in exc.value.message
    with pytest.raises(refused[0], match=refused[1]):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"status": target})
    assert Memory.objects.get(pk=memory.id).status == curated


@pytest.mark.parametrize(
    "action", [memory_verify, memory_lock, memory_deprecate, memory_unlock], ids=lambda f: f.__name__
)
def test_agent_cannot_use_curator_actions(acme: Tenant, make_memory: MemoryFactory, action: object) -> None:
    memory = make_memory()
    with pytest.raises(PermissionDenied, match="needs the curator role"):
        action(principal=acme.agent, memory_id=memory.id)  # type: ignore[operator]
    assert Memory.objects.get(pk=memory.id).status == "draft"


def test_agent_cannot_restore(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_delete(principal=acme.agent, memory_id=memory.id)
    with pytest.raises(PermissionDenied, match="curator"):
        memory_restore(principal=acme.agent, memory_id=memory.id)
    assert Memory.objects.get(pk=memory.id).deleted_at is not None


# --- curators ----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["curator", "admin"])
def test_curator_and_admin_run_the_whole_workflow(acme: Tenant, make_memory: MemoryFactory, role: str) -> None:
    principal: Principal = getattr(acme, role)
    memory = make_memory()

    assert memory_verify(principal=principal, memory_id=memory.id).status == "verified"
    assert memory_lock(principal=principal, memory_id=memory.id).status == "locked"
    assert memory_unlock(principal=principal, memory_id=memory.id).status == "verified"
    assert memory_deprecate(principal=principal, memory_id=memory.id).status == "deprecated"
    # A curator may move a curated memory back, which an agent may not.
    assert memory_set_status(principal=principal, memory_id=memory.id, status="active").status == "active"
    memory_delete(principal=principal, memory_id=memory.id)
    assert memory_restore(principal=principal, memory_id=memory.id).deleted_at is None

    stored = Memory.objects.get(pk=memory.id)
    assert stored.status == "active"
    assert stored.deleted_at is None
    assert stored.version == 8


def test_curator_may_create_verified_memory(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.curator, data={**ORG_FACT, "status": "verified"})
    assert Memory.objects.get(pk=memory.id).status == "verified"


# --- system scope ------------------------------------------------------------------------------

SYSTEM_FACT = {**ORG_FACT, "scope_type": "system", "current_content": "UTC is the only timezone we store."}


@pytest.mark.parametrize("role", ["agent", "curator", "admin", "person"])
def test_only_platform_superusers_write_system_scope(acme: Tenant, role: str) -> None:
    principal: Principal = getattr(acme, role)
    with pytest.raises(PermissionDenied, match="only platform administrators") as exc:
        memory_create(principal=principal, data=SYSTEM_FACT)
    # The refusal says what to do instead.
    assert "scope_type 'organization'" in exc.value.message
    assert not Memory.objects.exists()


def test_superuser_writes_system_scope(acme: Tenant, superuser_principal: Principal) -> None:
    memory, _ = memory_create(principal=superuser_principal, data=SYSTEM_FACT)
    assert Memory.objects.get(pk=memory.id).scope_type == "system"
    # ...and every member of the organization reads it.
    assert memory_get(acme.reader, memory.id).id == memory.id


def test_operator_writes_system_scope(acme: Tenant) -> None:
    operator = Principal.for_operator(acme.organization)
    memory, _ = memory_create(principal=operator, data=SYSTEM_FACT)
    assert memory.scope_type == "system"
    assert MemoryVersion.objects.get(memory=memory).actor == "operator (manage.py)"


@pytest.mark.parametrize("role", ["curator", "admin"])
def test_curator_cannot_move_memory_into_or_change_system_scope(
    acme: Tenant, make_memory: MemoryFactory, superuser_principal: Principal, role: str
) -> None:
    principal: Principal = getattr(acme, role)
    memory = make_memory()
    with pytest.raises(PermissionDenied, match="only platform administrators"):
        memory_update(principal=principal, memory_id=memory.id, data={"scope_type": "system"})
    assert Memory.objects.get(pk=memory.id).scope_type == "organization"

    system, _ = memory_create(principal=superuser_principal, data=SYSTEM_FACT)
    with pytest.raises(PermissionDenied, match="system memory"):
        memory_update(principal=principal, memory_id=system.id, data={"importance": 9})
    with pytest.raises(PermissionDenied, match="system memory"):
        memory_verify(principal=principal, memory_id=system.id)
    with pytest.raises(PermissionDenied, match="system memory"):
        memory_delete(principal=principal, memory_id=system.id)
    stored = Memory.objects.get(pk=system.id)
    assert (stored.importance, stored.status, stored.deleted_at, stored.version) == (1, "draft", None, 1)


def test_superuser_moves_memory_into_system_scope(make_memory: MemoryFactory, superuser_principal: Principal) -> None:
    memory = make_memory()
    updated = memory_update(principal=superuser_principal, memory_id=memory.id, data={"scope_type": "system"})
    assert updated.scope_type == "system"
    assert Memory.objects.get(pk=memory.id).scope_type == "system"


# --- user scope --------------------------------------------------------------------------------

USER_PREFERENCE = {
    "scope_type": "user",
    "memory_type": "preference",
    "current_content": "I prefer answers with code samples first.",
}


@pytest.mark.parametrize("role", ["agent", "curator", "admin"])
def test_user_scope_needs_a_token_with_a_user(acme: Tenant, role: str) -> None:
    with pytest.raises(ValidationError, match="this token has no user") as exc:
        memory_create(principal=getattr(acme, role), data=USER_PREFERENCE)
    assert exc.value.details == {"field": "scope_type"}
    assert not Memory.objects.exists()


def test_user_scope_memory_is_seen_by_its_owner_only(acme: Tenant, superuser_principal: Principal) -> None:
    memory, _ = memory_create(principal=acme.person, data=USER_PREFERENCE)
    assert memory.owner == acme.person.user

    assert memory_get(acme.person, memory.id).id == memory.id
    assert [m.id for m in memory_list(acme.person)] == [memory.id]

    others = [acme.reader, acme.agent, acme.curator, acme.admin, superuser_principal, _second_person(acme)]
    for other in others:
        with pytest.raises(NotFound):
            memory_get(other, memory.id)
        assert memory_get_many(other, [memory.id]) == []
        assert list(memory_list(other)) == []


def test_user_scope_memory_cannot_be_changed_by_anyone_else(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.person, data=USER_PREFERENCE)
    other = _second_person(acme)
    for principal in (acme.curator, acme.admin, other):
        with pytest.raises(NotFound):
            memory_update(principal=principal, memory_id=memory.id, data={"current_content": "Overwritten."})
        with pytest.raises(NotFound):
            memory_delete(principal=principal, memory_id=memory.id)
        with pytest.raises(NotFound):
            memory_lock(principal=principal, memory_id=memory.id)
    stored = Memory.objects.get(pk=memory.id)
    assert (stored.current_content, stored.version, stored.deleted_at) == (memory.current_content, 1, None)

    # The owner still can.
    memory_update(principal=acme.person, memory_id=memory.id, data={"current_content": "Code samples last."})
    assert Memory.objects.get(pk=memory.id).current_content == "Code samples last."


def test_moving_a_memory_to_user_scope_needs_a_user(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(ValidationError, match="no user"):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"scope_type": "user"})
    assert Memory.objects.get(pk=memory.id).scope_type == "organization"
