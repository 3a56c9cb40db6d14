"""A search scope is compiled to SQL once per process for who is searching and with which filters;
the compiled scopes never let one principal's or one filter's scope answer for another's."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from memories.search import pipeline
from organizations.principal import Principal
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search


@pytest.fixture
def compilations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The filters of every scope the search compiled."""
    seen: list[Any] = []
    real = pipeline.scope_arms

    def counting(principal: Principal, filters: Any) -> Any:
        seen.append(filters)
        return real(principal, filters)

    monkeypatch.setattr(pipeline, "scope_arms", counting)
    return seen


def test_the_same_principal_and_filters_compile_once(
    acme: Tenant, make_memory: MemoryFactory, compilations: list[Any]
) -> None:
    make_memory(current_content="The rollout checklist lives in the wiki.")
    for query in ("rollout checklist", "wiki", "rollout"):
        search(acme.agent, query=query)
    search(acme.agent, query="rollout", filters={"memory_type": ["decision_log"]})
    search(acme.reader, query="rollout")  # another token of the organization, no person: the same scope

    assert len(compilations) == 2


def test_two_people_never_share_a_scope(
    acme: Tenant, colleague: Principal, make_memory: MemoryFactory, compilations: list[Any]
) -> None:
    mine = make_memory(acme.person, scope_type="user", current_content="My own rollout checklist: call mum first.")
    theirs = make_memory(colleague, scope_type="user", current_content="Their rollout checklist: water the plants.")

    for _ in range(2):
        assert mine.pk in hit_ids(search(acme.person, query="rollout checklist"))
        assert theirs.pk not in hit_ids(search(acme.person, query="rollout checklist"))
        assert theirs.pk in hit_ids(search(colleague, query="rollout checklist"))
        assert mine.pk not in hit_ids(search(colleague, query="rollout checklist"))
    assert len(compilations) == 2


def test_two_organizations_never_share_a_scope(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    ours = make_memory(current_content="The rollout checklist lives in the wiki.")

    assert ours.pk in hit_ids(search(acme.agent, query="rollout checklist"))
    assert ours.pk not in hit_ids(search(globex.agent, query="rollout checklist", limit=100))


def test_each_filter_keeps_its_own_scope(acme: Tenant, make_memory: MemoryFactory) -> None:
    fact = make_memory(current_content="The rollout checklist lives in the wiki.")
    decision: Memory = make_memory(memory_type="decision_log", current_content="We decided rollouts are binding.")
    everything = {"query": "rollout", "limit": 100}

    assert set(hit_ids(search(acme.agent, **everything))) >= {fact.pk, decision.pk}
    assert hit_ids(search(acme.agent, filters={"memory_type": ["decision_log"]}, **everything)) == [decision.pk]
    assert hit_ids(search(acme.agent, filters={"memory_type": ["fact"]}, **everything)) == [fact.pk]
    assert set(hit_ids(search(acme.agent, **everything))) >= {fact.pk, decision.pk}
