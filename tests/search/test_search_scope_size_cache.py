"""Whether a scope is small enough to scan exactly is counted once and remembered briefly per
organization; a write to the organization's memories that could change the answer makes the next
search count again (a new memory cannot make a large scope small, so a "large" answer survives it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.batch import memory_batch_create
from memories.decisions import memory_delete
from memories.search import scope_sizes
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import search


def _run(tenant: Tenant, query: str = "deployment pipeline") -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        search(tenant.agent, query=query, mode="vector")
    return [q["sql"] for q in captured.captured_queries]


def _counted(statements: list[str]) -> bool:
    return any("COUNT(*)" in sql.upper() for sql in statements)


def _hnsw(statements: list[str]) -> bool:
    """Whether the vector retriever walked the HNSW index: an exact scan orders by ``(distance) + 0``."""
    [retriever] = [sql for sql in statements if "ORDER BY s.embedding <=>" in sql or "ORDER BY (s.embedding <=>" in sql]
    return "ORDER BY s.embedding <=>" in retriever


def test_the_count_has_no_order_by(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory()
    counts = [sql for sql in _run(acme) if "COUNT(*)" in sql.upper()]
    assert len(counts) == 1
    assert "ORDER BY" not in counts[0].upper()  # the model's ordering would sort the whole scope


def test_the_answer_is_reused_until_the_organization_writes(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory()
    assert _counted(_run(acme))
    assert not _counted(_run(acme))
    assert not _counted(_run(acme, "another question"))  # the same scope, another query

    make_memory()
    assert _counted(_run(acme))


def test_a_delete_and_a_batch_forget_it_too(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    make_memory()
    _run(acme)
    memory_delete(principal=acme.agent, memory_id=memory.pk)
    assert _counted(_run(acme))
    memory_batch_create(
        principal=acme.agent,
        entries=[{"scope_type": "organization", "memory_type": "fact", "current_content": "Deploys are blue-green."}],
    )
    assert _counted(_run(acme))


def test_another_organizations_write_keeps_it(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    make_memory()
    _run(acme)
    make_memory(principal=globex.agent)
    assert not _counted(_run(acme))


def test_other_filters_are_counted_on_their_own(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory()
    _run(acme)
    with CaptureQueriesContext(connection) as captured:
        search(acme.agent, query="deployment pipeline", mode="vector", filters={"memory_type": "decision_log"})
    assert _counted([q["sql"] for q in captured.captured_queries])


def test_a_scope_that_grows_past_the_limit_moves_to_the_index(
    acme: Tenant, make_memory: MemoryFactory, settings: Any
) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 2
    make_memory()
    make_memory()
    assert not _hnsw(_run(acme))  # two rows: exact
    make_memory()
    assert _hnsw(_run(acme))  # three: the HNSW index, without waiting for the cache to expire


def test_a_large_scope_stays_large_through_new_memories(
    acme: Tenant, make_memory: MemoryFactory, settings: Any
) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 2
    memories = [make_memory() for _ in range(3)]
    assert _counted(_run(acme))
    make_memory()
    memory_batch_create(
        principal=acme.agent,
        entries=[{"scope_type": "organization", "memory_type": "fact", "current_content": "Deploys are blue-green."}],
    )
    statements = _run(acme)
    assert not _counted(statements)  # four, then five: still large, nothing to count
    assert _hnsw(statements)

    memory_delete(principal=acme.agent, memory_id=memories[0].pk)  # a delete may shrink it: count again
    assert _counted(_run(acme))


def test_an_expired_answer_is_counted_again(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_memory()
    _run(acme)
    monkeypatch.setattr(scope_sizes, "ttl_seconds", 0.0)
    assert _counted(_run(acme))
