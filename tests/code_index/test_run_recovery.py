"""One run per repository at a time, and a crashed run never keeps a repository locked.

A run whose worker died (its advisory lock is free) is closed as interrupted by the next request,
which proceeds and picks up where it stopped: the files the dead run finished are unchanged by
then. A run a live worker holds is not touched: the request is refused with its progress. Runs that
waited too long for the agent's files or for a worker are closed by beat's sweep.
(tests/code_index/test_code_index_worker.py kills a real worker with SIGKILL.)
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from code_index import pipeline, recovery, services
from code_index.models import CodeChunk, CodeFile, CodeIndexRun, RunPhase
from memories.embeddings import EmbeddingError, reset_provider
from memory_platform.exceptions import Conflict
from organizations.models import Repository
from tests.code_index.conftest import (
    CountingEmbedder,
    index_directory,
    python_module,
    sha,
    worker_holding_the_lock,
    write_tree,
)
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

FILES = {f"src/module_{n}.py": python_module(f"module_{n}") for n in range(6)}


class Crash(BaseException):
    """Stands for the worker process dying: nothing of the run's own handling runs."""


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "BATCH_FILES", 2)


def crash_after_first_batch(run_id: int) -> None:
    def die(run: CodeIndexRun) -> None:
        raise Crash

    with pytest.raises(Crash):
        pipeline.run_index(run_id, progress=die)


def test_a_run_whose_worker_died_is_closed_and_the_next_run_picks_up_where_it_stopped(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder, small_batches: None
) -> None:
    write_tree(roots, FILES)
    dead = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
    crash_after_first_batch(dead.pk)
    dead.refresh_from_db()
    assert (dead.status, dead.phase, CodeFile.objects.count()) == ("indexing", "running", 2)
    embedder.texts.clear()

    run = index_directory(acme.agent, "payments-api", roots)

    dead.refresh_from_db()
    assert (dead.status, dead.phase) == ("failed", "finished")
    assert dead.error.startswith("interrupted: the worker stopped after")
    assert (run.status, run.unchanged, run.added) == ("completed", 2, 4)
    assert len(embedder.texts) == 4  # only the files the dead run had not written
    assert CodeChunk.objects.count() == 6


def test_a_redelivered_task_resumes_its_own_run(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder, small_batches: None
) -> None:
    write_tree(roots, FILES)
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
    crash_after_first_batch(run.pk)

    resumed = pipeline.run_index(run.pk)  # the broker hands the task to the next worker

    assert resumed is not None and resumed.pk == run.pk
    assert (resumed.status, resumed.unchanged, resumed.added, resumed.indexed_files) == ("completed", 2, 4, 6)
    assert len(embedder.texts) == 6


