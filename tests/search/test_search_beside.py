"""A hybrid search outside a transaction runs its vector retriever beside its keyword retriever, on
a connection of its own (memory_platform.db.beside); inside one, or with DATABASE_READERS_BESIDE 0,
one after the other on the request's connection. The answer is the same either way."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

QUESTIONS = ("how do staging deploys work", "who reboots the cluster", "lunch menu")


@pytest.fixture
def memories(make_memory: MemoryFactory) -> list[Memory]:
    return [
        make_memory(current_content="The staging cluster is rebooted every Sunday night.", importance=2),
        make_memory(current_content="Staging deploys need a green build and a second reviewer."),
        make_memory(current_content="The cafeteria serves vegetarian lunch on Wednesdays."),
        make_memory(current_content="Production deploys wait for the change advisory board on Thursdays."),
    ]


# The vector retriever's statement (memories.search.vector): nearest first, by the query's distance.
VECTOR_RETRIEVER = re.compile(r"ORDER BY \(?s\.embedding <=>")


def _vector_reads_here(acme: Tenant, query: str) -> tuple[list[Any], int]:
    """The hits of a hybrid search, and how many times the vector retriever read on this thread's connection."""
    with CaptureQueriesContext(connection) as captured:
        page = search(acme.agent, query=query, min_score=0)
    return hit_ids(page), sum(bool(VECTOR_RETRIEVER.search(q["sql"])) for q in captured.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_vectors_are_read_beside_with_the_same_answer(
    acme: Tenant, memories: list[Memory], settings: Any
) -> None:
    for question in QUESTIONS:
        settings.DATABASE_READERS_BESIDE = 0
        one_after_the_other, here = _vector_reads_here(acme, question)
        assert here == 1
        settings.DATABASE_READERS_BESIDE = 2
        beside, here = _vector_reads_here(acme, question)
        assert here == 0, "the vector retriever ran on another connection"
        assert beside == one_after_the_other and beside


def test_inside_a_transaction_the_vectors_are_read_on_its_connection(acme: Tenant, make_memory: MemoryFactory) -> None:
    with transaction.atomic():
        written = make_memory(current_content="Feature flags are removed two sprints after full rollout.")
        found, here = _vector_reads_here(acme, "when do we delete feature toggles")

    assert here == 1
    assert written.pk in found, "what the transaction wrote, which another connection would not see"


@pytest.mark.django_db(transaction=True)
def test_a_search_answers_when_the_connections_beside_it_were_cut(acme: Tenant, memories: list[Memory]) -> None:
    before, _ = _vector_reads_here(acme, QUESTIONS[0])
    with connection.cursor() as cursor:  # every other connection to this database, pooled ones included
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )

    try:
        for _ in range(3):
            after, _ = _vector_reads_here(acme, QUESTIONS[0])
            assert after == before
    finally:
        # The pool's idle connections were cut too: discarded now, so that neither this test's
        # teardown nor the next test on this worker is handed one.
        connection.pool.check()


@pytest.mark.django_db(transaction=True)
def test_with_every_pooled_connection_lent_the_search_reads_its_vectors_itself(
    acme: Tenant, memories: list[Memory]
) -> None:
    assert connection.settings_dict["OPTIONS"].get("pool"), "the tests run on the pool, as the platform does"
    pool = connection.pool
    lent = []
    try:
        while (stats := pool.get_stats())["pool_available"] or stats["pool_size"] < stats["pool_max"]:
            lent.append(pool.getconn(timeout=10))
        queued = pool.get_stats().get("requests_queued", 0)

        found, here = _vector_reads_here(acme, QUESTIONS[0])

        assert here == 1 and found
        assert pool.get_stats().get("requests_queued", 0) == queued, "no reader waited for a connection"
    finally:
        for lent_connection in lent:
            pool.putconn(lent_connection)
