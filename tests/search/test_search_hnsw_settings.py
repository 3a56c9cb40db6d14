"""A search on the HNSW index raises ef_search and turns on the iterative scan for its own query
only: the settings go with the query in one round trip, and the connection keeps its own."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.batch import memory_batch_create
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


@pytest.mark.django_db(transaction=True)
def test_the_hnsw_settings_hold_for_the_search_query_alone(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 0  # every scope goes through the HNSW index
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"Runbook step {n}: restart the queue.",
        }
        for n in range(COUNT)
    ]
    assert all(result.ok for result in memory_batch_create(principal=acme.agent, entries=entries))
    before = _hnsw_settings()

    with _index_scans_only(), CaptureQueriesContext(connection) as captured:
        page = search(acme.agent, query="how do I restart the queue?", mode="vector", limit=60, min_score=0)

    # Without its settings the scan would have stopped at ef_search rows (pgvector's default: 40).
    assert len(page.hits) == 60
    vector_queries = [query["sql"] for query in captured.captured_queries if "<=>" in query["sql"]]
    assert len(vector_queries) == 1
    assert vector_queries[0].startswith("SELECT set_config(")
    assert _hnsw_settings() == before
