"""Asserting a new object for (subject, predicate) ends the open fact where the new one starts;
the old fact stays in the history as an expired row plus its bounded copy."""

from __future__ import annotations

from datetime import timedelta

import pytest

from knowledge.models import Entity, Predicate, Triple
from knowledge.selectors import triple_query
from knowledge.services import triple_assert
from memory_platform.exceptions import PermissionDenied, ValidationError
from organizations.models import AuditEvent
from tests.conftest import Tenant
from tests.knowledge.conftest import at


def _current(tenant: Tenant, subject: str, predicate: str | None = None) -> list[tuple[str, str]]:
    _, triples = triple_query(tenant.agent, subject=subject, predicate=predicate)
    return [(t.predicate, t.object.name) for t in triples]


def test_a_new_object_replaces_the_open_fact(acme: Tenant) -> None:
    old, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1)
    )
    new, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6)
    )

    assert _current(acme, "Alice") == [("works_on", "Search")]
    _, history = triple_query(acme.agent, subject="Alice", include_records=True)
    rows = [(t.pk, t.object.name, t.valid_from, t.valid_to, t.expired_at is not None) for t in history]
    copy = next(t for t in history if t.pk not in (old.pk, new.pk))
    assert rows == [
        (old.pk, "Payments", at(1), None, True),  # what we believed until the second assertion
        (copy.pk, "Payments", at(1), at(6), False),  # what we believe now: it ended when Search began
        (new.pk, "Search", at(6), None, False),
    ]
    stored_old = Triple.objects.get(pk=old.pk)
    assert stored_old.expired_at == copy.recorded_at == new.recorded_at
    assert (copy.superseded_by_id, copy.invalidation_reason) == (new.pk, "superseded")
    assert (copy.confidence, copy.provenance, copy.created_by_token_id) == (
        old.confidence,
        old.provenance,
        old.created_by_token_id,
    )


def test_asserting_the_open_fact_again_changes_nothing(acme: Tenant) -> None:
    first, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1)
    )
    rows, events = Triple.objects.count(), AuditEvent.objects.count()

    again, _ = triple_assert(principal=acme.agent, subject="alice", predicate="Works On", object="PAYMENTS")
    later, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(3)
    )

    assert again.pk == later.pk == first.pk
    assert (Triple.objects.count(), AuditEvent.objects.count()) == (rows, events)
    assert Triple.objects.get(pk=first.pk).valid_from == at(1)


def test_restating_an_open_fact_from_earlier_extends_it_back(acme: Tenant) -> None:
    first, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(3)
    )

    earlier, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1)
    )

    _, triples = triple_query(acme.agent, subject="Alice", as_of=at(2))
    assert [t.pk for t in triples] == [earlier.pk]
    assert Triple.objects.get(pk=first.pk).expired_at is not None
    assert _current(acme, "Alice") == [("works_on", "Payments")]


def test_only_the_same_predicate_is_replaced(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(2))
    triple_assert(principal=acme.agent, subject="Bob", predicate="works_on", object="Search", valid_from=at(3))

    assert _current(acme, "Alice") == [("reports_to", "Carol"), ("works_on", "Payments")]
    assert _current(acme, "Bob") == [("works_on", "Search")]


def test_a_multi_valued_predicate_keeps_every_object(acme: Tenant) -> None:
    Predicate.objects.create(organization=acme.organization, name="speaks", multi_valued=True)

    triple_assert(principal=acme.agent, subject="Alice", predicate="speaks", object="German", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="speaks", object="French", valid_from=at(2))
    triple_assert(principal=acme.agent, subject="Alice", predicate="speaks", object="German", valid_from=at(3))

    assert _current(acme, "Alice") == [("speaks", "German"), ("speaks", "French")]
    assert not Triple.objects.filter(expired_at__isnull=False).exists()