@pytest.mark.usefixtures("repository", "small_batches")
def test_beats_sweep_hands_a_run_whose_worker_died_to_a_worker_again_then_gives_up(
    acme: Tenant, roots: Path, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.CODE_INDEX_RESUME_ATTEMPTS = 1
    write_tree(roots, FILES)
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
    crash_after_first_batch(run.pk)
    handed: list[int] = []

    with django_capture_on_commit_callbacks(execute=True):
        assert recovery.close_stale_runs(resume=handed.append) == 0
    run.refresh_from_db()
    assert (run.status, run.phase, run.resumed, handed) == ("indexing", "queued", 1, [run.pk])
    assert recovery.close_stale_runs() == 0, "a queued run is no longer the dead worker's"

    crash_after_first_batch(run.pk)  # the worker it went to dies too
    with django_capture_on_commit_callbacks(execute=True):
        assert recovery.close_stale_runs(resume=handed.append) == 1
    run.refresh_from_db()
    assert (run.status, run.resumed, handed) == ("failed", 1, [run.pk])
    assert run.error.startswith("interrupted: the worker stopped after 4 of 6 files")  # the second batch


@pytest.mark.usefixtures("repository", "small_batches")
def test_a_run_handed_again_by_the_sweep_finishes_where_the_dead_worker_stopped(
    acme: Tenant, roots: Path, embedder: CountingEmbedder, django_capture_on_commit_callbacks: Any
) -> None:
    write_tree(roots, FILES)
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
    crash_after_first_batch(run.pk)
    embedder.texts.clear()
    handed: list[int] = []
    with django_capture_on_commit_callbacks(execute=True):
        recovery.close_stale_runs(resume=handed.append)

    [run_id] = handed
    finished = pipeline.run_index(run_id)  # the task the sweep enqueued, on a live worker

    assert finished is not None
    assert (finished.status, finished.resumed, finished.unchanged, finished.added) == ("completed", 1, 2, 4)
    assert len(embedder.texts) == 4


def test_a_run_a_live_worker_holds_is_not_touched_and_the_request_is_refused(
    acme: Tenant, repository: Repository, roots: Path, small_batches: None
) -> None:
    write_tree(roots, FILES)
    running = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
    CodeIndexRun.objects.filter(pk=running.pk).update(phase=RunPhase.RUNNING, total_files=6, indexed_files=2)

    with worker_holding_the_lock(running.index_id):
        with pytest.raises(Conflict) as caught:
            services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
        assert "is being indexed right now (2 of 6 files" in caught.value.message
        with pytest.raises(Conflict):
            services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest={})
        with pytest.raises(pipeline.Busy):
            pipeline.run_index(running.pk)
        assert recovery.close_stale_runs() == 0

    running.refresh_from_db()
    assert (running.status, running.phase) == ("indexing", "running")


def test_the_database_allows_one_open_run_per_repository(acme: Tenant, repository: Repository, roots: Path) -> None:
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))

    with pytest.raises(IntegrityError), transaction.atomic():
        CodeIndexRun.objects.create(organization=acme.organization, index=run.index, trigger="path")


def test_runs_waiting_too_long_for_files_or_a_worker_are_closed_by_the_sweep(
    acme: Tenant, repository: Repository, roots: Path, settings: Any
) -> None:
    waiting = services.code_index_manifest(
        principal=acme.agent, repository="payments-api", manifest={"a.py": sha("x = 1\n")}
    ).run
    long_ago = timezone.now() - timedelta(seconds=settings.CODE_INDEX_STALE_SECONDS + 1)

    assert recovery.close_stale_runs() == 0  # still fresh
    CodeIndexRun.objects.filter(pk=waiting.pk).update(heartbeat_at=long_ago)
    assert recovery.close_stale_runs() == 1

    waiting.refresh_from_db()
    assert waiting.status == "failed" and "no files arrived" in waiting.error
    queued = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))
    CodeIndexRun.objects.filter(pk=queued.pk).update(heartbeat_at=long_ago)
    assert recovery.close_stale_runs() == 1
    queued.refresh_from_db()
    assert "is the Celery worker running?" in queued.error
    assert pipeline.run_index(queued.pk) is None  # a worker that takes it late finds it closed


def test_a_queued_run_is_replaced_by_a_newer_request(acme: Tenant, repository: Repository, roots: Path) -> None:
    queued = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots))

    newer = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(roots), watch=True)

    queued.refresh_from_db()
    assert (queued.status, newer.status, newer.index.watch) == ("failed", "indexing", True)
    assert pipeline.run_index(queued.pk) is None


def test_when_the_embedding_provider_fails_the_run_fails_and_keeps_what_it_wrote(
    acme: Tenant, repository: Repository, roots: Path, embedder: CountingEmbedder, small_batches: None
) -> None:
    write_tree(roots, FILES)

    class FailingAfterTwo(CountingEmbedder):
        def embed(self, texts: Any) -> list[list[float]]:
            if len(self.texts) >= 2:
                raise EmbeddingError("the model server is down")
            return super().embed(texts)

    reset_provider(FailingAfterTwo(embedder.inner))

    run = index_directory(acme.agent, "payments-api", roots)

    assert run.status == "failed" and "the embedding provider failed: the model server is down" in run.error
    assert CodeFile.objects.count() == 2
    reset_provider(embedder)
    retried = index_directory(acme.agent, "payments-api", roots)
    assert (retried.status, retried.unchanged, retried.added) == ("completed", 2, 4)
