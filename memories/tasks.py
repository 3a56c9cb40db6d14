"""Background work on memories. Tasks are thin: they call the pipeline and retry on failure.

This module depends on the pipeline, never the reverse: it hands the pipeline the way to enqueue
a backfill (imported by MemoriesConfig.ready, so web processes have it too).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval

from memories import embedding_pipeline
from memories.embeddings import EmbeddingError
from memories.search import tenant_indexes

logger = logging.getLogger(__name__)

BACKOFF_FACTOR = 10
BACKOFF_MAX = 600


@shared_task(bind=True, max_retries=20, ignore_result=True)
def memory_embed_pending(self: Any, memory_ids: list[str] | None = None) -> int:
    """Embed memories stored while the embedding provider was unavailable.

    With ``memory_ids`` (the backfill a write schedules) it retries with backoff while the provider
    is down. Without them it is the periodic sweep over every pending memory, which does not retry:
    the next sweep is a minute away, and retrying would pile up one waiting task per minute.
    """
    try:
        embedded = embedding_pipeline.embed_pending(memory_ids=memory_ids)
    except EmbeddingError as error:
        if memory_ids is None:
            logger.warning("embedding sweep skipped, the provider is unavailable: %s", error)
            return 0
        countdown = get_exponential_backoff_interval(
            BACKOFF_FACTOR, self.request.retries, BACKOFF_MAX, full_jitter=True
        )
        raise self.retry(exc=error, countdown=countdown) from error
    if embedded:
        logger.info("embedded %d pending memories", embedded)
    return embedded


@shared_task(ignore_result=True)
def memory_index_tenants() -> int:
    """Give each organization that has grown past SEARCH_EXACT_SCAN_LIMIT memories its own search
    indexes (memories.search.tenant_indexes), built concurrently; how many organizations got them."""
    built = tenant_indexes.sweep()
    for organization_id, names in built.items():
        logger.info("organization %s has its own search indexes: %s", organization_id, ", ".join(names))
    return len(built)


embedding_pipeline.backfill_enqueuer_set(memory_embed_pending.delay)
