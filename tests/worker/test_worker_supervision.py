"""`manage.py serve`'s worker is supervised: killed, it comes back on its own, its heartbeat and
beat's (what /healthz and the status tools report) say so, and what waited meanwhile is done. A
real Celery worker with beat, as serve runs it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from memories.embeddings import EmbeddingProvider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memory_platform import worker as worker_module
from memory_platform.models import Heartbeat
from memory_platform.worker import BackgroundWorker
from tests.conftest import MemoryFactory
from tests.worker.conftest import closed_port, process_gone, wait_for


def _unreachable(real: EmbeddingProvider) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(
        base_url=f"http://127.0.0.1:{closed_port()}/v1", model="down", api_key="", dimensions=real.dimensions, timeout=2
    )


def _last_beat(name: str = "worker") -> Heartbeat | None:
    return Heartbeat.objects.filter(name=name).first()


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_is_started_again_and_beats_again(  # noqa: PLR0917 - fixtures
    make_memory: MemoryFactory,
    real_provider: EmbeddingProvider,
    broker_dir: Path,
    subprocess_env: dict[str, str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    client: Client,
) -> None:
    # Long enough to write while no worker runs; short enough for the test.
    monkeypatch.setattr(worker_module, "RESTART_FIRST_WAIT", 8.0)
    here = broker_dir.parent
    worker = BackgroundWorker(
        log_file=here / "worker.log",
        schedule_file=here / "celerybeat-schedule",
        env={**subprocess_env, "HEARTBEAT_INTERVAL_SECONDS": "1"},
    )
    worker.start()
    try:
        first = wait_for(_last_beat, timeout=60, what=f"a first heartbeat; the worker's log: {worker.log_file}")
        assert wait_for(lambda: _last_beat("beat"), timeout=30, what="beat's own heartbeat").hostname
        killed = worker.pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)

        # Written while no worker runs, with the provider down: pending, their backfills queued.
        reset_provider(_unreachable(real_provider))
        with transaction.atomic():
            waiting = [make_memory(current_content=f"Written while the worker was down, {n}.") for n in range(3)]
        reset_provider(real_provider)
        assert Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING).count() == 3
        assert client.get("/healthz").json()["worker"]["pending_embeddings"] == 3

        wait_for(lambda: worker.restarts == 1 and worker.running(), timeout=30, what="the worker to be started again")
        assert worker.pid != killed and process_gone(killed)
        since = timezone.now()
        wait_for(
            lambda: (beat := _last_beat()) is not None and beat.beat_at > since,
            timeout=60,
            what=f"a heartbeat from the new worker; its log: {worker.log_file}",
        )
        # The backlog drains: the queued backfills are done by the worker started again.
        wait_for(
            lambda: not Memory.objects.filter(pk__in=[m.pk for m in waiting], embedding_status="pending").exists(),
            timeout=60,
            what=f"the backlog to drain; the worker's log: {worker.log_file}",
        )
        assert client.get("/healthz").json()["worker"]["pending_embeddings"] == 0
    finally:
        returncode = worker.stop()

    assert first.hostname
    assert any("exited with status -9" in record.getMessage() for record in caplog.records), caplog.text
    assert any("running again" in record.getMessage() for record in caplog.records)
    assert returncode == 0
    # Stopped on purpose: nothing starts it again.
    assert worker.restarts == 1 and not worker.running()


def test_the_wait_before_a_restart_doubles_while_it_keeps_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "RESTART_FIRST_WAIT", 0.2)
    monkeypatch.setattr(worker_module, "RESTART_MAX_WAIT", 0.8)
    failing = BackgroundWorker(log_file=tmp_path / "w.log", schedule_file=tmp_path / "s")
    monkeypatch.setattr(failing, "command", lambda: ["python3", "-c", "raise SystemExit(3)"])
    waits: list[float] = []
    real_wait = failing._stopping.wait
    monkeypatch.setattr(
        failing._stopping, "wait", lambda timeout=None: waits.append(timeout) or real_wait(min(timeout or 0, 0.05))
    )

    failing.start()
    wait_for(lambda: failing.restarts >= 4, timeout=30, what="four restarts")
    failing.stop()

    restart_waits = [wait for wait in waits if wait != 0.5]
    assert restart_waits[:4] == [0.2, 0.4, 0.8, 0.8]
