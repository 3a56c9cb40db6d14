"""memory_create with an id: create with that id if absent, update if present, never take over
another organization's memory or a deleted one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from memories import validation
from memories.decisions import memory_delete
from memories.models import Memory, MemoryVersion
from memories.services import memory_create
from memory_platform.exceptions import Conflict, ValidationError
from tests.conftest import MemoryFactory, Tenant

RULE = {
    "scope_type": "organization",
    "memory_type": "business_rule",
    "current_content": "Invoices are due within 30 days.",
}


def test_upsert_creates_with_the_given_id(acme: Tenant) -> None:
    wanted = uuid.uuid4()
    memory, _ = memory_create(principal=acme.agent, memory_id=str(wanted), data=RULE)

    assert memory.id == wanted
    stored = Memory.objects.get(pk=wanted)
    assert (stored.organization, stored.current_content, stored.version) == (
        acme.organization,
        RULE["current_content"],
        1,
    )
    assert MemoryVersion.objects.get(memory=stored).change == "create"


def test_upsert_updates_an_existing_memory(acme: Tenant, make_memory: MemoryFactory) -> None:
    existing = make_memory(current_content="Invoices are due within 14 days.", importance=7, tags=["billing"])

    updated, _ = memory_create(
        principal=acme.agent, memory_id=existing.id, data={**RULE, "memory_type": "business_rule"}, reason="policy"
    )

    assert updated.id == existing.id
    assert Memory.objects.count() == 1
    stored = Memory.objects.get(pk=existing.id)
    assert stored.current_content == RULE["current_content"]
    assert stored.memory_type == "business_rule"
    # Fields the upsert did not name are left alone.
    assert (stored.importance, stored.tags) == (7, ["billing"])
    assert stored.version == 2
    latest = MemoryVersion.objects.get(memory=stored, version=2)
    assert (latest.change, latest.reason) == ("update", "policy")


def test_repeating_an_upsert_changes_nothing(acme: Tenant) -> None:
    wanted = uuid.uuid4()
    memory_create(principal=acme.agent, memory_id=wanted, data=RULE)
    again, _ = memory_create(principal=acme.agent, memory_id=wanted, data=RULE)

    assert again.id == wanted
    assert Memory.objects.count() == 1
    assert Memory.objects.get(pk=wanted).version == 1
    assert MemoryVersion.objects.filter(memory_id=wanted).count() == 1


def test_upsert_with_id_of_another_organization_is_a_conflict(acme: Tenant, globex: Tenant) -> None:
    theirs, _ = memory_create(principal=globex.agent, data={**RULE, "current_content": "Globex pays in 60 days."})

    with pytest.raises(Conflict, match="cannot be used") as exc:
        memory_create(principal=acme.agent, memory_id=theirs.id, data=RULE)
    # The refusal tells nothing about the other organization's memory.
    assert "Globex" not in exc.value.message
    assert "globex" not in exc.value.message

    stored = Memory.objects.get(pk=theirs.id)
    assert (stored.organization, stored.current_content, stored.version) == (
        globex.organization,
        "Globex pays in 60 days.",
        1,
    )
    assert not Memory.objects.filter(organization=acme.organization).exists()


def test_upsert_with_id_of_a_deleted_memory_is_a_conflict(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    memory_delete(principal=acme.agent, memory_id=memory.id)

    with pytest.raises(Conflict, match="was deleted") as exc:
        memory_create(principal=acme.agent, memory_id=memory.id, data=RULE)
    assert "restore" in exc.value.message

    stored = Memory.objects.get(pk=memory.id)
    assert stored.deleted_at is not None
    assert stored.current_content == memory.current_content
    assert stored.version == 2
    assert Memory.objects.count() == 1


def test_upsert_with_id_of_someone_elses_user_memory_is_a_conflict(acme: Tenant) -> None:
    private, _ = memory_create(
        principal=acme.person,
        data={"scope_type": "user", "memory_type": "preference", "current_content": "I like dark mode."},
    )
    with pytest.raises(Conflict, match="cannot be used"):
        memory_create(principal=acme.curator, memory_id=private.id, data=RULE)
    stored = Memory.objects.get(pk=private.id)
    assert (stored.scope_type, stored.current_content, stored.version) == ("user", "I like dark mode.", 1)


PREDICTABLE_IDS = {
    "v1-clock": uuid.uuid1(),
    "v3-name": uuid.uuid3(uuid.NAMESPACE_URL, "Invoices are due within 30 days."),
    "v5-name": uuid.uuid5(uuid.NAMESPACE_URL, "Invoices are due within 30 days."),
}


@pytest.mark.parametrize("predictable", PREDICTABLE_IDS.values(), ids=PREDICTABLE_IDS.keys())
def test_a_new_memory_id_must_be_random(acme: Tenant, predictable: uuid.UUID) -> None:
    with pytest.raises(ValidationError, match=r"must be random \(UUID version 4 or 7\)") as exc:
        memory_create(principal=acme.agent, memory_id=predictable, data=RULE)
    assert exc.value.details == {"field": "id"}
    assert "idempotency_key" in exc.value.message
    assert not Memory.objects.exists()


def test_a_time_ordered_random_id_is_accepted(acme: Tenant) -> None:
    # UUIDv7: 48 bits of milliseconds, then random bits (RFC 9562).
    wanted = uuid.UUID(int=(0x0190_0000_0000 << 80) | (0x7 << 76) | (0b10 << 62) | 0x123_4567_89AB_CDEF)
    assert wanted.version == 7
    memory, created = memory_create(principal=acme.agent, memory_id=wanted, data=RULE)
    assert (memory.id, created) == (wanted, True)


def test_a_predictable_id_taken_elsewhere_is_refused_as_if_it_were_free(
    acme: Tenant, globex: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether another organization holds a name-based id cannot be learnt by trying it."""
    theirs = uuid.uuid5(uuid.NAMESPACE_URL, "Globex pays in 60 days.")
    legacy_write(monkeypatch, globex, theirs)
    free = uuid.uuid5(uuid.NAMESPACE_URL, "Acme pays in 30 days.")

    answers = []
    for wanted in (theirs, free):
        with pytest.raises(ValidationError) as exc:
            memory_create(principal=acme.agent, memory_id=wanted, data=RULE)
        answers.append(exc.value.message.replace(str(wanted), "<id>"))
    assert answers[0] == answers[1]
    assert Memory.objects.get(pk=theirs).organization == globex.organization


