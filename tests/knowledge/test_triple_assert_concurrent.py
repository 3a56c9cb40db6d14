"""Concurrent assertions of different objects for one (subject, predicate) leave one open fact.

A real race: eight threads, each on its own database connection, released together. Without the
advisory lock in ``triple_assert`` every thread sees no open fact (or the same one) and each
leaves its own fact open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from knowledge.models import Triple
from knowledge.selectors import triple_query
from knowledge.services import entity_resolve, triple_assert
from tests.conftest import Tenant
from tests.knowledge.conftest import at

THREADS = 8

pytestmark = pytest.mark.django_db(transaction=True)


def _race(work: Callable[[int], None]) -> list[BaseException]:
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            work(n)
        except BaseException as error:  # reported by the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    return errors


def _open_facts(tenant: Tenant) -> list[Triple]:
    return list(
        Triple.objects.filter(
            organization=tenant.organization, predicate="works_on", expired_at__isnull=True, valid_to__isnull=True
        )
    )


@pytest.mark.parametrize("already_open", [False, True], ids=["no-open-fact", "replacing-an-open-fact"])
def test_concurrent_asserts_leave_exactly_one_open_fact(acme: Tenant, already_open: bool) -> None:
    # The subject exists beforehand, so the only thing the threads contend for is the open fact
    # (creating "Alice" concurrently would serialise them on the alias' unique index instead).
    entity_resolve(principal=acme.agent, name="Alice")
    if already_open:
        triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))

    errors = _race(
        lambda n: triple_assert(
            principal=acme.agent, subject="Alice", predicate="works_on", object=f"Project {n}", valid_from=at(6)
        )[0]
    )

    assert errors == []
    open_facts = _open_facts(acme)
    assert len(open_facts) == 1, [str(t) for t in open_facts]
    current = triple_query(acme.reader, subject="Alice")[1]
    assert [t.pk for t in current] == [open_facts[0].pk]
    # Every assertion was recorded; each was replaced by the next, none lost from the history.
    assert Triple.objects.filter(object__name__startswith="Project").count() == THREADS
    assert Triple.objects.filter(expired_at__isnull=True, valid_to__isnull=True).count() == 1


def test_concurrent_asserts_of_different_start_times_build_one_timeline(acme: Tenant) -> None:
    entity_resolve(principal=acme.agent, name="Alice")

    # Thread n says Alice worked on Project n from June n+1: whatever order they commit in, the
    # result is one fact per day and the latest one open.
    errors = _race(
        lambda n: triple_assert(
            principal=acme.agent, subject="Alice", predicate="works_on", object=f"Project {n}", valid_from=at(6, n + 1)
        )[0]
    )

    assert errors == []
    assert [str(t.object) for t in _open_facts(acme)] == [f"Project {THREADS - 1}"]
    for n in range(THREADS):
        for moment in (at(6, n + 1), at(6, n + 1, 23)):
            assert [t.object.name for t in triple_query(acme.reader, subject="Alice", as_of=moment)[1]] == [
                f"Project {n}"
            ], moment
