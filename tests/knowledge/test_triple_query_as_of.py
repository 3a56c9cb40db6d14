"""Valid time is half-open: a fact holds from valid_from (inclusive) to valid_to (exclusive)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from knowledge.selectors import triple_query
from knowledge.services import triple_assert
from memory_platform.exceptions import ValidationError
from tests.conftest import Tenant
from tests.knowledge.conftest import at

TICK = timedelta(microseconds=1)


@pytest.fixture
def moved(acme: Tenant) -> None:
    """Alice worked on Payments from January, on Search from June."""
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))


def _objects(tenant: Tenant, as_of: datetime | str | None) -> list[str]:
    _, triples = triple_query(tenant.reader, subject="Alice", predicate="works_on", as_of=as_of)
    return [t.object.name for t in triples]


@pytest.mark.parametrize(
    ("as_of", "expected"),
    [
        (at(1) - TICK, []),  # just before the first fact began
        (at(1), ["Payments"]),  # exactly at valid_from: included
        (at(3), ["Payments"]),
        (at(6) - TICK, ["Payments"]),  # the last instant of Payments
        (at(6), ["Search"]),  # exactly at valid_to: Payments excluded, Search included
        (at(12), ["Search"]),
        (None, ["Search"]),  # now
    ],
)
def test_facts_at_and_around_the_boundaries(
    acme: Tenant, moved: None, as_of: datetime | None, expected: list[str]
) -> None:
    assert _objects(acme, as_of) == expected


def test_as_of_accepts_iso_text_and_offsets(acme: Tenant, moved: None) -> None:
    assert _objects(acme, "2025-06-01T00:00:00Z") == ["Search"]
    assert _objects(acme, "2025-06-01T01:59:59.999999+02:00") == ["Payments"]
    assert _objects(acme, "2025-06-01T00:00:00") == ["Search"]  # no offset: UTC


def test_an_invalid_as_of_is_refused(acme: Tenant, moved: None) -> None:
    with pytest.raises(ValidationError) as exc:
        _objects(acme, "yesterday")

    assert exc.value.details == {"field": "as_of"}


def test_a_fact_that_starts_in_the_future_is_not_current_yet(acme: Tenant) -> None:
    starts = datetime.now(tz=at(1).tzinfo) + timedelta(days=30)
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=starts)

    assert _objects(acme, None) == ["Payments"]
    assert _objects(acme, starts) == ["Search"]


def test_filters_by_predicate_and_object(acme: Tenant, moved: None) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(1))

    def query(**filters: object) -> list[str]:
        return [f"{t.predicate}:{t.object.name}" for t in triple_query(acme.reader, subject="alice", **filters)[1]]

    assert query() == ["reports_to:Carol", "works_on:Search"]
    assert query(predicate="Reports To") == ["reports_to:Carol"]
    assert query(object="search") == ["works_on:Search"]
    assert query(object="Payments", as_of=at(2)) == ["works_on:Payments"]
    assert query(object="Nobody") == []
    assert query(predicate="owns") == []


def test_an_unknown_subject_has_no_facts(acme: Tenant, moved: None) -> None:
    assert triple_query(acme.reader, subject="Mallory") == (None, [])


def test_an_invalid_as_of_is_refused_even_for_an_unknown_subject(acme: Tenant) -> None:
    with pytest.raises(ValidationError) as exc:
        triple_query(acme.reader, subject="Nobody", as_of="yesterday")

    assert exc.value.details == {"field": "as_of"}