def test_multi_valued_is_declared_per_organization(acme: Tenant, globex: Tenant) -> None:
    Predicate.objects.create(organization=globex.organization, name="speaks", multi_valued=True)

    triple_assert(principal=acme.agent, subject="Alice", predicate="speaks", object="German", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="speaks", object="French", valid_from=at(2))

    assert _current(acme, "Alice") == [("speaks", "French")]


def test_the_assertion_is_stored_with_its_details(acme: Tenant) -> None:
    triple, _ = triple_assert(
        principal=acme.agent,
        subject="  Alice ",
        predicate=" Works  On ",
        object="Payments",
        confidence=0.8,
        provenance="ticket PAY-12",
        valid_from="2025-01-01T00:00:00Z",
    )

    stored = Triple.objects.select_related("subject", "object").get(pk=triple.pk)
    assert (stored.subject.name, stored.predicate, stored.object.name) == ("Alice", "works_on", "Payments")
    assert (stored.confidence, stored.provenance, stored.valid_from, stored.valid_to) == (
        0.8,
        {"note": "ticket PAY-12"},
        at(1),
        None,
    )
    assert acme.agent.token is not None and stored.created_by_token_id == acme.agent.token.pk
    event = AuditEvent.objects.get(action="triple.assert")
    assert event.data == {"subject": "Alice", "predicate": "works_on", "object": "Payments"}


def test_valid_from_defaults_to_now(acme: Tenant) -> None:
    triple, _ = triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments")

    assert triple.valid_from == triple.recorded_at
    assert _current(acme, "Alice") == [("works_on", "Payments")]


@pytest.mark.parametrize("confidence", [-0.1, 1.01, 2, "high", True])
def test_confidence_out_of_range_is_refused_and_leaves_nothing(acme: Tenant, confidence: object) -> None:
    with pytest.raises(ValidationError) as exc:
        triple_assert(
            principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", confidence=confidence
        )

    assert exc.value.details == {"field": "confidence"}
    assert "0 to 1" in exc.value.message
    assert not Triple.objects.exists()
    assert not Entity.objects.exists()


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"subject": " "}, "name"),
        ({"object": ""}, "name"),
        ({"predicate": "  "}, "predicate"),
        ({"subject": "x" * 201}, "name"),
        ({"valid_from": "last tuesday"}, "valid_from"),
        ({"provenance": 42}, "provenance"),
    ],
)
def test_invalid_arguments_are_refused(acme: Tenant, arguments: dict, field: str) -> None:
    call = {"subject": "Alice", "predicate": "works_on", "object": "Payments"} | arguments

    with pytest.raises(ValidationError) as exc:
        triple_assert(principal=acme.agent, **call)

    assert exc.value.details == {"field": field}
    assert not Triple.objects.exists()


def test_a_reader_cannot_assert(acme: Tenant) -> None:
    with pytest.raises(PermissionDenied, match="agent role"):
        triple_assert(principal=acme.reader, subject="Alice", predicate="works_on", object="Payments")

    assert not Entity.objects.exists()


def test_the_bounded_copy_ends_exactly_where_the_successor_begins(acme: Tenant) -> None:
    start = at(6) + timedelta(microseconds=1)
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=start)

    bounded = Triple.objects.get(object__name="Payments", expired_at__isnull=True)
    assert bounded.valid_to == start


def test_a_correction_from_the_same_instant_replaces_the_fact_and_says_so(acme: Tenant) -> None:
    wrong, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(2)
    )

    right, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="reports_to", object="Dave", valid_from=at(2)
    )

    assert _current(acme, "Alice") == [("reports_to", "Dave")]
    assert triple_query(acme.agent, subject="Alice", as_of=at(2))[1] == [right]
    stored = Triple.objects.get(pk=wrong.pk)
    assert (stored.expired_at is not None, stored.superseded_by_id, stored.invalidation_reason) == (
        True,
        right.pk,
        "superseded",
    )
    assert Triple.objects.count() == 2
