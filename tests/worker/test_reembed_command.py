"""`manage.py reembed` embeds memories again after a model change (--all) or catches up on pending
ones (--pending, the default), for everyone or one organization, with a progress bar and a summary."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest
from django.core.management import CommandError, call_command

from memories.embedding_pipeline import embedding_text
from memories.embeddings import EmbeddingError, EmbeddingProvider, reset_provider
from memories.models import EmbeddingStatus, Memory
from tests.conftest import MemoryFactory, Tenant

OLD_MODEL = "old-model-v1"


def _reembed(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("reembed", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _as_if_embedded_by_an_old_model(memories: list[Memory]) -> None:
    """What a model change leaves behind: ready memories whose vectors come from another model."""
    stale = [0.0] * 383 + [1.0]
    Memory.objects.filter(pk__in=[m.pk for m in memories]).update(embedding=stale, embedding_model=OLD_MODEL)


def _is_current(memory: Memory, provider: EmbeddingProvider) -> bool:
    memory.refresh_from_db()
    expected = provider.embed_one(embedding_text(memory.title, memory.current_content))
    return (
        memory.embedding_status == EmbeddingStatus.READY
        and memory.embedding_model == provider.name
        and list(memory.embedding) == pytest.approx(expected, abs=1e-5)
    )


def test_all_reembeds_every_memory_with_the_current_model(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, real_provider: EmbeddingProvider
) -> None:
    memories = [make_memory() for _ in range(3)]
    memories.append(make_memory(principal=globex.agent))
    _as_if_embedded_by_an_old_model(memories)

    out, err = _reembed("--all", "--batch-size", "2")

    assert all(_is_current(memory, real_provider) for memory in memories)
    assert f"Embedded 4 memories with {real_provider.name} in" in out
    assert "memories/s" in out
    assert "4/4" in err, "the progress bar is on stderr"


def test_organization_limits_it_to_that_organization(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, real_provider: EmbeddingProvider
) -> None:
    ours = [make_memory() for _ in range(2)]
    theirs = make_memory(principal=globex.agent)
    _as_if_embedded_by_an_old_model([*ours, theirs])

    out, _ = _reembed("--all", "--organization", "acme")

    assert all(_is_current(memory, real_provider) for memory in ours)
    theirs.refresh_from_db()
    assert theirs.embedding_model == OLD_MODEL
    assert theirs.embedding_status == EmbeddingStatus.READY
    assert "Embedded 2 memories of organization 'acme'" in out


def test_pending_is_the_default_and_leaves_ready_memories_alone(
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    backfills: list[list[str]],
    request: pytest.FixtureRequest,
) -> None:
    ready = make_memory()
    _as_if_embedded_by_an_old_model([ready])
    request.getfixturevalue("provider_down")
    pending = [make_memory() for _ in range(2)]
    reset_provider(real_provider)

    out, _ = _reembed()

    assert all(_is_current(memory, real_provider) for memory in pending)
    ready.refresh_from_db()
    assert ready.embedding_model == OLD_MODEL
    assert "Embedded 2 memories" in out


def test_an_unknown_organization_is_an_error(acme: Tenant) -> None:
    with pytest.raises(CommandError, match="no organization 'initech' \\(known: acme, globex\\)"):
        _reembed("--all", "--organization", "initech")


def test_a_provider_that_is_down_changes_nothing(
    make_memory: MemoryFactory, real_provider: EmbeddingProvider, request: pytest.FixtureRequest
) -> None:
    memory = make_memory()
    request.getfixturevalue("provider_down")

    with pytest.raises(CommandError, match="the embedding provider is unavailable, nothing was changed"):
        _reembed("--all")

    memory.refresh_from_db()
    assert memory.embedding_status == EmbeddingStatus.READY
    assert memory.embedding is not None


class FailsAfter(EmbeddingProvider):
    """The real model for the first ``calls`` calls, then an outage."""

    def __init__(self, real: EmbeddingProvider, calls: int) -> None:
        super().__init__()
        self.name, self.dimensions = real.name, real.dimensions
        self._real, self._calls = real, calls

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._calls -= 1
        if self._calls < 0:
            raise EmbeddingError("embedding endpoint went away")
        return self._real.embed(texts)


def test_a_provider_that_fails_midway_keeps_what_was_done_and_says_what_is_left(
    make_memory: MemoryFactory, real_provider: EmbeddingProvider
) -> None:
    memories = [make_memory() for _ in range(5)]
    _as_if_embedded_by_an_old_model(memories)
    reset_provider(FailsAfter(real_provider, calls=2))  # the reachability check, then one batch

    with pytest.raises(CommandError, match="failed after 2 of 5 memories: embedding endpoint went away") as error:
        _reembed("--all", "--batch-size", "2")

    assert "reembed --pending" in str(error.value)
    statuses = list(Memory.objects.order_by("created_at").values_list("embedding_status", flat=True))
    assert statuses == [EmbeddingStatus.READY] * 2 + [EmbeddingStatus.PENDING] * 3

    reset_provider(real_provider)
    out, _ = _reembed("--pending")

    assert "Embedded 3 memories" in out
    assert all(_is_current(memory, real_provider) for memory in memories)
