"""A backfill never overwrites an edit made while it was embedding: it writes a vector only if the
memory's text is still the text it embedded."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memories.embedding_pipeline import embed_pending, embedding_text
from memories.embeddings import EmbeddingProvider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memories.services import memory_update
from tests.conftest import MemoryFactory, Tenant


class EditsWhileEmbedding(EmbeddingProvider):
    """The real model, but the first call lets a person edit the memory before it returns."""

    def __init__(self, real: EmbeddingProvider, edit: object) -> None:
        super().__init__()
        self.name = real.name
        self.dimensions = real.dimensions
        self._real = real
        self._edit = edit

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._real.embed(texts)
        edit, self._edit = self._edit, None
        if callable(edit):
            edit()
        return vectors


def test_the_edit_wins_and_keeps_its_own_vector(
    acme: Tenant,
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    provider_down: OpenAICompatibleProvider,
    backfills: list[list[str]],
) -> None:
    memory = make_memory(current_content="Support answers within one business day.")
    assert memory.embedding_status == EmbeddingStatus.PENDING

    def edit() -> None:
        # The provider is back for the editor's write too: it embeds the new text itself.
        memory_update(
            principal=acme.curator,
            memory_id=memory.pk,
            data={"current_content": "Support answers within four business hours."},
        )

    reset_provider(EditsWhileEmbedding(real_provider, edit))

    assert embed_pending(memory_ids=[str(memory.pk)]) == 0

    stored = Memory.objects.get(pk=memory.pk)
    assert stored.current_content == "Support answers within four business hours."
    assert stored.embedding_status == EmbeddingStatus.READY
    new_text = real_provider.embed_one(embedding_text(stored.title, stored.current_content))
    old_text = real_provider.embed_one(embedding_text(memory.title, memory.current_content))
    assert list(stored.embedding) == pytest.approx(new_text, abs=1e-5)
    assert list(stored.embedding) != pytest.approx(old_text, abs=1e-3)


def test_an_edit_that_leaves_it_pending_is_embedded_by_the_next_run(
    acme: Tenant,
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    provider_down: OpenAICompatibleProvider,
    backfills: list[list[str]],
) -> None:
    memory = make_memory(current_content="Releases are tagged vMAJOR.MINOR.")

    def edit_while_still_down() -> None:
        reset_provider(provider_down)
        memory_update(
            principal=acme.curator, memory_id=memory.pk, data={"current_content": "Releases are tagged by date."}
        )

    reset_provider(EditsWhileEmbedding(real_provider, edit_while_still_down))
    assert embed_pending(memory_ids=[str(memory.pk)]) == 0
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.embedding_status == EmbeddingStatus.PENDING
    assert stored.embedding is None

    reset_provider(real_provider)
    assert embed_pending(memory_ids=[str(memory.pk)]) == 1

    stored.refresh_from_db()
    assert stored.embedding_status == EmbeddingStatus.READY
    expected = real_provider.embed_one(embedding_text(stored.title, "Releases are tagged by date."))
    assert list(stored.embedding) == pytest.approx(expected, abs=1e-5)
