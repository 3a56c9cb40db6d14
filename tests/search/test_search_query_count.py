"""A search costs a fixed number of queries, however many hits it returns and whatever the caller
reads of them (organization, repository, owner): no N+1."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import access
from memories.batch import memory_batch_create
from memories.search import SearchPage, scope_sizes, term_statistics
from memories.search.words import forget_words
from tests.conftest import Tenant
from tests.search.conftest import search


def _write(tenant: Tenant, count: int, start: int = 0) -> None:
    entries = [
        {
            "scope_type": "repository" if n % 2 else "organization",
            "repository": "web" if n % 2 else None,
            "memory_type": "fact",
            "current_content": f"Rollout step {n} of the release checklist is signed by the team lead.",
            "create_repository": True,
        }
        for n in range(start, start + count)
    ]
    assert all(result.ok for result in memory_batch_create(principal=tenant.agent, entries=entries))


def _touch(page: SearchPage) -> list[Any]:
    """What an interface reads to serialize a hit."""
    return [
        (hit.memory.organization.slug, hit.memory.repository and hit.memory.repository.slug, hit.memory.owner)
        for hit in page.hits
    ]


def _queries(tenant: Tenant, **values: Any) -> tuple[int, int]:
    term_statistics.clear()  # the same cache state for every measurement
    scope_sizes.clear()
    forget_words()
    with CaptureQueriesContext(connection) as captured:
        # min_score 0: every memory comes back, so "many" really is many.
        page = search(tenant.agent, limit=100, min_score=0, **values)
        _touch(page)
    return len(page.hits), len(captured.captured_queries)


# Hybrid: the organization's own words (read once a minute), scope size, the vector candidates (in a
# savepoint, for SET LOCAL), query lexemes, corpus and term statistics, keyword candidates, the
# ranking model's features, the unscored tail, the hits themselves.
@pytest.mark.parametrize(
    ("values", "bound"),
    [
        ({"query": "release checklist rollout", "mode": "hybrid"}, 12),
        ({"query": "release checklist rollout", "mode": "hybrid", "fusion": "rrf"}, 12),
        ({"query": "release checklist rollout", "mode": "vector"}, 6),
        ({"query": "release checklist rollout", "mode": "keyword"}, 6),
        ({"query": ""}, 1),
    ],
    ids=["hybrid", "rrf", "vector", "keyword", "browse"],
)
def test_query_count_does_not_grow_with_the_hits(acme: Tenant, values: dict[str, Any], bound: int) -> None:
    _write(acme, 3)
    few, few_queries = _queries(acme, **values)
    _write(acme, 40, start=3)
    many, many_queries = _queries(acme, **values)

    assert (few, many) == (3, 43)
    assert many_queries == few_queries <= bound


def test_a_search_writes_nothing(acme: Tenant) -> None:
    _write(acme, 5)
    access.flush_access()  # a fresh tally: no time-based flush falls inside the search

    with CaptureQueriesContext(connection) as captured:
        search(acme.agent, query="release checklist rollout")

    writes = [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith(("UPDATE", "INSERT"))]
    assert writes == []
