"""A memory written while the embedding provider is down is kept, marked pending, and a backfill
is scheduled once the write commits; the backfill task embeds it when the provider is back."""

from __future__ import annotations

import pytest
from django.db import transaction

from memories.embedding_pipeline import embedding_text
from memories.embeddings import EmbeddingProvider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memories.tasks import memory_embed_pending
from tests.conftest import MemoryFactory


@pytest.mark.django_db(transaction=True)
def test_the_memory_is_kept_pending_and_the_backfill_fills_it_in(
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    provider_down: OpenAICompatibleProvider,
    backfills: list[list[str]],
) -> None:
    with transaction.atomic():
        memory = make_memory(current_content="Deploys are frozen on Fridays after 15:00 UTC.")
        assert backfills == [], "the backfill must wait for the commit"

    assert backfills == [[str(memory.pk)]]
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.current_content == "Deploys are frozen on Fridays after 15:00 UTC."
    assert stored.embedding_status == EmbeddingStatus.PENDING
    assert stored.embedding is None
    assert stored.embedding_model == ""

    reset_provider(real_provider)
    result = memory_embed_pending.apply(args=[backfills[0]])

    assert result.successful() and result.result == 1
    stored.refresh_from_db()
    assert stored.embedding_status == EmbeddingStatus.READY
    assert stored.embedding_model == real_provider.name
    expected = real_provider.embed_one(embedding_text(stored.title, stored.current_content))
    assert stored.embedding is not None
    assert list(stored.embedding) == pytest.approx(expected, abs=1e-5)


@pytest.mark.django_db(transaction=True)
def test_a_write_that_rolls_back_schedules_nothing(
    make_memory: MemoryFactory, provider_down: OpenAICompatibleProvider, backfills: list[list[str]]
) -> None:
    class Abort(Exception):
        pass

    with pytest.raises(Abort), transaction.atomic():
        make_memory()
        raise Abort

    assert backfills == []
    assert not Memory.objects.exists()
