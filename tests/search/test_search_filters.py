"""Every filter narrows every search mode (hybrid, vector, keyword, and browsing without a query)."""

from __future__ import annotations

from typing import Any

import pytest

from memories.decisions import memory_delete, memory_deprecate, memory_verify
from memories.models import Memory
from memory_platform.exceptions import ValidationError
from organizations.principal import Principal
from organizations.services import repository_get_or_create
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

# Every memory below mentions the rollout, so keyword search matches them all and the filter
# alone decides what comes back.
QUERY = "rollout"
# min_score 0: every candidate comes back, so the filter alone decides (the floor is tested elsewhere).
MODES: list[dict[str, Any]] = [
    {"query": QUERY, "mode": "hybrid", "min_score": 0},
    {"query": QUERY, "mode": "vector", "min_score": 0},
    {"query": QUERY, "mode": "keyword", "min_score": 0},
    {"query": ""},
]


@pytest.fixture
def library(acme: Tenant, make_memory: MemoryFactory, superuser_principal: Principal) -> dict[str, Memory]:
    lib = {
        "org_fact": make_memory(
            current_content="The rollout of release 42 starts in eu-west-1.",
            importance=5,
            tags=["deploy", "ci"],
            metadata={"team": "platform", "env": "prod"},
        ),
        "web_rule": make_memory(
            acme.curator,  # an active rule: an agent's would wait as a draft (the write policy)
            scope_type="repository",
            repository="web",
            memory_type="business_rule",
            current_content="Every web rollout must support Safari 16.",
            importance=8,
            tags=["deploy"],
            status="active",
            metadata={"team": "frontend"},
        ),
        "api_rule": make_memory(
            scope_type="repository",
            repository="api",
            memory_type="business_rule",
            current_content="An API rollout keeps RFC 7807 problem details.",
            importance=3,
        ),
        "verified": make_memory(memory_type="decision_log", current_content="We chose canary rollout over blue-green."),
        "system_fact": make_memory(
            superuser_principal,
            scope_type="system",
            current_content="Every rollout records times in UTC.",
            importance=2,
        ),
        "deprecated": make_memory(
            memory_type="convention", current_content="Tabs for indentation in rollout scripts.", importance=9
        ),
        "deleted": make_memory(current_content="The rollout used to need a VPN.", importance=7),
    }
    memory_verify(principal=acme.curator, memory_id=lib["verified"].pk)
    memory_deprecate(principal=acme.curator, memory_id=lib["deprecated"].pk)
    memory_delete(principal=acme.curator, memory_id=lib["deleted"].pk)
    return lib


LIVE = {"org_fact", "web_rule", "api_rule", "verified", "system_fact"}
CASES: list[tuple[str, dict[str, Any], set[str]]] = [
    ("no filter: live, not deprecated", {}, LIVE),
    ("scope_type", {"scope_type": "repository"}, {"web_rule", "api_rule"}),
    ("scope_type system", {"scope_type": "system"}, {"system_fact"}),
    ("memory_type", {"memory_type": "business_rule"}, {"web_rule", "api_rule"}),
    ("memory_type list", {"memory_type": ["business_rule", "decision_log"]}, {"web_rule", "api_rule", "verified"}),
    ("deprecated only when asked", {"memory_type": "convention"}, set()),
    ("status", {"status": "verified"}, {"verified"}),
    ("status deprecated", {"status": "deprecated"}, {"deprecated"}),
    ("status list", {"status": ["active", "deprecated"]}, {"web_rule", "deprecated"}),
    ("repository is hierarchical", {"repository": "web"}, {"org_fact", "web_rule", "verified", "system_fact"}),
    ("repository and scope", {"repository": "api", "scope_type": "repository"}, {"api_rule"}),
    ("tag", {"tags": ["deploy"]}, {"org_fact", "web_rule"}),
    ("all tags must match", {"tags": ["deploy", "ci"]}, {"org_fact"}),
    ("metadata containment", {"metadata": {"team": "platform"}}, {"org_fact"}),
    ("metadata all pairs", {"metadata": {"team": "platform", "env": "dev"}}, set()),
    ("min_importance", {"min_importance": 5}, {"org_fact", "web_rule"}),
    ("include_deleted", {"include_deleted": True}, LIVE | {"deleted"}),
    ("combined", {"include_deleted": True, "min_importance": 5, "status": ["draft"]}, {"org_fact", "deleted"}),
]


@pytest.mark.parametrize("mode", MODES, ids=["hybrid", "vector", "keyword", "browse"])
def test_every_filter_applies(acme: Tenant, library: dict[str, Memory], mode: dict[str, Any]) -> None:
    name = {memory.pk: key for key, memory in library.items()}
    wrong = []
    for case, filters, expected in CASES:
        page = search(acme.agent, filters=filters, limit=100, **mode)
        found = sorted(name.get(pk, str(pk)) for pk in hit_ids(page))
        if found != sorted(expected):
            wrong.append(f"{case}: got {found}, expected {sorted(expected)}")

    assert wrong == []


def test_filters_keep_relevance_order(acme: Tenant, library: dict[str, Memory]) -> None:
    page = search(acme.agent, query="web rollout Safari", filters={"tags": ["deploy"]}, min_score=0)

    assert hit_ids(page) == [library["web_rule"].pk, library["org_fact"].pk]


def test_a_filtered_search_with_no_match_is_empty_not_an_error(acme: Tenant, library: dict[str, Memory]) -> None:
    repository_get_or_create(principal=acme.admin, slug="mobile")
    for mode in MODES:
        page = search(acme.agent, filters={"repository": "mobile", "scope_type": "repository"}, **mode)
        assert page.hits == [] and page.next_cursor is None, mode


def test_a_search_in_an_unknown_repository_is_refused_with_the_known_ones(
    acme: Tenant, library: dict[str, Memory]
) -> None:
    for mode in MODES:
        with pytest.raises(
            ValidationError, match=r"repository 'mobil' does not exist in acme \(known repositories: api, web\)"
        ):
            search(acme.agent, filters={"repository": "mobil"}, **mode)
