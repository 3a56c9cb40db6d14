"""memory_batch_create writes plain new memories together (one insert each for memories, versions
and audit events), and everything else one by one, with the same results as memory_create."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import batch, batch_pipeline
from memories.batch import memory_batch_create
from memories.embeddings import get_provider
from memories.models import Memory, MemoryVersion
from memories.services import WRITABLE_FIELDS, memory_create
from memories.versions import memory_snapshot
from memory_platform.exceptions import Conflict, PermissionDenied
from organizations.models import AuditEvent, Repository
from tests.conftest import Tenant, spelled_number


def _entry(text: str, **fields: Any) -> dict[str, Any]:
    return {"scope_type": "organization", "memory_type": "fact", "current_content": text, **fields}


def _writes(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith(("INSERT", "COPY"))]


def test_each_memory_gets_its_version_and_audit_event(acme: Tenant) -> None:
    entries = [_entry(f"Service {n} deploys on Tuesdays.", tags=["deploy"], importance=n + 1) for n in range(5)]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    memories = [r.memory for r in results]
    assert all(r.ok for r in results) and all(m is not None for m in memories)
    for n, memory in enumerate(memories):
        assert memory is not None
        stored = Memory.objects.select_related("organization", "repository", "owner").get(pk=memory.pk)
        assert stored.current_content == f"Service {n} deploys on Tuesdays."
        assert stored.importance == n + 1 and stored.version == 1
        assert stored.created_by_token == acme.agent.token
        assert stored.embedding is not None and stored.embedding_status == "ready"
        version = MemoryVersion.objects.get(memory=stored)
        assert (version.version, version.change, version.reason) == (1, "create", "")
        assert version.changed_fields == list(WRITABLE_FIELDS)
        assert version.snapshot == memory_snapshot(stored)
        assert version.actor == acme.agent.label and version.token == acme.agent.token
        event = AuditEvent.objects.get(target_type="memory", target_id=str(stored.pk))
        assert event.action == "memory.create" and event.organization == acme.organization
        assert event.actor == acme.agent.label and event.token == acme.agent.token
        assert event.data == {"version": 1, "fields": list(WRITABLE_FIELDS)}
    # Created in entry order.
    created = [m.created_at for m in memories if m is not None]
    assert created == sorted(created)


def test_the_inserts_are_one_per_table_per_pipeline_chunk(acme: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    def inserts(count: int, start: int) -> int:
        # Spelt, not numbered: texts alike but for a number are contradiction candidates (a proposal each).
        entries = [_entry(f"Fact {spelled_number(n)} about the pipeline.") for n in range(start, start + count)]
        with CaptureQueriesContext(connection) as captured:
            assert all(r.ok for r in memory_batch_create(principal=acme.agent, entries=entries))
        return len(_writes(captured))

    assert inserts(2, 0) == 3  # memories, versions, audit events: one COPY each
    # While the model is slower than the writes, a large batch is written in chunks, each embedded
    # while the one before it is written: a small first and last chunk (8) and middle ones of up to 32.
    monkeypatch.setattr(batch_pipeline.Stage, "done", lambda stage: False)
    assert inserts(40, 100) == 3 * 3  # 8, 24, 8
    assert inserts(120, 200) == 3 * 6  # 8, 4 x 26, 8
    # The chunks whose vectors are there by the time the one before them is written go with it.
    monkeypatch.setattr(batch_pipeline.Stage, "done", lambda stage: True)
    assert inserts(120, 300) == 3


def test_a_large_batch_written_longest_first_is_created_in_entry_order(acme: Tenant) -> None:
    # Shortest first: the pipeline writes them the other way round.
    texts = [f"Fact {n}: the pipeline" + " and its stages" * n + "." for n in range(40)]

    results = memory_batch_create(principal=acme.agent, entries=[_entry(text) for text in texts])

    stored = {m.pk: m for m in Memory.objects.filter(organization=acme.organization)}
    memories = [stored[r.memory.pk] for r in results if r.memory is not None]
    assert [m.current_content for m in memories] == texts
    created = [m.created_at for m in memories]
    assert created == sorted(created) and len(set(created)) == len(created)
    newest_first = list(Memory.objects.filter(organization=acme.organization).order_by("-created_at"))
    assert [m.current_content for m in newest_first] == texts[::-1]


@pytest.mark.real_embedder  # the model's own spread-out path for large calls
def test_a_large_batch_gives_each_memory_its_own_vector(acme: Tenant) -> None:
    texts = [f"Team {n} owns the {topic} service." for n, topic in enumerate(["billing", "search", "auth"] * 12)]
    extra = [_entry("An upsert.", id=str(uuid.uuid4())), _entry("A keyed one.", idempotency_key="k")]
    results = memory_batch_create(principal=acme.agent, entries=[*[_entry(t) for t in texts], *extra])

    assert all(r.ok for r in results)
    provider = get_provider()
    for result, text in zip(results, [*texts, "An upsert.", "A keyed one."], strict=True):
        assert result.memory is not None
        stored = Memory.objects.get(pk=result.memory.pk)
        assert stored.current_content == text
        assert stored.embedding is not None
        assert float(np.dot(stored.embedding, provider.embed_one(text))) > 0.999


def test_a_new_repository_is_created_once_for_the_batch(acme: Tenant) -> None:
    entries = [_entry(f"Web fact {n}.", scope_type="repository", repository="web") for n in range(4)]
    entries[2]["create_repository"] = True  # one entry asking is enough for the batch

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert all(r.ok for r in results)
    web = Repository.objects.get(organization=acme.organization, slug="web")
    assert Memory.objects.filter(repository=web).count() == 4
    assert AuditEvent.objects.filter(action="repository.create", target_id=str(web.pk)).count() == 1


def test_an_unknown_repository_fails_the_entries_naming_it(acme: Tenant) -> None:
    entries = [
        _entry("Web fact.", scope_type="repository", repository="web"),
        _entry("Org fact."),
        _entry("Another web fact.", scope_type="repository", repository="web"),
    ]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert [r.ok for r in results] == [False, True, False]
    assert "repository 'web' does not exist in acme" in results[0].error.message  # type: ignore[union-attr]
    assert not Repository.objects.filter(organization=acme.organization).exists()


def _all_one_by_one(principal: Any, parsed: Any, results: Any) -> tuple[list[Any], list[int]]:
    return [], sorted(parsed)


@pytest.mark.parametrize("path", ["bulk", "one-by-one"])
def test_a_mixed_batch_answers_each_entry_as_memory_create_would(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    if path == "one-by-one":  # every entry through memory_create: the results must not differ
        monkeypatch.setattr(batch, "_plan_batch", _all_one_by_one)
    existing, _ = memory_create(principal=acme.agent, data=_entry("The cache is Redis 6."))
    retried, _ = memory_create(principal=acme.agent, data=_entry("Deploys are blue-green."), idempotency_key="k-1")
    new_id = uuid.uuid4()
    entries: list[Any] = [
        _entry("Plain new memory."),
        _entry("The cache is Redis 7.", id=str(existing.pk)),  # upsert: an update
        _entry("Deploys are blue-green."),  # content of a keyed memory, no key: a new one
        _entry("Deploys are blue-green.", idempotency_key="k-1"),  # a retry
        _entry("Something else.", idempotency_key="k-1"),  # the key for other content
        _entry("Brand new key.", idempotency_key="k-2"),
        _entry("Brand new key.", idempotency_key="k-2"),  # the same entry twice: one memory
        _entry("Chosen id.", id=str(new_id)),
        _entry("Chosen id, again.", id=str(new_id)),  # the second upserts the first
        _entry("Agents cannot verify.", status="verified"),
        "not a memory",
    ]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert [r.index for r in results] == list(range(len(entries)))
    assert [r.ok for r in results] == [True, True, True, True, False, True, True, True, True, False, False]
    memories = [r.memory for r in results]
    assert memories[1] is not None and memories[1].pk == existing.pk
    existing.refresh_from_db()
    assert existing.current_content == "The cache is Redis 7." and existing.version == 2
    assert memories[2] is not None and memories[2].pk != retried.pk
    assert memories[3] is not None and memories[3].pk == retried.pk
    assert isinstance(results[4].error, Conflict)
    assert memories[5] is not None and memories[6] is not None and memories[5].pk == memories[6].pk
    assert memories[7] is not None and memories[7].pk == new_id
    chosen = Memory.objects.get(pk=new_id)
    assert chosen.current_content == "Chosen id, again." and chosen.version == 2
    assert isinstance(results[9].error, PermissionDenied)
    assert Memory.objects.filter(organization=acme.organization).count() == 6
    assert MemoryVersion.objects.filter(memory__organization=acme.organization).count() == 8


def test_an_id_of_another_organization_is_refused_alone(acme: Tenant, globex: Tenant) -> None:
    theirs, _ = memory_create(principal=globex.agent, data=_entry("Globex secret."))

    results = memory_batch_create(
        principal=acme.agent, entries=[_entry("Mine."), _entry("Taking theirs.", id=str(theirs.pk))]
    )

    assert [r.ok for r in results] == [True, False]
    assert isinstance(results[1].error, Conflict)
    assert Memory.objects.get(pk=theirs.pk).current_content == "Globex secret."


def test_a_predictable_id_is_refused_alone(acme: Tenant) -> None:
    named = uuid.uuid5(uuid.NAMESPACE_URL, "Mine too.")

    results = memory_batch_create(
        principal=acme.agent, entries=[_entry("Mine."), _entry("Mine too.", id=str(named)), _entry("Also mine.")]
    )

    assert [r.ok for r in results] == [True, False, True]
    assert "must be random" in results[1].error.message  # type: ignore[union-attr]
    assert not Memory.objects.filter(pk=named).exists()
    assert Memory.objects.filter(organization=acme.organization).count() == 2


@pytest.mark.parametrize("same_content", [True, False], ids=["retry", "other-content"])
def test_a_key_taken_concurrently_falls_back_to_one_by_one(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch, same_content: bool
) -> None:
    """Another request commits the same idempotency key between the batch's check and its insert."""
    plan = batch._plan_batch
    taken: list[Memory] = []

    def plan_then_race(*args: Any, **kwargs: Any) -> Any:
        planned = plan(*args, **kwargs)
        text = "Raced entry." if same_content else "Another request's memory."
        taken.append(memory_create(principal=acme.agent, data=_entry(text), idempotency_key="race")[0])
        return planned

    monkeypatch.setattr(batch, "_plan_batch", plan_then_race)
    entries = [_entry("Before."), _entry("Raced entry.", idempotency_key="race"), _entry("After.")]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert [r.ok for r in results] == [True, same_content, True]
    if same_content:
        assert results[1].memory is not None and results[1].memory.pk == taken[0].pk
    else:
        assert isinstance(results[1].error, Conflict)
    contents = set(Memory.objects.filter(organization=acme.organization).values_list("current_content", flat=True))
    assert contents == {"Before.", "After.", taken[0].current_content}
    # Nothing of the failed bulk insert is left: one version and one audit event per memory.
    for memory in Memory.objects.filter(organization=acme.organization):
        assert MemoryVersion.objects.filter(memory=memory).count() == 1
        assert AuditEvent.objects.filter(target_type="memory", target_id=str(memory.pk)).count() == 1


@pytest.mark.django_db(transaction=True)
def test_no_transaction_is_open_while_the_batch_waits_for_the_model(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk is written in its own transaction: none is held while the next chunk is embedded."""
    embed_later = batch.embed_later
    in_transaction: list[bool] = []

    class Watched:
        def __init__(self, texts: Any, indices: list[int]) -> None:
            self.stage = embed_later(texts, indices)

        def done(self) -> bool:
            return False  # the model is slower than the writes: each chunk is waited for

        def __call__(self) -> Any:
            in_transaction.append(connection.in_atomic_block)
            return self.stage()

    monkeypatch.setattr(batch, "embed_later", Watched)
    entries = [_entry(f"Runbook step {spelled_number(n)} is checked twice.") for n in range(40)]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert all(r.ok for r in results)
    assert len(in_transaction) >= 3  # several chunks, and the (empty) one-by-one stage
    assert not any(in_transaction)
    assert Memory.objects.filter(organization=acme.organization).count() == 40
