"""memory_list and MemoryFilters: every filter, hierarchical repositories, ordering, query count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.decisions import memory_delete, memory_deprecate
from memories.models import Memory
from memories.selectors import MemoryFilters, memory_list
from memories.services import memory_create
from memory_platform.exceptions import ValidationError
from organizations.principal import Principal
from organizations.services import repository_get_or_create
from tests.conftest import MemoryFactory, Tenant


@dataclass
class Library:
    org_fact: Memory
    web_rule: Memory
    api_rule: Memory
    system_fact: Memory
    deprecated: Memory
    deleted: Memory
    private: Memory
    foreign: Memory


@pytest.fixture
def library(acme: Tenant, globex: Tenant, make_memory: MemoryFactory, superuser_principal: Principal) -> Library:
    org_fact = make_memory(
        current_content="Production runs in eu-west-1.",
        importance=5,
        tags=["deploy", "ci"],
        metadata={"team": "platform", "env": "prod"},
    )
    web_rule = make_memory(
        acme.curator,  # an active rule: an agent's would wait as a draft (the write policy)
        scope_type="repository",
        repository="web",
        memory_type="business_rule",
        current_content="The web app must support Safari 16.",
        importance=8,
        tags=["deploy"],
        status="active",
        metadata={"team": "frontend"},
    )
    api_rule = make_memory(
        scope_type="repository",
        repository="api",
        memory_type="business_rule",
        current_content="The API returns RFC 7807 problem details.",
        importance=3,
    )
    system_fact = make_memory(
        superuser_principal, scope_type="system", current_content="All times are stored in UTC.", importance=2
    )
    deprecated = make_memory(
        acme.curator, memory_type="convention", current_content="Tabs for indentation.", importance=9
    )
    memory_deprecate(principal=acme.curator, memory_id=deprecated.id)
    deleted = make_memory(current_content="The old VPN host is vpn1.", importance=4)
    memory_delete(principal=acme.agent, memory_id=deleted.id)
    private = make_memory(
        acme.person, scope_type="user", memory_type="preference", current_content="I like terse answers."
    )
    foreign, _ = memory_create(
        principal=globex.agent,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "Globex runs in us-east-1."},
    )
    return Library(org_fact, web_rule, api_rule, system_fact, deprecated, deleted, private, foreign)


def _listed(principal: Principal, filters: dict[str, Any] | None = None) -> list[Memory]:
    return list(memory_list(principal, MemoryFilters.from_mapping(filters)))


def test_default_list_is_visible_live_non_deprecated_by_importance(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent) == [library.web_rule, library.org_fact, library.api_rule, library.system_fact]
    # The person also sees their own memory.
    assert library.private in _listed(acme.person)


def test_newest_first_within_the_same_importance(acme: Tenant, make_memory: MemoryFactory) -> None:
    older = make_memory(importance=5)
    low = make_memory(importance=1)
    newer = make_memory(importance=5)
    high = make_memory(importance=9)
    assert _listed(acme.reader) == [high, newer, older, low]


def test_filter_by_scope_type(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"scope_type": "repository"}) == [library.web_rule, library.api_rule]
    assert _listed(acme.agent, {"scope_type": "system"}) == [library.system_fact]
    assert _listed(acme.person, {"scope_type": "user"}) == [library.private]
    assert _listed(acme.agent, {"scope_type": "user"}) == []


def test_filter_by_memory_type_single_and_list(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"memory_type": "business_rule"}) == [library.web_rule, library.api_rule]
    both = _listed(acme.person, {"memory_type": ["business_rule", "preference"]})
    assert both == [library.web_rule, library.api_rule, library.private]
    assert _listed(acme.agent, {"memory_type": "risk"}) == []


def test_filter_by_status(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"status": "active"}) == [library.web_rule]
    assert _listed(acme.agent, {"status": ["active", "draft"]}) == [
        library.web_rule,
        library.org_fact,
        library.api_rule,
        library.system_fact,
    ]


def test_deprecated_only_when_asked_for(acme: Tenant, library: Library) -> None:
    assert library.deprecated not in _listed(acme.agent)
    assert _listed(acme.agent, {"status": "deprecated"}) == [library.deprecated]
    assert _listed(acme.agent, {"status": ["deprecated", "active"]}) == [library.deprecated, library.web_rule]


def test_repository_filter_is_hierarchical(acme: Tenant, library: Library) -> None:
    web = _listed(acme.person, {"repository": "web"})
    assert web == [library.web_rule, library.org_fact, library.system_fact, library.private]
    assert library.api_rule not in web
    api = _listed(acme.agent, {"repository": "api"})
    assert api == [library.org_fact, library.api_rule, library.system_fact]
    # A repository with no memories of its own still shows what applies to every repository.
    repository_get_or_create(principal=acme.admin, slug="mobile")
    assert _listed(acme.agent, {"repository": "mobile"}) == [library.org_fact, library.system_fact]


def test_an_unknown_repository_is_refused_with_the_known_ones(acme: Tenant, library: Library) -> None:
    with pytest.raises(ValidationError) as refused:
        _listed(acme.agent, {"repository": "wbe"})
    assert "repository 'wbe' does not exist in acme (known repositories: api, web)" in refused.value.message
    assert refused.value.details == {"field": "filters.repository", "known": ["api", "web"]}


def test_repository_filter_combines_with_scope(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"repository": "web", "scope_type": "repository"}) == [library.web_rule]


def test_tags_must_all_match(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"tags": ["deploy"]}) == [library.web_rule, library.org_fact]
    assert _listed(acme.agent, {"tags": ["deploy", "ci"]}) == [library.org_fact]
    assert _listed(acme.agent, {"tags": [" DEPLOY "]}) == [library.web_rule, library.org_fact]
    assert _listed(acme.agent, {"tags": ["deploy", "nope"]}) == []


def test_metadata_containment(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"metadata": {"team": "platform"}}) == [library.org_fact]
    assert _listed(acme.agent, {"metadata": {"team": "platform", "env": "prod"}}) == [library.org_fact]
    assert _listed(acme.agent, {"metadata": {"team": "platform", "env": "dev"}}) == []


def test_min_importance(acme: Tenant, library: Library) -> None:
    assert _listed(acme.agent, {"min_importance": 5}) == [library.web_rule, library.org_fact]
    assert _listed(acme.agent, {"min_importance": "3"}) == [library.web_rule, library.org_fact, library.api_rule]


def test_include_deleted(acme: Tenant, library: Library) -> None:
    assert library.deleted not in _listed(acme.agent)
    with_deleted = _listed(acme.agent, {"include_deleted": True})
    assert with_deleted == [library.web_rule, library.org_fact, library.deleted, library.api_rule, library.system_fact]


def test_filters_combine(acme: Tenant, library: Library) -> None:
    filters = {"memory_type": "business_rule", "tags": ["deploy"], "min_importance": 8, "repository": "web"}
    assert _listed(acme.agent, filters) == [library.web_rule]


def test_other_organizations_never_listed(acme: Tenant, globex: Tenant, library: Library) -> None:
    everything = {"include_deleted": True, "status": ["draft", "active", "verified", "locked", "deprecated"]}
    assert library.foreign not in _listed(acme.admin, everything)
    assert _listed(globex.admin, everything) == [library.system_fact, library.foreign]


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"colour": "red"}, "unknown filter(s): colour; available filters: scope_type, memory_type, status"),
        ({"query": "x", "organization": "acme"}, "unknown filter(s): organization, query"),
        ({"scope_type": "galaxy"}, "unknown scope_type 'galaxy'; use one of:"),
        ({"memory_type": ["fact", "gossip"]}, "unknown memory_type 'gossip'"),
        ({"status": "archived"}, "unknown status 'archived'; use one of: draft, verified"),
        ({"tags": "deploy"}, "tags must be a list of strings"),
        ({"metadata": ["team"]}, "metadata must be a JSON object"),
        ({"min_importance": 0}, "importance must be from 1 to 10"),
        ({"min_importance": "high"}, "importance must be a whole number"),
        ({"include_deleted": "yes"}, "include_deleted must be true or false"),
        ({"repository": 7}, "repository must be a repository slug"),
    ],
)
def test_bad_filters_are_refused_with_a_message(filters: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as exc:
        MemoryFilters.from_mapping(filters)
    assert message in exc.value.message


def test_empty_filters_mean_no_filter() -> None:
    assert MemoryFilters.from_mapping(None) == MemoryFilters()
    assert MemoryFilters.from_mapping({"memory_type": "", "status": [], "scope_type": None}) == MemoryFilters()


def _queries_to_render(principal: Principal) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as queries:
        rows = [
            (m.organization.slug, m.repository.slug if m.repository else None, m.owner_id and m.owner.username)
            for m in memory_list(principal)
        ]
    return len(rows), len(queries)


def test_listing_takes_a_constant_number_of_queries(acme: Tenant, make_memory: MemoryFactory) -> None:
    for n in range(2):
        make_memory(scope_type="repository", repository=f"repo-{n}")
    make_memory(acme.person, scope_type="user")
    few = _queries_to_render(acme.person)

    for n in range(10):
        make_memory(scope_type="repository", repository=f"repo-{n}")
        make_memory(acme.person, scope_type="user")
    many = _queries_to_render(acme.person)

    assert (few[0], many[0]) == (3, 23)
    assert few[1] == many[1] == 1


def test_listing_with_filters_is_two_queries(acme: Tenant, library: Library, django_assert_num_queries: Any) -> None:
    filters = MemoryFilters.from_mapping({"repository": "web", "tags": ["deploy"], "metadata": {"team": "frontend"}})
    # One to check that the repository exists, one for the page.
    with django_assert_num_queries(2):
        slugs = [(m.organization.slug, m.repository and m.repository.slug) for m in memory_list(acme.agent, filters)]
    assert slugs == [("acme", "web")]
