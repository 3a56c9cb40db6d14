"""An organization's own words: a query naming an entity by one of its names (an alias a curator or
agent gave it) is searched with its other names beside it."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.services import entity_add_alias, entity_get_or_create
from memories.search.words import expanded, organization_words
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

CLUSTER = "All our services run on Kubernetes in the eu-west cluster."
PAYMENTS = "Refunds above 500 euros go through paysvc, never by hand."


@pytest.fixture
def memories(make_memory: MemoryFactory) -> dict[str, Any]:
    return {
        "cluster": make_memory(current_content=CLUSTER, status="active").pk,
        "payments": make_memory(current_content=PAYMENTS, status="active").pk,
        "other": make_memory(current_content="The office closes at noon on public holidays.", status="active").pk,
    }


@pytest.fixture
def aliases(acme: Tenant) -> None:
    entity_get_or_create(principal=acme.agent, name="Kubernetes", entity_type="platform")
    entity_add_alias(principal=acme.agent, entity_name="Kubernetes", alias="kube")
    entity_get_or_create(principal=acme.agent, name="paysvc", entity_type="service")
    entity_add_alias(principal=acme.agent, entity_name="paysvc", alias="payments service")


def test_a_name_brings_the_other_names_of_what_it_names(acme: Tenant, aliases: None) -> None:
    org = acme.organization.pk

    assert organization_words("Where does kube run?", org) == ["Kubernetes"]
    assert organization_words("Who owns the Payments  Service?", org) == ["paysvc"]  # any case, any spacing
    assert organization_words("what runs on Kubernetes?", org) == ["kube"]
    assert organization_words("where do services run?", org) == []
    assert expanded("Where does kube run?", org) == "Where does kube run? (Kubernetes)"


def test_an_organization_has_only_its_own_words(acme: Tenant, globex: Tenant, aliases: None) -> None:
    assert organization_words("Where does kube run?", globex.organization.pk) == []


@pytest.mark.parametrize("with_aliases", [True, False])
def test_by_words_alone_the_alias_finds_the_memory_that_names_the_entity(
    acme: Tenant, memories: dict[str, Any], request: pytest.FixtureRequest, with_aliases: bool
) -> None:
    """Keyword search: no meaning to fall back on, so only the entity's other name can match."""
    if with_aliases:
        request.getfixturevalue("aliases")

    kube = hit_ids(search(acme.agent, query="which kube version do we have?", mode="keyword", min_score=0))
    payments = hit_ids(search(acme.agent, query="who owns the payments service?", mode="keyword", min_score=0))

    assert (memories["cluster"] in kube) is with_aliases
    assert (memories["payments"] in payments) is with_aliases


def test_a_new_alias_counts_from_the_next_search(acme: Tenant, memories: dict[str, Any]) -> None:
    entity_get_or_create(principal=acme.agent, name="Kubernetes")
    query = "which kube version do we have?"
    assert memories["cluster"] not in hit_ids(search(acme.agent, query=query, mode="keyword", min_score=0))

    entity_add_alias(principal=acme.agent, entity_name="Kubernetes", alias="kube")

    assert memories["cluster"] in hit_ids(search(acme.agent, query=query, mode="keyword", min_score=0))


def test_without_expansion_no_words_are_added(acme: Tenant, aliases: None, settings: Any) -> None:
    settings.SEARCH_EXPAND_ABBREVIATIONS = False

    assert expanded("Where does kube run?", acme.organization.pk) == "Where does kube run?"


def test_names_are_split_as_queries_are(acme: Tenant) -> None:
    """Punctuation at a word's edges, in the query or in the alias, does not keep them apart."""
    entity_get_or_create(principal=acme.agent, name=".NET")
    entity_add_alias(principal=acme.agent, entity_name=".NET", alias="dotnet")
    org = acme.organization.pk

    assert organization_words("which .NET version?", org) == ["dotnet"]
    assert organization_words("is dotnet allowed?", org) == [".NET"]
    assert organization_words("payments — dotnet", org) == [".NET"]


def test_a_cursor_is_refused_once_the_words_it_was_searched_with_changed(
    acme: Tenant, memories: dict[str, Any], aliases: None, make_memory: MemoryFactory
) -> None:
    for n in range(4):
        make_memory(current_content=f"Kubernetes node pool {n} scales between two and six nodes.", status="active")
    first = search(acme.agent, query="how does kube scale?", limit=2, min_score=0)
    assert first.next_cursor is not None
    second = search(acme.agent, query="how does kube scale?", limit=2, min_score=0, cursor=first.next_cursor)
    assert second.hits  # the same words: the pages join up

    entity_add_alias(principal=acme.agent, entity_name="Kubernetes", alias="k-eight-s")

    with pytest.raises(ValidationError, match=r"words .* changed since the first page"):
        search(acme.agent, query="how does kube scale?", limit=2, min_score=0, cursor=first.next_cursor)
