"""Search shows what the principal may see: a person's own user-scope memories, the organization's,
and system memories shared by every organization."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from organizations.principal import Principal
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

MODES: list[dict[str, Any]] = [
    {"query": "rollout checklist", "mode": "hybrid"},
    {"query": "rollout checklist", "mode": "vector"},
    {"query": "rollout checklist", "mode": "keyword"},
    {"query": ""},
]


@pytest.fixture
def private(acme: Tenant, make_memory: MemoryFactory) -> Memory:
    make_memory(current_content="The shared rollout checklist lives in the wiki.")
    return make_memory(acme.person, scope_type="user", current_content="My own rollout checklist: call mum first.")


@pytest.mark.parametrize("values", MODES, ids=["hybrid", "vector", "keyword", "browse"])
def test_a_person_finds_their_own_user_scope_memory(acme: Tenant, private: Memory, values: dict[str, Any]) -> None:
    assert private.pk in hit_ids(search(acme.person, **values))
    assert hit_ids(search(acme.person, filters={"scope_type": "user"}, **values)) == [private.pk]


@pytest.mark.parametrize("values", MODES, ids=["hybrid", "vector", "keyword", "browse"])
def test_nobody_else_finds_a_user_scope_memory(
    acme: Tenant, colleague: Principal, private: Memory, values: dict[str, Any]
) -> None:
    # Tokens without a person (every role), and another person of the same organization.
    for principal in (colleague, acme.admin, acme.curator, acme.agent, acme.reader):
        for filters in ({}, {"scope_type": "user"}, {"include_deleted": True}, {"status": ["draft", "active"]}):
            page = search(principal, filters=filters, limit=1000, **values)
            assert private.pk not in hit_ids(page), (principal.label, filters)
        assert search(principal, filters={"scope_type": "user"}, **values).hits == []


@pytest.mark.parametrize("values", MODES, ids=["hybrid", "vector", "keyword", "browse"])
def test_system_memories_are_found_by_every_organization(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, superuser_principal: Principal, values: dict[str, Any]
) -> None:
    shared = make_memory(
        superuser_principal, scope_type="system", current_content="Every rollout checklist records times in UTC."
    )

    for principal in (acme.reader, globex.reader, globex.person):
        assert shared.pk in hit_ids(search(principal, **values))
        assert hit_ids(search(principal, filters={"scope_type": "system"}, **values)) == [shared.pk]
