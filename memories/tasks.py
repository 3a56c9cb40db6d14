"""Background work on memories. Tasks are thin: they call the pipeline and retry on failure."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from memories.embeddings import EmbeddingError


@shared_task(
    bind=True,
    autoretry_for=(EmbeddingError,),
    retry_backoff=10,
    retry_backoff_max=600,
    max_retries=20,
    ignore_result=True,
)
def memory_embed_pending(self: Any, memory_ids: list[str] | None = None) -> int:
    """Embed memories stored while the embedding provider was unavailable."""
    from memories.embedding_pipeline import embed_pending

    return embed_pending(memory_ids=memory_ids)
