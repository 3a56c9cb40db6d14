"""include_records lists every record, current or expired, by predicate, valid_from, recorded_at;
include_history the timeline: each value once, with the period it held."""

from __future__ import annotations

from knowledge.selectors import triple_query
from knowledge.services import triple_assert
from tests.conftest import Tenant
from tests.knowledge.conftest import at


def test_history_is_ordered_by_predicate_then_valid_time_then_record_time(acme: Tenant) -> None:
    # Asserted out of predicate order, and one correction that starts where its predecessor did.
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(2))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Dave", valid_from=at(2))

    _, history = triple_query(acme.reader, subject="Alice", include_records=True)

    assert [
        (
            t.predicate,
            t.object.name,
            t.valid_from.month,
            t.valid_to.month if t.valid_to else None,
            t.expired_at and "expired",
        )
        for t in history
    ] == [
        ("reports_to", "Carol", 2, None, "expired"),  # corrected from the instant it began: no bounded copy
        ("reports_to", "Dave", 2, None, None),
        ("works_on", "Payments", 1, None, "expired"),
        ("works_on", "Payments", 1, 6, None),
        ("works_on", "Search", 6, None, None),
    ]
    recorded = [(t.predicate, t.valid_from, t.recorded_at) for t in history]
    assert recorded == sorted(recorded)


def test_history_can_be_narrowed_to_one_predicate(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(2))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))

    _, history = triple_query(acme.reader, subject="Alice", predicate="works_on", include_records=True)

    assert [t.object.name for t in history] == ["Payments", "Payments", "Search"]


def test_the_history_is_the_timeline_each_value_once_with_its_period(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(2))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Dave", valid_from=at(2))

    _, timeline = triple_query(acme.reader, subject="Alice", include_history=True)

    # Payments shows once, ended when Search began; Carol, corrected from the start, not at all.
    assert [
        (t.predicate, t.object.name, t.valid_from.month, t.valid_to.month if t.valid_to else None) for t in timeline
    ] == [
        ("reports_to", "Dave", 2, None),
        ("works_on", "Payments", 1, 6),
        ("works_on", "Search", 6, None),
    ]
    assert all(t.expired_at is None for t in timeline)
