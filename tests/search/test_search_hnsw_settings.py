"""A search on the HNSW index walks it with the iterative scan and at least as many candidates as it
asks for. Each connection has those settings for its session (SEARCH_HNSW_EF_SEARCH candidates), so
a search sends its query alone; one that asks for more rows, or a connection without them
(DATABASE_PREPARED_STATEMENTS off, as behind a pooler in transaction mode), sends the settings with
the query in one round trip, for that query only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from memories.batch import memory_batch_create
from memories.search import tenant_indexes
from memories.search.vector import half_margin
from tests.conftest import Tenant
from tests.search.conftest import search

COUNT = 80


def _hnsw_settings() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')")
        ef_search, iterative_scan = cursor.fetchone()
    return ef_search, iterative_scan


@contextlib.contextmanager
def _index_scans_only() -> Iterator[None]:
    """The planner reads a table this small whole, not through the HNSW index, unless it may not."""
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_bitmapscan = off")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET enable_bitmapscan")


def _fill(acme: Tenant) -> None:
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"Runbook step {n}: restart the queue.",
        }
        for n in range(COUNT)
    ]
    assert all(result.ok for result in memory_batch_create(principal=acme.agent, entries=entries))
    # Its own HNSW graph (memories.search.tenant_indexes), built concurrently as the worker builds it.
    assert tenant_indexes.build(acme.organization.pk) == list(tenant_indexes.index_names(acme.organization.pk))


def _new_connection() -> None:
    """The next statement runs on a connection opened (and configured) now."""
    connection.close()
    pool = getattr(connection, "pool", None)
    if pool is not None:
        connection.close_pool()


@pytest.mark.django_db(transaction=True)
def test_each_connection_walks_hnsw_with_the_iterative_scan_and_the_configured_candidates(
    acme: Tenant, settings: Any
) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 0  # every scope goes through the HNSW index
    settings.SEARCH_HNSW_EF_SEARCH = 60
    _new_connection()
    _fill(acme)
    assert _hnsw_settings() == ("60", "relaxed_order")

    with _index_scans_only(), CaptureQueriesContext(connection) as captured:
        page = search(acme.agent, query="how do I restart the queue?", mode="vector", limit=9, min_score=0)

    # The query asks for 50 rows (SEARCH_CANDIDATES) and the few more a walk of a half-precision
    # graph reads (60), no more than the session's 60: it goes alone.
    assert len(page.hits) == 9
    [vector_query] = [
        query["sql"] for query in captured.captured_queries if "ORDER BY s.embedding::halfvec" in query["sql"]
    ]
    assert 50 + half_margin(50) == 60
    assert "set_config" not in vector_query and vector_query.count("LIMIT 60)") == 2  # acme's rows, others' shared
    assert _hnsw_settings() == ("60", "relaxed_order")


@pytest.mark.django_db(transaction=True)
def test_without_session_state_the_search_sends_its_settings(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 0
    with override_settings(DATABASE_PREPARED_STATEMENTS=False):
        _new_connection()
        _fill(acme)
        before = _hnsw_settings()
        assert before[1] == "off"  # pgvector's defaults: nothing was set for the session

        with _index_scans_only(), CaptureQueriesContext(connection) as captured:
            page = search(acme.agent, query="how do I restart the queue?", mode="vector", limit=9, min_score=0)

        assert len(page.hits) == 9
        statements = [query["sql"] for query in captured.captured_queries]
        [vector_query] = [sql for sql in statements if "<=>" in sql and "set_config" in sql]
        assert vector_query.startswith("SELECT set_config(")
        assert _hnsw_settings() == before
    _new_connection()


@pytest.mark.django_db(transaction=True)
def test_the_hnsw_settings_hold_for_the_search_query_alone(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 0  # every scope goes through the HNSW index
    _fill(acme)
    before = _hnsw_settings()

    with _index_scans_only(), CaptureQueriesContext(connection) as captured:
        page = search(acme.agent, query="how do I restart the queue?", mode="vector", limit=60, min_score=0)

    # 300 rows asked for, more than the session's ef_search: the query raises it for itself.
    assert len(page.hits) == 60
    vector_queries = [query["sql"] for query in captured.captured_queries if "<=>" in query["sql"]]
    assert len(vector_queries) == 1
    assert vector_queries[0].startswith("SELECT set_config(")
    assert _hnsw_settings() == before
