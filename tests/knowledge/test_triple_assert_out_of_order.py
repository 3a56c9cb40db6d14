"""A fact learned late about an earlier period does not end the fact that followed it."""

from __future__ import annotations

from knowledge.models import Triple
from knowledge.selectors import triple_query
from knowledge.services import triple_assert
from tests.conftest import Tenant
from tests.knowledge.conftest import at


def test_an_earlier_fact_asserted_later_ends_where_the_open_fact_begins(acme: Tenant) -> None:
    search, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6)
    )

    payments, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1)
    )

    def objects(**when: object) -> list[str]:
        return [t.object.name for t in triple_query(acme.agent, subject="Alice", **when)[1]]

    assert objects() == ["Search"]
    assert objects(as_of=at(3)) == ["Payments"]
    assert objects(as_of=at(6)) == ["Search"]
    assert (payments.valid_from, payments.valid_to) == (at(1), at(6))
    search.refresh_from_db()
    assert (search.valid_to, search.expired_at) == (None, None)


def test_restating_a_fact_of_the_past_changes_nothing(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))
    bounded = Triple.objects.get(object__name="Payments", expired_at__isnull=True)
    rows = Triple.objects.count()

    again, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1)
    )

    assert again.pk == bounded.pk
    assert Triple.objects.count() == rows
    assert [t.object.name for t in triple_query(acme.agent, subject="Alice", as_of=at(3))[1]] == ["Payments"]
    assert [t.object.name for t in triple_query(acme.agent, subject="Alice")[1]] == ["Search"]


def test_a_late_fact_ends_where_the_next_recorded_fact_begins(acme: Tenant) -> None:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(3))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))

    onboarding, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="works_on", object="Onboarding", valid_from=at(1)
    )

    assert (onboarding.valid_from, onboarding.valid_to) == (at(1), at(3))
    timeline = [
        [t.object.name for t in triple_query(acme.agent, subject="Alice", as_of=at(month))[1]] for month in (1, 3, 6)
    ]
    assert timeline == [["Onboarding"], ["Payments"], ["Search"]]
