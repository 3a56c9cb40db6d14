"""Invalidating a fact ends it now with a reason; it stays in the history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.models import Triple
from knowledge.selectors import triple_query
from knowledge.services import triple_assert, triple_invalidate
from memory_platform.exceptions import NotFound, PermissionDenied, ValidationError
from organizations.models import AuditEvent
from tests.conftest import Tenant
from tests.knowledge.conftest import at


@pytest.fixture
def fact(acme: Tenant) -> Triple:
    return triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1)
    )[0]


def test_an_invalidated_fact_is_no_longer_current_but_stays_in_the_history(acme: Tenant, fact: Triple) -> None:
    before = timezone.now()

    triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason="  Alice left the company ")

    assert triple_query(acme.reader, subject="Alice")[1] == []
    _, history = triple_query(acme.reader, subject="Alice", include_records=True)
    original, bounded = history
    assert original.pk == fact.pk
    assert original.expired_at is not None and original.expired_at >= before
    assert (bounded.valid_from, bounded.valid_to, bounded.expired_at) == (at(1), original.expired_at, None)
    assert (bounded.invalidation_reason, bounded.superseded_by_id) == ("Alice left the company", None)
    # It still held in the past.
    assert [t.pk for t in triple_query(acme.reader, subject="Alice", as_of=at(3))[1]] == [bounded.pk]
    event = AuditEvent.objects.get(action="triple.invalidate")
    assert (event.target_id, event.reason.strip()) == (str(fact.pk), "Alice left the company")


def test_the_successor_is_recorded(acme: Tenant, fact: Triple) -> None:
    successor, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="consults_for", object="Payments", valid_from=at(1)
    )

    triple_invalidate(
        principal=acme.agent, triple_id=str(fact.pk), reason="now a consultant", successor_id=successor.pk
    )

    bounded = Triple.objects.get(subject__name="Alice", predicate="works_on", expired_at__isnull=True)
    assert (bounded.superseded_by_id, bounded.invalidation_reason) == (successor.pk, "now a consultant")
    assert [t.predicate for t in triple_query(acme.reader, subject="Alice")[1]] == ["consults_for"]


def test_invalidating_twice_is_not_found(acme: Tenant, fact: Triple) -> None:
    triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason="left")
    rows = Triple.objects.count()

    with pytest.raises(NotFound, match=f"fact {fact.pk} not found"):
        triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason="left again")

    assert Triple.objects.count() == rows


@pytest.mark.parametrize("reason", [None, "", "   ", 42])
def test_a_reason_is_required(acme: Tenant, fact: Triple, reason: object) -> None:
    with pytest.raises(ValidationError, match="reason is required") as exc:
        triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason=reason)

    assert exc.value.details == {"field": "reason"}
    assert Triple.objects.get(pk=fact.pk).expired_at is None


@pytest.mark.parametrize("triple_id", ["abc", None, "1.5"])
def test_a_malformed_id_is_refused(acme: Tenant, fact: Triple, triple_id: object) -> None:
    with pytest.raises(ValidationError, match="is not a fact id"):
        triple_invalidate(principal=acme.agent, triple_id=triple_id, reason="left")


def test_an_unknown_successor_is_not_found_and_nothing_changes(acme: Tenant, fact: Triple) -> None:
    with pytest.raises(NotFound, match="successor"):
        triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason="left", successor_id=fact.pk + 1000)
    with pytest.raises(ValidationError, match="successor"):
        triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason="left", successor_id="the next one")

    assert Triple.objects.get(pk=fact.pk).expired_at is None
    assert Triple.objects.count() == 1


def test_a_reader_cannot_invalidate(acme: Tenant, fact: Triple) -> None:
    with pytest.raises(PermissionDenied, match="agent role"):
        triple_invalidate(principal=acme.reader, triple_id=fact.pk, reason="left")

    assert Triple.objects.get(pk=fact.pk).expired_at is None


def test_a_fact_that_had_not_begun_keeps_its_reason_in_the_history(acme: Tenant) -> None:
    planned, _ = triple_assert(
        principal=acme.agent,
        subject="Alice",
        predicate="works_on",
        object="Search",
        valid_from=timezone.now() + timedelta(days=30),
    )

    triple_invalidate(principal=acme.agent, triple_id=planned.pk, reason="the move was cancelled")

    _, history = triple_query(acme.reader, subject="Alice", include_records=True)
    assert [(t.pk, t.expired_at is not None, t.invalidation_reason) for t in history] == [
        (planned.pk, True, "the move was cancelled")
    ]
    assert triple_query(acme.reader, subject="Alice", as_of=planned.valid_from)[1] == []
