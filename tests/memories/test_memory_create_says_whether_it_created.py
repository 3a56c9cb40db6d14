"""The writes that may find what they were asked to create say whether they created it: the
interfaces answer 201 or 200 from that, never from timestamps."""

from __future__ import annotations

import uuid

from knowledge.links import link_create
from knowledge.services import entity_get_or_create, triple_assert
from memories.services import memory_create
from tests.conftest import MemoryFactory, Tenant

RULE = {
    "scope_type": "organization",
    "memory_type": "business_rule",
    "current_content": "Invoices are due within 30 days.",
}


def test_a_new_memory_is_created(acme: Tenant) -> None:
    assert memory_create(principal=acme.agent, data=RULE)[1] is True


def test_a_retry_with_the_same_idempotency_key_finds_the_first(acme: Tenant) -> None:
    first, created = memory_create(principal=acme.agent, data=RULE, idempotency_key="req-1")
    again, created_again = memory_create(principal=acme.agent, data=RULE, idempotency_key="req-1")

    assert (created, created_again) == (True, False)
    assert again.pk == first.pk


def test_an_upsert_creates_a_missing_id_and_updates_an_existing_one(acme: Tenant) -> None:
    wanted = uuid.uuid4()

    _, created = memory_create(principal=acme.agent, memory_id=wanted, data=RULE)
    updated, created_again = memory_create(
        principal=acme.agent, memory_id=wanted, data={**RULE, "current_content": "Invoices are due in 14 days."}
    )

    assert (created, created_again) == (True, False)
    assert (updated.pk, updated.version) == (wanted, 2)


def test_links_facts_and_entities_say_whether_they_were_new(acme: Tenant, make_memory: MemoryFactory) -> None:
    source, target = make_memory(), make_memory()

    assert [link_create(principal=acme.agent, source_id=source.pk, target_id=target.pk)[1] for _ in range(2)] == [
        True,
        False,
    ]
    fact = {"subject": "payments-api", "predicate": "owned_by", "object": "Team Atlas"}
    assert [triple_assert(principal=acme.agent, **fact)[1] for _ in range(2)] == [True, False]
    assert entity_get_or_create(principal=acme.agent, name="Team Atlas")[1] is False
    assert entity_get_or_create(principal=acme.agent, name="Team Borealis")[1] is True
