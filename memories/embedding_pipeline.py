"""Embedding memories as they are written, and backfilling those that could not be embedded.

A write never fails because the embedding provider did: the memory is stored with its embedding
``pending`` and a background task fills it in once the provider answers again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

from memories.embeddings import EmbeddingError, get_provider
from memories.models import EmbeddingStatus, Memory
from organizations.models import Organization

logger = logging.getLogger(__name__)

BACKFILL_BATCH = 64


def embedding_text(title: str, content: str) -> str:
    """What gets embedded: the content, led by the title unless the title was cut from it."""
    if content.startswith(title.rstrip("…")):
        return content
    return f"{title}\n{content}"


def embed_texts(texts: Sequence[str]) -> list[list[float]] | None:
    """Vectors for ``texts``, or None when the provider is unavailable or slower than a write may
    wait (``EMBEDDING_WRITE_WAIT_SECONDS``): the caller stores the memory pending."""
    if not texts:
        return []
    try:
        return get_provider().embed_within(texts, settings.EMBEDDING_WRITE_WAIT_SECONDS)
    except EmbeddingError as error:
        logger.warning("embedding deferred: %s", error)
        return None


class Later:
    """Vectors on their way: called, waits for them (None when the provider is unavailable, as
    embed_texts); ``done()`` says whether a call would return at once."""

    def __init__(self, future: Future[list[list[float]]] | None) -> None:
        self.future = future

    def done(self) -> bool:
        return self.future is None or self.future.done()

    def __call__(self) -> list[list[float]] | None:
        if self.future is None:
            return None
        try:
            return self.future.result()
        except EmbeddingError as error:
            logger.warning("embedding deferred: %s", error)
            return None


def embed_texts_later(texts: Sequence[str]) -> Later:
    """Start embedding ``texts`` now. Calls are worked on in the order they are made."""
    if not texts:
        done: Future[list[list[float]]] = Future()
        done.set_result([])
        return Later(done)
    try:
        return Later(get_provider().embed_later(texts))
    except EmbeddingError as error:
        logger.warning("embedding deferred: %s", error)
        return Later(None)


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


# How a backfill reaches the worker. memories.tasks sets it (MemoriesConfig.ready imports that
# module in every process): the pipeline does not import the tasks that call it back.
_backfill_enqueuers: list[Callable[[list[str]], object]] = []


def backfill_enqueuer_set(enqueue: Callable[[list[str]], object]) -> None:
    _backfill_enqueuers[:] = [enqueue]


def schedule_backfill(memory_ids: list[str]) -> None:
    if not _backfill_enqueuers:
        logger.warning("no backfill task is registered; the periodic sweep will embed these memories")
        return
    try:
        _backfill_enqueuers[0](memory_ids)
    except Exception:  # a broker outage must not fail the write; the periodic sweep catches up
        logger.exception("could not enqueue the embedding backfill; the periodic sweep will retry")


def pending_memories(
    *, organization: Organization | None = None, memory_ids: Sequence[str] | None = None
) -> QuerySet[Memory]:
    queryset = Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING)
    if organization is not None:
        queryset = queryset.filter(organization=organization)
    if memory_ids is not None:
        queryset = queryset.filter(pk__in=memory_ids)
    return queryset


def mark_for_reembedding(*, organization: Organization | None = None) -> int:
    """Mark every memory (or one organization's) pending, e.g. after the embedding model changed.

    The old vectors are cleared rather than kept until replaced: another model's vectors are not
    comparable with the new model's query vectors, and keyword search still finds these memories.
    """
    queryset = Memory.objects.all() if organization is None else Memory.objects.filter(organization=organization)
    return queryset.update(embedding=None, embedding_status=EmbeddingStatus.PENDING, embedding_model="")


def embed_pending_batches(
    *,
    organization: Organization | None = None,
    memory_ids: Sequence[str] | None = None,
    batch_size: int = BACKFILL_BATCH,
    limit: int | None = None,
) -> Iterator[int]:
    """Embed pending memories oldest first, one batch at a time, yielding how many each batch embedded.

    Each memory is read at most once per run, so a run ends even while writes keep coming.
    Raises EmbeddingError when the provider is unavailable; batches already yielded stay embedded.
    """
    provider = get_provider()
    seen = 0
    after: tuple[datetime, uuid.UUID] | None = None
    while limit is None or seen < limit:
        queryset = pending_memories(organization=organization, memory_ids=memory_ids)
        if after is not None:
            queryset = queryset.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], pk__gt=after[1]))
        size = batch_size if limit is None else min(batch_size, limit - seen)
        batch = list(
            queryset.order_by("created_at", "pk").values_list("pk", "created_at", "title", "current_content")[:size]
        )
        if not batch:
            return
        vectors = provider.embed([embedding_text(title, content) for _, _, title, content in batch])
        embedded = 0
        with transaction.atomic():
            for (pk, _, title, content), vector in zip(batch, vectors, strict=True):
                # Only if the text is still what was embedded: a concurrent edit re-embeds itself.
                embedded += Memory.objects.filter(
                    pk=pk, title=title, current_content=content, embedding_status=EmbeddingStatus.PENDING
                ).update(embedding=vector, embedding_status=EmbeddingStatus.READY, embedding_model=provider.name)
        yield embedded
        seen += len(batch)
        after = (batch[-1][1], batch[-1][0])
        if len(batch) < size:
            return


def embed_pending(*, memory_ids: Sequence[str] | None = None, limit: int = 1000) -> int:
    """Embed memories whose embedding is pending. Returns how many were embedded.

    Raises EmbeddingError when the provider is still unavailable, so a task can retry later.
    """
    return sum(embed_pending_batches(memory_ids=memory_ids, limit=limit))
