"""globex, whatever its role, gets none of acme's memories from any search, filter or cursor."""

from __future__ import annotations

from typing import Any

import pytest

from memories.decisions import memory_delete, memory_deprecate
from memories.models import Memory
from memories.services import memory_create
from memory_platform.exceptions import ValidationError
from organizations.services import repository_get_or_create
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

QUERY = "rollout checklist for the payments service"
ROLES = ["admin", "curator", "agent", "reader", "person"]
MODES: list[dict[str, Any]] = [
    {"query": QUERY, "mode": "hybrid"},
    {"query": QUERY, "mode": "hybrid", "fusion": "rrf"},
    {"query": QUERY, "mode": "vector"},
    {"query": QUERY, "mode": "keyword"},
    {"query": ""},
]
# The filters that could widen a search, and those that name acme's data.
FILTERS: list[dict[str, Any]] = [
    {},
    {"include_deleted": True, "status": ["draft", "active", "verified", "locked", "deprecated"]},
    {"scope_type": "repository", "repository": "payments"},
    {"scope_type": "user"},
    {"memory_type": ["fact", "business_rule"], "min_importance": 10},
    {"tags": ["payments"], "metadata": {"team": "payments"}},
]


@pytest.fixture
def acme_memories(acme: Tenant, make_memory: MemoryFactory) -> list[Memory]:
    common: dict[str, Any] = {"tags": ["payments"], "metadata": {"team": "payments"}, "importance": 10}
    memories = [
        make_memory(current_content="The rollout checklist for the payments service is in the wiki.", **common),
        make_memory(
            scope_type="repository",
            repository="payments",
            memory_type="business_rule",
            current_content="Payments service rollouts need the checklist signed.",
            **common,
        ),
        make_memory(acme.person, scope_type="user", current_content="My payments rollout checklist.", **common),
        make_memory(current_content="Old payments rollout checklist.", **common),
        make_memory(current_content="Deleted payments rollout checklist.", **common),
    ]
    memory_deprecate(principal=acme.curator, memory_id=memories[3].pk)
    memory_delete(principal=acme.curator, memory_id=memories[4].pk)
    return memories


@pytest.fixture
def globex_memory(globex: Tenant) -> Memory:
    # globex has a repository of the same name as acme's: filtering on it must still show nothing of acme's.
    repository_get_or_create(principal=globex.admin, slug="payments")
    return memory_create(
        principal=globex.agent,
        data={
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": "Our own rollout checklist for the payments service.",
            "tags": ["payments"],
            "metadata": {"team": "payments"},
        },
    )[0]


@pytest.mark.parametrize("role", ROLES)
def test_no_search_returns_another_organizations_memories(
    globex: Tenant, acme_memories: list[Memory], globex_memory: Memory, role: str
) -> None:
    principal = getattr(globex, role)
    forbidden = {memory.pk for memory in acme_memories}

    for values in MODES:
        for filters in FILTERS:
            page = search(principal, filters=filters, limit=1000, **values)
            assert not forbidden & set(hit_ids(page)), (values, filters)
    # The search itself works for them: they find their own memory.
    assert hit_ids(search(principal, query=QUERY)) == [globex_memory.pk]


@pytest.mark.parametrize("values", MODES, ids=["hybrid", "rrf", "vector", "keyword", "browse"])
def test_an_acme_cursor_gets_globex_nothing_of_acme(
    acme: Tenant, globex: Tenant, acme_memories: list[Memory], globex_memory: Memory, values: dict[str, Any]
) -> None:
    cursor = search(acme.admin, limit=1, **values).next_cursor
    assert cursor is not None
    forbidden = {memory.pk for memory in acme_memories}

    for role in ROLES:
        try:
            page = search(getattr(globex, role), limit=1, cursor=cursor, **values)
        except ValidationError:
            continue
        assert not forbidden & set(hit_ids(page))
