"""entity_related: entities reached through current facts, by depth and direction, capped."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.selectors import entity_related
from knowledge.services import triple_assert, triple_invalidate
from memory_platform.exceptions import ValidationError
from tests.conftest import Tenant
from tests.knowledge.conftest import at


@pytest.fixture
def org_chart(acme: Tenant) -> None:
    """Alice → works_on → Payments → owned_by → Finance → located_in → Berlin; Bob → works_on → Payments."""
    for subject, predicate, object in [
        ("Alice", "works_on", "Payments"),
        ("Payments", "owned_by", "Finance"),
        ("Finance", "located_in", "Berlin"),
        ("Bob", "works_on", "Payments"),
    ]:
        triple_assert(principal=acme.agent, subject=subject, predicate=predicate, object=object, valid_from=at(1))


def _related(tenant: Tenant, name: str, **options: object) -> dict[str, int]:
    _, related, _, _ = entity_related(tenant.reader, name=name, **options)
    return {entity.name: hops for entity, hops in related}


def test_depth_one_in_both_directions(acme: Tenant, org_chart: None) -> None:
    entity, related, facts, truncated = entity_related(acme.reader, name="payments")

    assert entity is not None and entity.name == "Payments"
    assert {e.name: hops for e, hops in related} == {"Alice": 1, "Bob": 1, "Finance": 1}
    assert sorted((f.subject.name, f.predicate, f.object.name) for f in facts) == [
        ("Alice", "works_on", "Payments"),
        ("Bob", "works_on", "Payments"),
        ("Payments", "owned_by", "Finance"),
    ]
    assert truncated is False


def test_depth_and_direction(acme: Tenant, org_chart: None) -> None:
    assert _related(acme, "Alice", depth=1, direction="outgoing") == {"Payments": 1}
    assert _related(acme, "Alice", depth=3, direction="outgoing") == {"Payments": 1, "Finance": 2, "Berlin": 3}
    assert _related(acme, "Alice", depth=3, direction="incoming") == {}
    assert _related(acme, "Berlin", depth=2, direction="incoming") == {"Finance": 1, "Payments": 2}
    # Both ways, Bob is two steps from Alice (through Payments), and each entity is listed once.
    assert _related(acme, "Alice", depth=2) == {"Payments": 1, "Bob": 2, "Finance": 2}
    assert _related(acme, "Alice", depth=4) == {"Payments": 1, "Bob": 2, "Finance": 2, "Berlin": 3}


def test_a_cycle_of_facts_terminates(acme: Tenant) -> None:
    for subject, object in [("A", "B"), ("B", "C"), ("C", "A")]:
        triple_assert(principal=acme.agent, subject=subject, predicate="feeds", object=object, valid_from=at(1))

    assert _related(acme, "A", depth=4, direction="outgoing") == {"B": 1, "C": 2}


def test_only_current_facts_connect(acme: Tenant, org_chart: None) -> None:
    # Alice moved to Search; Bob's fact was invalidated; a future fact does not count yet.
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))
    bob, _ = triple_assert(principal=acme.agent, subject="Bob", predicate="works_on", object="Payments")
    triple_invalidate(principal=acme.agent, triple_id=bob.pk, reason="Bob left")
    triple_assert(
        principal=acme.agent,
        subject="Payments",
        predicate="audited_by",
        object="KPMG",
        valid_from=timezone.now() + timedelta(days=7),
    )

    assert _related(acme, "Payments") == {"Finance": 1}
    assert _related(acme, "Alice") == {"Search": 1}
    _, _, facts, _ = entity_related(acme.reader, name="Payments")
    assert [(f.subject.name, f.object.name) for f in facts] == [("Payments", "Finance")]


def test_facts_asserted_just_now_connect(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments")

    assert _related(acme, "Alice") == {"Payments": 1}


def test_a_small_limit_truncates(acme: Tenant, org_chart: None) -> None:
    _, related, facts, truncated = entity_related(acme.reader, name="Payments", limit=2)

    assert len(related) == 2
    assert truncated is True
    names = {"Payments", *(e.name for e, _ in related)}
    assert all(f.subject.name in names and f.object.name in names for f in facts)
    assert entity_related(acme.reader, name="Payments", limit=3)[3] is False


def test_an_unknown_entity_has_no_relations(acme: Tenant, org_chart: None) -> None:
    assert entity_related(acme.reader, name="Mallory") == (None, [], [], False)


@pytest.mark.parametrize(
    ("options", "field"),
    [({"depth": 0}, "depth"), ({"depth": 5}, "depth"), ({"depth": True}, "depth"), ({"direction": "up"}, "direction")],
)
def test_invalid_options_name_the_field(acme: Tenant, org_chart: None, options: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        entity_related(acme.reader, name="Alice", **options)

    assert exc.value.details == {"field": field}
