"""The outsider (globex) sees and touches none of acme's links, entities or facts, through every
selector and service; the same names in globex are globex's own, separate entities."""

from __future__ import annotations

import pytest

from knowledge.links import link_create, link_remove
from knowledge.models import Entity, MemoryLink, Triple
from knowledge.selectors import entity_find, entity_related, links_for_memories, memory_graph, triple_query
from knowledge.services import entity_add_alias, entity_resolve, triple_assert, triple_invalidate
from memories.models import Memory
from memory_platform.exceptions import NotFound
from tests.conftest import MemoryFactory, Tenant
from tests.knowledge.conftest import Link, at


@pytest.fixture
def acme_knowledge(acme: Tenant, make_memory: MemoryFactory, link: Link) -> tuple[Memory, Memory, Triple]:
    source, target = make_memory(), make_memory()
    link(source, target, "depends_on")
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    fact, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(1)
    )
    entity_add_alias(principal=acme.agent, entity_name="Alice", alias="Al")
    return source, target, fact


def test_links_and_the_graph_are_invisible(globex: Tenant, acme_knowledge: tuple[Memory, Memory, Triple]) -> None:
    source, target, _ = acme_knowledge

    assert links_for_memories(globex.admin, [source.id, target.id]) == {}
    with pytest.raises(NotFound):
        memory_graph(globex.admin, seed_ids=[source.id, target.id])


def test_links_cannot_be_made_or_removed(globex: Tenant, acme_knowledge: tuple[Memory, Memory, Triple]) -> None:
    source, target, _ = acme_knowledge

    with pytest.raises(NotFound):
        link_create(principal=globex.admin, source_id=target.id, target_id=source.id)
    with pytest.raises(NotFound):
        link_remove(principal=globex.admin, source_id=source.id, target_id=target.id, relation_type="depends_on")

    assert list(MemoryLink.objects.values_list("removed_at", flat=True)) == [None]


@pytest.mark.parametrize("name", ["Alice", "al", "Payments", "Carol"])
def test_entities_and_facts_are_invisible(
    globex: Tenant, acme_knowledge: tuple[Memory, Memory, Triple], name: str
) -> None:
    assert entity_find(globex.admin, name) is None
    assert entity_resolve(principal=globex.admin, name=name, create=False) is None
    assert triple_query(globex.admin, subject=name) == (None, [])
    assert triple_query(globex.admin, subject=name, include_history=True) == (None, [])
    assert triple_query(globex.admin, subject=name, as_of=at(3)) == (None, [])
    assert entity_related(globex.admin, name=name, depth=4) == (None, [], [], False)


def test_facts_cannot_be_invalidated_nor_named_as_successors(
    acme: Tenant, globex: Tenant, acme_knowledge: tuple[Memory, Memory, Triple]
) -> None:
    _, _, acme_fact = acme_knowledge
    globex_fact, _ = triple_assert(principal=globex.agent, subject="Zed", predicate="works_on", object="Doom")

    with pytest.raises(NotFound):
        triple_invalidate(principal=globex.admin, triple_id=acme_fact.pk, reason="not yours")
    with pytest.raises(NotFound, match="successor"):
        triple_invalidate(
            principal=globex.admin, triple_id=globex_fact.pk, reason="replaced", successor_id=acme_fact.pk
        )

    assert not Triple.objects.filter(expired_at__isnull=False).exists()
    assert [t.pk for t in triple_query(acme.reader, subject="Alice", predicate="reports_to")[1]] == [acme_fact.pk]


def test_aliases_cannot_be_added_to_acme_entities(
    acme: Tenant, globex: Tenant, acme_knowledge: tuple[Memory, Memory, Triple]
) -> None:
    with pytest.raises(NotFound):
        entity_add_alias(principal=globex.admin, entity_name="Alice", alias="Ally")

    assert entity_find(acme.reader, "Ally") is None


def test_the_same_names_make_separate_globex_entities(
    acme: Tenant, globex: Tenant, acme_knowledge: tuple[Memory, Memory, Triple]
) -> None:
    acme_alice = entity_find(acme.reader, "Alice")

    ours, _ = triple_assert(
        principal=globex.agent, subject="alice", predicate="works_on", object="Search", valid_from=at(2)
    )
    entity_add_alias(principal=globex.agent, entity_name="Alice", alias="Al")  # no clash with acme's "Al"

    assert ours.subject != acme_alice
    assert ours.subject.organization_id == ours.object.organization_id == globex.organization.pk
    assert Entity.objects.filter(name__iexact="alice").count() == 2
    # Neither organization sees the other's fact, and acme's open fact was not replaced.
    assert [t.object.name for t in triple_query(globex.reader, subject="Al")[1]] == ["Search"]
    assert [t.object.name for t in triple_query(acme.reader, subject="Al", predicate="works_on")[1]] == ["Payments"]
    assert not Triple.objects.filter(organization=acme.organization, expired_at__isnull=False).exists()
    _, related, facts, _ = entity_related(globex.reader, name="Alice", depth=4)
    assert [e.name for e, _ in related] == ["Search"]
    assert all(f.organization_id == globex.organization.pk for f in facts)
