"""In a small organization a query's words and the organization's word counts are read in one
statement, and say what the three statements of a large organization's path say."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.search.caches import term_statistics
from memories.search.keyword import QueryTerms
from tests.conftest import MemoryFactory, Tenant

QUERY = "O'Brien's rollback of C:\\deploy\\pipeline (production)"
NAMES = ("O'Brien", "Payments")


def _written(make_memory: MemoryFactory) -> None:
    make_memory(current_content="O'Brien owns the rollback runbook of the deploy pipeline.")
    make_memory(current_content="Production deploys go through the pipeline at C:\\deploy\\pipeline.")
    make_memory(current_content="Payments keeps amounts in cents.")


def test_one_statement_says_what_three_said(acme: Tenant, make_memory: MemoryFactory) -> None:
    _written(make_memory)
    organization = acme.organization.pk
    with CaptureQueriesContext(connection) as first:
        three = QueryTerms.of(organization, QUERY, NAMES)  # the organization's size not yet known
    assert term_statistics.known_small(organization)
    with CaptureQueriesContext(connection) as second:
        one = QueryTerms.of(organization, QUERY, NAMES)

    assert len(first.captured_queries) == 3
    assert len(second.captured_queries) == 1
    assert one == three
    assert one.total == 3 and one.frequencies["rollback"] == 1 and one.frequencies["pipelin"] == 2


def test_an_organization_grown_past_the_limit_is_counted_the_large_way(
    acme: Tenant, make_memory: MemoryFactory, settings: Any
) -> None:
    _written(make_memory)
    organization = acme.organization.pk
    QueryTerms.of(organization, QUERY)
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 2  # three memories are now past it

    QueryTerms.of(organization, QUERY)  # counted in one statement, and found large
    assert not term_statistics.known_small(organization)
    with CaptureQueriesContext(connection) as after:
        terms = QueryTerms.of(organization, QUERY)
    assert after.captured_queries, "the query's words are read"
    assert not any("m AS MATERIALIZED" in query["sql"] for query in after.captured_queries)
    assert terms.total == 3
