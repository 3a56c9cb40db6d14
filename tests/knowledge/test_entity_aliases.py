"""Entities are matched by any alias, ignoring case and extra spaces; an alias names one entity."""

from __future__ import annotations

import pytest

from knowledge.models import Entity, EntityAlias
from knowledge.selectors import entity_find, triple_query
from knowledge.services import entity_add_alias, entity_resolve, triple_assert
from memory_platform.exceptions import Conflict, NotFound, PermissionDenied
from tests.conftest import Tenant
from tests.knowledge.conftest import at


def test_names_differing_in_case_and_spacing_are_one_entity(acme: Tenant) -> None:
    first = entity_resolve(principal=acme.agent, name="Alice  Smith", entity_type="person")

    assert entity_resolve(principal=acme.agent, name="alice smith") == first
    assert entity_resolve(principal=acme.agent, name=" ALICE SMITH ") == first
    assert first is not None
    assert (first.name, first.entity_type) == ("Alice Smith", "person")
    assert Entity.objects.count() == 1
    assert list(EntityAlias.objects.values_list("alias", "normalized")) == [("Alice Smith", "alice smith")]


def test_facts_asserted_under_any_spelling_belong_to_one_entity(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="alice", predicate="reports_to", object="Carol", valid_from=at(1))
    triple_assert(principal=acme.agent, subject=" ALICE ", predicate="works_on", object="search", valid_from=at(6))

    entity, triples = triple_query(acme.reader, subject="aLiCe")

    assert entity is not None and entity.name == "Alice"
    assert [(t.subject.name, t.predicate, t.object.name) for t in triples] == [
        ("Alice", "reports_to", "Carol"),
        ("Alice", "works_on", "search"),
    ]
    assert sorted(Entity.objects.values_list("name", flat=True)) == ["Alice", "Carol", "Payments", "search"]


def test_resolving_without_create_finds_nothing_new(acme: Tenant) -> None:
    assert entity_resolve(principal=acme.reader, name="Alice", create=False) is None
    assert not Entity.objects.exists()
    with pytest.raises(PermissionDenied):
        entity_resolve(principal=acme.reader, name="Alice")


def test_an_added_alias_resolves_in_queries_and_assertions(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))

    alice = entity_add_alias(principal=acme.agent, entity_name="alice", alias=" Al ")

    entity, triples = triple_query(acme.reader, subject="AL")
    assert entity == alice
    assert [t.object.name for t in triples] == ["Payments"]
    triple_assert(principal=acme.agent, subject="Al", predicate="works_on", object="Search", valid_from=at(6))
    assert [t.object.name for t in triple_query(acme.reader, subject="Alice")[1]] == ["Search"]
    assert [t.subject.name for t in triple_query(acme.reader, subject="Bob", object="Al")[1]] == []
    assert entity_find(acme.reader, "al") == alice
    assert sorted(alice.aliases.values_list("alias", flat=True)) == ["Al", "Alice"]


def test_an_alias_used_for_objects_too(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Bob", predicate="reports_to", object="Alice", valid_from=at(1))
    entity_add_alias(principal=acme.agent, entity_name="Alice", alias="Al")

    assert [t.object.name for t in triple_query(acme.reader, subject="Bob", object="al")[1]] == ["Alice"]


def test_adding_an_alias_the_entity_already_has_changes_nothing(acme: Tenant) -> None:
    alice = entity_resolve(principal=acme.agent, name="Alice")

    assert entity_add_alias(principal=acme.agent, entity_name="Alice", alias="ALICE") == alice
    assert EntityAlias.objects.count() == 1


def test_an_alias_of_another_entity_is_a_conflict(acme: Tenant) -> None:
    entity_resolve(principal=acme.agent, name="Alice")
    entity_resolve(principal=acme.agent, name="Albert")
    entity_add_alias(principal=acme.agent, entity_name="Albert", alias="Al")

    with pytest.raises(Conflict, match="'al' already names another entity \\('Albert'\\)"):
        entity_add_alias(principal=acme.agent, entity_name="Alice", alias="al")
    with pytest.raises(Conflict, match="Albert"):
        entity_add_alias(principal=acme.agent, entity_name="Alice", alias="Albert")

    assert sorted(EntityAlias.objects.values_list("alias", flat=True)) == ["Al", "Albert", "Alice"]
    assert entity_find(acme.reader, "al") == Entity.objects.get(name="Albert")


def test_an_alias_for_an_unknown_entity_is_not_found(acme: Tenant) -> None:
    with pytest.raises(NotFound, match="Mallory"):
        entity_add_alias(principal=acme.agent, entity_name="Mallory", alias="Mal")

    assert not Entity.objects.exists()


def test_a_reader_cannot_add_aliases(acme: Tenant) -> None:
    entity_resolve(principal=acme.agent, name="Alice")

    with pytest.raises(PermissionDenied, match="agent role"):
        entity_add_alias(principal=acme.reader, entity_name="Alice", alias="Al")
