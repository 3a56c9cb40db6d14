"""The retrievers read created_at as whole microseconds (memories.search.caches.created_micros):
candidates keep their memory's moment exactly, before 1970 and to the last microsecond, as equal
scores are ordered by it and cursors carry it."""

from __future__ import annotations

from datetime import UTC, datetime

from memories.models import Memory
from memories.search import SearchParams
from memories.search.pipeline import memory_search_candidates
from tests.conftest import MemoryFactory, Tenant

MOMENTS = [
    datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2026, 3, 14, 15, 9, 26, 535_897, tzinfo=UTC),
    datetime(2099, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2026, 3, 14, 15, 9, 26, 535_898, tzinfo=UTC),
]


def test_candidates_keep_created_at_to_the_microsecond(acme: Tenant, make_memory: MemoryFactory) -> None:
    expected = {}
    for n, moment in enumerate(MOMENTS):
        memory = make_memory(current_content=f"The backup job {n} copies the ledger to cold storage.")
        Memory.objects.filter(pk=memory.pk).update(created_at=moment)
        expected[memory.pk] = moment

    candidates, retrieved = memory_search_candidates(
        acme.agent, SearchParams.build(query="backup job ledger cold storage", limit=10)
    )

    for found in (candidates, retrieved.vector_hits, retrieved.keyword_hits):
        assert {c.pk: c.created_at for c in found} == expected