def test_an_existing_memory_is_updated_by_its_id_whatever_its_version(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memories that already have a name-based id (written before ids had to be random) stay reachable."""
    legacy = uuid.uuid5(uuid.NAMESPACE_URL, "legacy")
    legacy_write(monkeypatch, acme, legacy)

    updated, created = memory_create(principal=acme.agent, memory_id=legacy, data=RULE)
    assert (updated.id, created, updated.current_content) == (legacy, False, RULE["current_content"])


def legacy_write(monkeypatch: pytest.MonkeyPatch, tenant: Tenant, memory_id: uuid.UUID) -> None:
    """A memory written with a name-based id, as clients could before new ids had to be random."""
    with monkeypatch.context() as patched:
        patched.setattr(validation, "RANDOM_UUID_VERSIONS", (1, 3, 4, 5, 7))
        memory_create(principal=tenant.agent, memory_id=memory_id, data={**RULE, "current_content": "Written before."})


@pytest.mark.parametrize("bad_id", ["not-a-uuid", 42, "1234"])
def test_upsert_with_malformed_id_is_rejected(acme: Tenant, bad_id: Any) -> None:
    with pytest.raises(ValidationError, match="not a valid memory id"):
        memory_create(principal=acme.agent, memory_id=bad_id, data=RULE)
    assert not Memory.objects.exists()


def test_upsert_still_validates_the_data(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(ValidationError, match="importance"):
        memory_create(principal=acme.agent, memory_id=memory.id, data={**RULE, "importance": 99})
    assert Memory.objects.get(pk=memory.id).version == 1
