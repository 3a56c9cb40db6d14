"""Searching records access: counts and last-accessed times, written as one upsert for many memories
into memories_memoryaccess (not into the memories' own rows), and read back through the memory."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import access
from memories.models import Memory, MemoryAccess
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search


def test_search_hits_are_counted_after_a_flush(acme: Tenant, make_memory: MemoryFactory) -> None:
    found = [make_memory(current_content=f"Rollout step {n} is checked by hand.") for n in range(3)]
    other = make_memory(current_content="The cafeteria serves vegetarian lunch on Wednesdays.")
    access.flush_access()  # a fresh tally, so no time-based flush falls inside the two searches

    search(acme.agent, query="rollout step", mode="keyword")
    search(acme.agent, query="rollout step", mode="keyword")
    # Nothing is written per read: the tally waits for a flush.
    assert not MemoryAccess.objects.filter(memory__in=found).exists()
    assert {Memory.objects.get(pk=m.pk).access_count for m in found} == {0}
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
    # One statement (inside the test's transaction, in a savepoint of its own).
    statements = [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 1
    assert statements[0].lstrip().startswith("INSERT INTO memories_memoryaccess")
    assert "UPDATE memories_memory " not in statements[0]
    assert MemoryAccess.objects.filter(memory__organization=acme.organization, access_count=1).count() == 30


def test_a_flush_with_nothing_read_writes_nothing(db: object) -> None:
    with CaptureQueriesContext(connection) as captured:
        assert access.flush_access() == 0

    assert captured.captured_queries == []


def test_counts_accumulate_over_flushes(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Rollout step 1 is checked by hand.")
    access.flush_access()

    search(acme.agent, query="rollout", mode="keyword")
    access.flush_access()
    first = Memory.objects.get(pk=memory.pk).last_accessed_at
    search(acme.agent, query="rollout", mode="keyword")
    search(acme.agent, query="rollout", mode="keyword")
    access.flush_access()

    reloaded = Memory.objects.select_related("access").get(pk=memory.pk)
    assert reloaded.access_count == 3
    assert first is not None and reloaded.last_accessed_at is not None
    assert reloaded.last_accessed_at >= first


def test_a_flush_does_not_touch_the_memory_rows(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Rollout step 1 is checked by hand.")
    access.flush_access()
    before = Memory.objects.filter(pk=memory.pk).values_list("version", "updated_at").get()

    search(acme.agent, query="rollout", mode="keyword")
    access.flush_access()

    assert Memory.objects.filter(pk=memory.pk).values_list("version", "updated_at").get() == before
    assert Memory.objects.get(pk=memory.pk).access_count == 1


def test_a_memory_gone_before_the_flush_is_skipped(acme: Tenant, make_memory: MemoryFactory) -> None:
    kept = make_memory(current_content="Rollout step 1 is checked by hand.")
    gone = make_memory(current_content="Rollout step 2 is checked by hand.")
    access.flush_access()
    search(acme.agent, query="rollout", mode="keyword")
    Memory.objects.filter(pk=gone.pk).delete()  # a hard delete (an organization removed, say)

    assert access.flush_access() == 2
    assert Memory.objects.get(pk=kept.pk).access_count == 1
    assert not MemoryAccess.objects.filter(memory_id=gone.pk).exists()


def test_a_refused_flush_does_not_break_the_callers_transaction(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = make_memory(current_content="Rollout step 1 is checked by hand.")
    access.flush_access()
    search(acme.agent, query="rollout", mode="keyword")
    monkeypatch.setattr(access, "_UPSERT", "INSERT INTO no_such_table VALUES (%s, %s, %s)")

    assert access.flush_access(log_errors=False) == 0
    # The surrounding transaction (the test's) still works.
    assert Memory.objects.get(pk=memory.pk).access_count == 0


@pytest.fixture
def flushed_in_background(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[queue.SimpleQueue[str]]:
    """Flushes in the background, due after three memories; each flush's outcome, with the name of
    the thread that ran it, put on the queue returned."""
    settings.MEMORY_ACCESS_FLUSH_IN_BACKGROUND = True
    monkeypatch.setattr(access, "FLUSH_SIZE", 3)
    outcomes: queue.SimpleQueue[str] = queue.SimpleQueue()
    flush = access.flush_access

    def observed(**kwargs: Any) -> int:
        try:
            written = flush(**kwargs)
        except Exception as error:
            outcomes.put(f"{threading.current_thread().name}: {error}")
            raise
        outcomes.put(f"{threading.current_thread().name}: {written}")
        return written

    access.flush_access()  # a fresh tally
    monkeypatch.setattr(access, "flush_access", observed)
    yield outcomes
    monkeypatch.undo()
    access.flush_access()  # nothing of this test's left for the next


@pytest.mark.django_db(transaction=True)  # the flushing thread's own connection sees committed rows only
def test_a_flush_that_falls_due_is_written_by_a_thread_of_its_own(
    acme: Tenant, make_memory: MemoryFactory, flushed_in_background: queue.SimpleQueue[str]
) -> None:
    found = [make_memory(current_content=f"Rollout step {n} is checked by hand.") for n in range(5)]

    with CaptureQueriesContext(connection) as captured:
        page = search(acme.agent, query="rollout step", mode="keyword")

    assert len(page.hits) == 5  # five memories read: the tally is due
    assert not [q for q in captured.captured_queries if "memories_memoryaccess" in q["sql"]]
    assert flushed_in_background.get(timeout=30) == "memory-access-flush: 5"
    assert {Memory.objects.get(pk=m.pk).access_count for m in found} == {1}


@pytest.mark.django_db(transaction=True)
def test_the_flushing_thread_outlives_a_flush_that_fails(
    acme: Tenant,
    make_memory: MemoryFactory,
    flushed_in_background: queue.SimpleQueue[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    memories = [make_memory(current_content=f"Rollout step {n} is checked by hand.") for n in range(3)]
    observed = access.flush_access
    failures = iter([RuntimeError("the first flush fails")])

    def failing_once(**kwargs: Any) -> int:
        error = next(failures, None)
        if error is not None:
            flushed_in_background.put(f"{threading.current_thread().name}: {error}")
            raise error
        return observed(**kwargs)

    monkeypatch.setattr(access, "flush_access", failing_once)
    search(acme.agent, query="rollout step", mode="keyword")
    assert flushed_in_background.get(timeout=30) == "memory-access-flush: the first flush fails"
    search(acme.agent, query="rollout step", mode="keyword")

    # The same thread wrote the next flush, the first one's tally with it.
    assert flushed_in_background.get(timeout=30) == "memory-access-flush: 3"
    assert {Memory.objects.get(pk=m.pk).access_count for m in memories} == {2}
    assert "the access tally could not be written" in caplog.text
