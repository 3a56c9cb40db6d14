"""Searching records access: counts and last-accessed times, written as one UPDATE for many memories."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import access
from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search


def test_search_hits_are_counted_after_a_flush(acme: Tenant, make_memory: MemoryFactory) -> None:
    found = [make_memory(current_content=f"Rollout step {n} is checked by hand.") for n in range(3)]
    other = make_memory(current_content="The cafeteria serves vegetarian lunch on Wednesdays.")
    access.flush_access()  # a fresh tally, so no time-based flush falls inside the two searches

    search(acme.agent, query="rollout step", mode="keyword")
    search(acme.agent, query="rollout step", mode="keyword")
    # Nothing is written per read: the tally waits for a flush.
    assert set(Memory.objects.filter(pk__in=[m.pk for m in found]).values_list("access_count", flat=True)) == {0}
    access.flush_access()

    for memory in found:
        memory.refresh_from_db()
        assert memory.access_count == 2
        assert memory.last_accessed_at is not None
    other.refresh_from_db()
    assert other.access_count == 0 and other.last_accessed_at is None


def test_only_the_returned_page_counts_as_accessed(acme: Tenant, make_memory: MemoryFactory) -> None:
    memories = [make_memory(current_content=f"Rollout step {n} is checked by hand.") for n in range(5)]

    page = search(acme.agent, query="rollout", mode="keyword", limit=2)
    browsed = search(acme.agent, limit=1)
    access.flush_access()

    counts = {m.pk: m.access_count for m in Memory.objects.filter(pk__in=[m.pk for m in memories])}
    expected = {pk: 0 for pk in counts}
    for pk in [*hit_ids(page), *hit_ids(browsed)]:
        expected[pk] += 1
    assert counts == expected
    assert sum(counts.values()) == 3


def test_a_flush_is_one_statement_however_many_memories(acme: Tenant, make_memory: MemoryFactory) -> None:
    for n in range(30):
        make_memory(current_content=f"Rollout step {n} is checked by hand.")
    page = search(acme.agent, query="rollout", mode="keyword", limit=30)
    assert len(page.hits) == 30

    with CaptureQueriesContext(connection) as captured:
        written = access.flush_access()

    assert written == 30
    assert len(captured.captured_queries) == 1
    assert captured.captured_queries[0]["sql"].startswith("UPDATE memories_memory")
    assert Memory.objects.filter(organization=acme.organization, access_count=1).count() == 30


def test_a_flush_with_nothing_read_writes_nothing(db: object) -> None:
    with CaptureQueriesContext(connection) as captured:
        assert access.flush_access() == 0

    assert captured.captured_queries == []
