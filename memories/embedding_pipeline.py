"""Embedding memories as they are written, and backfilling those that could not be embedded.

A write never fails because the embedding provider did: the memory is stored with its embedding
``pending`` and a background task fills it in once the provider answers again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction

from memories.embeddings import EmbeddingError, get_provider
from memories.models import EmbeddingStatus, Memory

logger = logging.getLogger(__name__)

BACKFILL_BATCH = 64


def embedding_text(title: str, content: str) -> str:
    """What gets embedded: the content, led by the title unless the title was cut from it."""
    if content.startswith(title.rstrip("…")):
        return content
    return f"{title}\n{content}"


def embed_texts(texts: Sequence[str]) -> list[list[float]] | None:
    """Vectors for ``texts``, or None when the provider is unavailable (the caller defers)."""
    if not texts:
        return []
    try:
        return get_provider().embed(texts)
    except EmbeddingError as error:
        logger.warning("embedding deferred: %s", error)
        return None


def apply_embedding(memory: Memory, vector: list[float] | None) -> None:
    """Set the embedding fields on an unsaved change; schedule a backfill if there is no vector."""
    if vector is None:
        memory.embedding = None
        memory.embedding_status = EmbeddingStatus.PENDING
        memory.embedding_model = ""
        transaction.on_commit(lambda: schedule_backfill([str(memory.pk)]))
    else:
        memory.embedding = vector
        memory.embedding_status = EmbeddingStatus.READY
        memory.embedding_model = get_provider().name


EMBEDDING_FIELDS = ["embedding", "embedding_status", "embedding_model"]


def schedule_backfill(memory_ids: list[str]) -> None:
    from memories.tasks import memory_embed_pending

    try:
        memory_embed_pending.delay(memory_ids)
    except Exception:  # a broker outage must not fail the write; the periodic sweep catches up
        logger.exception("could not enqueue the embedding backfill; the periodic sweep will retry")


def embed_pending(*, memory_ids: Sequence[str] | None = None, limit: int = 1000) -> int:
    """Embed memories whose embedding is pending. Returns how many were embedded.

    Raises EmbeddingError when the provider is still unavailable, so a task can retry later.
    """
    provider = get_provider()
    done = 0
    while done < limit:
        queryset = Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING)
        if memory_ids is not None:
            queryset = queryset.filter(pk__in=memory_ids)
        batch = list(queryset.order_by("created_at").values_list("pk", "title", "current_content")[:BACKFILL_BATCH])
        if not batch:
            break
        vectors = provider.embed([embedding_text(title, content) for _, title, content in batch])
        with transaction.atomic():
            for (pk, title, content), vector in zip(batch, vectors, strict=True):
                # Only if the text is still what was embedded: a concurrent edit re-embeds itself.
                Memory.objects.filter(pk=pk, title=title, current_content=content).update(
                    embedding=vector, embedding_status=EmbeddingStatus.READY, embedding_model=provider.name
                )
        done += len(batch)
        if len(batch) < BACKFILL_BATCH:
            break
    return done
