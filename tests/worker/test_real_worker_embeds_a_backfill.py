"""End to end without Redis: a write made while the provider is down puts a backfill message in
the file broker, and a real Celery worker process (with beat, as `manage.py serve` runs it)
consumes it and embeds the memory in the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import transaction

from memories.embeddings import EmbeddingProvider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from tests.conftest import MemoryFactory
from tests.worker.conftest import process_gone, wait_for, worker_on


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_embeds_what_was_stored_while_the_provider_was_down(
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    provider_down: OpenAICompatibleProvider,
    broker_dir: Path,
    subprocess_env: dict[str, str],
) -> None:
    with transaction.atomic():
        memory = make_memory(current_content="The on-call rota changes every Monday at 09:00.")

    assert Memory.objects.get(pk=memory.pk).embedding_status == EmbeddingStatus.PENDING
    messages = list(broker_dir.glob("*.celery.msg"))
    assert len(messages) == 1, "the backfill is a message in the file broker"
    assert str(memory.pk) in messages[0].read_text()

    worker = worker_on(broker_dir, subprocess_env)
    worker.start()
    try:
        ready = wait_for(
            lambda: Memory.objects.filter(pk=memory.pk, embedding_status=EmbeddingStatus.READY).first(),
            timeout=60,
            what=f"the worker to embed the memory; its log:\n{worker.log_file}",
        )
    finally:
        pid = worker.pid
        returncode = worker.stop()

    log = worker.log_file.read_text()
    assert ready.embedding_model == real_provider.name
    assert ready.embedding is not None
    assert "memories.tasks.memory_embed_pending" in log and "succeeded" in log, log
    assert "beat: Starting" in log, log
    assert not list(broker_dir.glob("*.msg")), "the message was consumed"
    assert returncode == 0, log
    assert pid is not None and process_gone(pid)
