"""The request id travels with the tasks a request enqueues: the message carries it, and the worker's
log lines for the task carry it (in JSON, as deployments log); the worker's task run times and
failures are counted for /metrics through the multiprocess directory it shares with the web."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import transaction
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memory_platform import logs
from memory_platform.worker import BackgroundWorker
from tests.conftest import MemoryFactory
from tests.worker.conftest import wait_for

REQUEST_ID = "req-backfill-7"


@pytest.mark.django_db(transaction=True)
def test_a_backfill_logs_with_the_id_of_the_request_that_wrote_the_memory(
    make_memory: MemoryFactory,
    provider_down: OpenAICompatibleProvider,
    broker_dir: Path,
    subprocess_env: dict[str, str],
    tmp_path: Path,
) -> None:
    with logs.bound(request_id=REQUEST_ID), transaction.atomic():
        memory = make_memory(current_content="The on-call rota changes every Monday at 09:00.")
    [message] = broker_dir.glob("*.celery.msg")
    assert json.loads(message.read_text())["headers"]["request_id"] == REQUEST_ID

    metrics = tmp_path / "metrics"
    metrics.mkdir()
    env = {**subprocess_env, "LOG_FORMAT": "json", "PROMETHEUS_MULTIPROC_DIR": str(metrics)}
    worker = BackgroundWorker(log_file=tmp_path / "worker.log", schedule_file=tmp_path / "beat-schedule", env=env)
    worker.start()
    try:
        wait_for(
            lambda: Memory.objects.filter(pk=memory.pk, embedding_status=EmbeddingStatus.READY).exists(),
            timeout=60,
            what=f"the worker to embed the memory; its log:\n{worker.log_file}",
        )
    finally:
        worker.stop()

    lines = [json.loads(line) for line in worker.log_file.read_text().splitlines() if line.startswith("{")]
    [embedded] = [line for line in lines if line["message"] == "embedded 1 pending memories"]
    assert embedded["request_id"] == REQUEST_ID
    assert embedded["logger"] == "memories.tasks" and embedded["level"] == "INFO"
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics))
    runs = registry.get_sample_value(
        "memory_platform_task_seconds_count", {"task": "memories.tasks.memory_embed_pending"}
    )
    assert runs is not None and runs >= 1
