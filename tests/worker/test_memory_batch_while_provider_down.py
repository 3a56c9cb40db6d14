"""A batch written while the embedding provider is down stores every valid entry, pending, and
schedules their backfill; invalid entries are reported as usual."""

from __future__ import annotations

import pytest
from django.db import transaction

from memories.batch import memory_batch_create
from memories.embeddings import EmbeddingProvider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memories.tasks import memory_embed_pending
from tests.conftest import Tenant


@pytest.mark.django_db(transaction=True)
def test_every_valid_entry_is_stored_pending_and_backfilled(
    acme: Tenant,
    real_provider: EmbeddingProvider,
    provider_down: OpenAICompatibleProvider,
    backfills: list[list[str]],
) -> None:
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": "Invoices are issued monthly."},
        {"scope_type": "organization", "memory_type": "galaxy", "current_content": "Not a memory type."},
        {"scope_type": "organization", "memory_type": "decision_log", "current_content": "We chose Postgres."},
        {"scope_type": "organization", "memory_type": "convention", "current_content": "Branches use kebab-case."},
    ]

    with transaction.atomic():
        results = memory_batch_create(principal=acme.agent, entries=entries)

    assert [r.ok for r in results] == [True, False, True, True]
    created = {str(r.memory.pk) for r in results if r.memory is not None}
    stored = Memory.objects.filter(organization=acme.organization)
    assert {str(pk) for pk in stored.values_list("pk", flat=True)} == created
    assert set(stored.values_list("embedding_status", flat=True)) == {EmbeddingStatus.PENDING}
    assert not stored.filter(embedding__isnull=False).exists()
    assert {memory_id for batch in backfills for memory_id in batch} == created

    reset_provider(real_provider)
    for batch in backfills:
        memory_embed_pending.apply(args=[batch])

    assert set(stored.values_list("embedding_status", flat=True)) == {EmbeddingStatus.READY}
    assert set(stored.values_list("embedding_model", flat=True)) == {real_provider.name}
    assert not stored.filter(embedding__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_a_large_batch_is_stored_pending_and_backfilled_too(
    acme: Tenant,
    real_provider: EmbeddingProvider,
    provider_down: OpenAICompatibleProvider,
    backfills: list[list[str]],
) -> None:
    # Large enough to be embedded in chunks, each while the one before it is written.
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": f"Service {n} deploys on Fridays."}
        for n in range(40)
    ]

    with transaction.atomic():
        results = memory_batch_create(principal=acme.agent, entries=entries)

    assert all(r.ok for r in results)
    created = {str(r.memory.pk) for r in results if r.memory is not None}
    stored = Memory.objects.filter(organization=acme.organization)
    assert set(stored.values_list("embedding_status", flat=True)) == {EmbeddingStatus.PENDING}
    assert {memory_id for batch in backfills for memory_id in batch} == created

    reset_provider(real_provider)
    for batch in backfills:
        memory_embed_pending.apply(args=[batch])
    assert set(stored.values_list("embedding_status", flat=True)) == {EmbeddingStatus.READY}
