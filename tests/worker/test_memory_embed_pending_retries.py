"""While the provider is down, a write's backfill task retries (with backoff, up to its limit);
the periodic sweep does not, since the next sweep comes within a minute."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memories.embeddings import EmbeddingError, EmbeddingProvider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memories.tasks import memory_embed_pending
from memory_platform.celery import app
from tests.conftest import MemoryFactory


@pytest.fixture
def attempts(provider_down: OpenAICompatibleProvider, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    refuse = provider_down.embed

    def counted(texts: Sequence[str]) -> list[list[float]]:
        calls.append(len(texts))
        return refuse(texts)

    monkeypatch.setattr(provider_down, "embed", counted)
    return calls


def test_the_backfill_retries_until_its_limit_then_fails(
    make_memory: MemoryFactory, attempts: list[int], backfills: list[list[str]]
) -> None:
    memory = make_memory()
    attempts.clear()

    result = memory_embed_pending.apply(args=[[str(memory.pk)]])

    assert result.failed()
    assert isinstance(result.result, EmbeddingError)
    assert len(attempts) == memory_embed_pending.max_retries + 1
    memory.refresh_from_db()
    assert memory.embedding_status == EmbeddingStatus.PENDING


def test_called_directly_the_backfill_raises_the_provider_error(
    make_memory: MemoryFactory, provider_down: OpenAICompatibleProvider, backfills: list[list[str]]
) -> None:
    memory = make_memory()

    with pytest.raises(EmbeddingError, match=r"embedding endpoint .* failed"):
        memory_embed_pending([str(memory.pk)])


def test_the_sweep_does_not_retry_and_catches_up_once_the_provider_is_back(
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    attempts: list[int],
    backfills: list[list[str]],
) -> None:
    stored = [make_memory() for _ in range(3)]
    attempts.clear()

    down = memory_embed_pending.apply()

    assert down.successful() and down.result == 0
    assert len(attempts) == 1
    assert Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING).count() == 3

    reset_provider(real_provider)
    back = memory_embed_pending.apply()

    assert back.successful() and back.result == 3
    assert set(Memory.objects.values_list("embedding_status", flat=True)) == {EmbeddingStatus.READY}
    assert {m.pk for m in stored} == set(Memory.objects.values_list("pk", flat=True))


def test_beat_runs_the_sweep_every_minute() -> None:
    entry = app.conf.beat_schedule["memory-embed-pending"]

    assert entry["task"] == memory_embed_pending.name
    assert entry["task"] in app.tasks
    assert entry["schedule"] == 60.0
    assert "args" not in entry, "the sweep takes no ids: it covers every pending memory"
