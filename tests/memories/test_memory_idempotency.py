"""An idempotency key makes a retried create return the first memory, also under concurrency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from memories.models import Memory, MemoryVersion
from memories.services import memory_create
from memory_platform.exceptions import Conflict, ValidationError
from organizations.models import AuditEvent
from organizations.principal import Principal
from tests.conftest import Tenant

FACT = {
    "scope_type": "organization",
    "memory_type": "fact",
    "current_content": "The staging database is refreshed every Monday.",
    "metadata": {"team": "data", "env": "staging"},
    "tags": ["staging"],
}


def test_same_key_and_content_returns_the_same_memory(acme: Tenant) -> None:
    first, _ = memory_create(principal=acme.agent, data=FACT, idempotency_key="req-1")
    # A retry may serialise the same content differently.
    retry = {**FACT, "metadata": {"env": "staging", "team": "data"}, "tags": ["Staging"]}
    second, _ = memory_create(principal=acme.agent, data=retry, idempotency_key="req-1")

    assert second.id == first.id
    assert Memory.objects.count() == 1
    assert MemoryVersion.objects.count() == 1
    assert AuditEvent.objects.filter(action="memory.create").count() == 1


def test_same_key_with_different_content_is_a_conflict(acme: Tenant) -> None:
    first, _ = memory_create(principal=acme.agent, data=FACT, idempotency_key="req-1")

    with pytest.raises(Conflict, match="already used for different content") as exc:
        memory_create(
            principal=acme.agent,
            data={**FACT, "current_content": "The staging database is refreshed daily."},
            idempotency_key="req-1",
        )
    assert exc.value.details == {"id": str(first.id)}
    assert list(Memory.objects.values_list("current_content", flat=True)) == [FACT["current_content"]]


def test_other_fields_count_as_content(acme: Tenant) -> None:
    memory_create(principal=acme.agent, data=FACT, idempotency_key="req-1")
    with pytest.raises(Conflict):
        memory_create(principal=acme.agent, data={**FACT, "importance": 8}, idempotency_key="req-1")
    assert Memory.objects.count() == 1


def test_without_a_key_each_create_is_new(acme: Tenant) -> None:
    memory_create(principal=acme.agent, data=FACT)
    memory_create(principal=acme.agent, data=FACT)
    assert Memory.objects.count() == 2


def test_keys_are_per_organization(acme: Tenant, globex: Tenant) -> None:
    ours, _ = memory_create(principal=acme.agent, data=FACT, idempotency_key="req-1")
    theirs, _ = memory_create(
        principal=globex.agent,
        data={**FACT, "current_content": "Globex refreshes on Sundays."},
        idempotency_key="req-1",
    )

    assert theirs.id != ours.id
    assert theirs.organization == globex.organization
    assert Memory.objects.get(pk=ours.id).current_content == FACT["current_content"]
    # The same content under the same key is still two memories in two organizations.
    again, _ = memory_create(principal=globex.agent, data=FACT, idempotency_key="req-2")
    assert again.organization == globex.organization
    assert Memory.objects.filter(organization=acme.organization).count() == 1


def test_key_of_someone_elses_private_memory_does_not_reveal_it(acme: Tenant) -> None:
    private = {"scope_type": "user", "memory_type": "preference", "current_content": "My salary is 90k."}
    mine, _ = memory_create(principal=acme.person, data=private, idempotency_key="note-1")

    # The agent token replays the person's request: it must not get the person's memory back.
    with pytest.raises(Conflict) as exc:
        memory_create(principal=acme.agent, data=private, idempotency_key="note-1")
    assert str(mine.id) not in exc.value.message
    assert not exc.value.details
    with pytest.raises(Conflict) as exc:
        memory_create(principal=acme.agent, data=FACT, idempotency_key="note-1")
    assert str(mine.id) not in exc.value.message
    assert not exc.value.details
    # The owner's own retry still gets the memory back.
    assert memory_create(principal=acme.person, data=private, idempotency_key="note-1")[0].id == mine.id
    assert Memory.objects.count() == 1


@pytest.mark.parametrize("key", ["", "   ", "k" * 201, 17])
def test_malformed_key_is_rejected(acme: Tenant, key: Any) -> None:
    with pytest.raises(ValidationError, match="idempotency_key"):
        memory_create(principal=acme.agent, data=FACT, idempotency_key=key)
    assert not Memory.objects.exists()


# --- races -------------------------------------------------------------------------------------

THREADS = 8


def _race(call: Callable[[int], Memory]) -> list[Memory | BaseException]:
    """Run ``call(i)`` in THREADS threads, each on its own connection, released at the same moment."""
    barrier = threading.Barrier(THREADS)
    results: list[Memory | BaseException | None] = [None] * THREADS

    def worker(index: int) -> None:
        try:
            # Connect before the barrier so that connecting does not spread the threads out.
            connection.ensure_connection()
            barrier.wait(timeout=30)
            results[index] = call(index)
        except BaseException as exc:
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert all(result is not None for result in results)
    return results  # type: ignore[return-value]


def _create(principal: Principal, data: dict[str, Any], key: str) -> Memory:
    return memory_create(principal=principal, data=data, idempotency_key=key)[0]


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_create_one_memory(acme: Tenant) -> None:
    results = _race(lambda _: _create(acme.agent, FACT, "race-same"))

    errors = [r for r in results if isinstance(r, BaseException)]
    assert errors == []
    ids = {r.id for r in results if isinstance(r, Memory)}
    assert len(ids) == 1
    assert Memory.objects.filter(organization=acme.organization, idempotency_key="race-same").count() == 1
    assert Memory.objects.count() == 1
    assert MemoryVersion.objects.filter(memory_id=ids.pop()).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_different_contents_create_one_memory_and_conflicts(acme: Tenant) -> None:
    def create(index: int) -> Memory:
        return _create(acme.agent, {**FACT, "current_content": f"Variant {index} of the refresh rule."}, "race-diff")

    results = _race(create)

    winners = [r for r in results if isinstance(r, Memory)]
    losers = [r for r in results if not isinstance(r, Memory)]
    assert len(winners) == 1
    assert len(losers) == THREADS - 1
    assert all(isinstance(r, Conflict) for r in losers), losers
    stored = Memory.objects.get()
    assert stored.id == winners[0].id
    assert stored.current_content == winners[0].current_content
