"""Changing a memory's text while the provider is down drops its now-stale vector: the memory is
pending again until the backfill embeds the new text."""

from __future__ import annotations

import pytest
from django.db import transaction

from memories.embedding_pipeline import embedding_text
from memories.embeddings import EmbeddingProvider, reset_provider
from memories.models import EmbeddingStatus
from memories.services import memory_update
from memories.tasks import memory_embed_pending
from tests.conftest import MemoryFactory, Tenant


@pytest.mark.django_db(transaction=True)
def test_an_edit_while_down_is_pending_until_the_backfill_embeds_the_new_text(
    acme: Tenant,
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    backfills: list[list[str]],
    request: pytest.FixtureRequest,
) -> None:
    memory = make_memory(current_content="The staging database is refreshed weekly.")
    assert memory.embedding_status == EmbeddingStatus.READY
    request.getfixturevalue("provider_down")

    with transaction.atomic():
        memory_update(
            principal=acme.agent,
            memory_id=memory.pk,
            data={"current_content": "The staging database is refreshed every night."},
        )

    memory.refresh_from_db()
    assert memory.current_content == "The staging database is refreshed every night."
    assert memory.embedding_status == EmbeddingStatus.PENDING
    assert memory.embedding is None
    assert memory.embedding_model == ""
    assert backfills == [[str(memory.pk)]]

    reset_provider(real_provider)
    memory_embed_pending.apply(args=backfills)

    memory.refresh_from_db()
    assert memory.embedding_status == EmbeddingStatus.READY
    expected = real_provider.embed_one(embedding_text(memory.title, memory.current_content))
    assert list(memory.embedding) == pytest.approx(expected, abs=1e-5)


def test_an_edit_of_other_fields_while_down_keeps_the_vector(
    acme: Tenant, make_memory: MemoryFactory, backfills: list[list[str]], request: pytest.FixtureRequest
) -> None:
    memory = make_memory()
    request.getfixturevalue("provider_down")

    memory_update(principal=acme.agent, memory_id=memory.pk, data={"importance": 9, "tags": ["ops"]})

    memory.refresh_from_db()
    assert memory.embedding_status == EmbeddingStatus.READY
    assert memory.embedding is not None
    assert backfills == []
