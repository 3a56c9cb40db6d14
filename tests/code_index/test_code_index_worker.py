"""A real Celery worker process on the real Redis runs an index run, and one killed with SIGKILL
mid-run leaves whole files and no lock: the next request closes its run as interrupted and a new
worker finishes the work, embedding only the files the dead one had not written.

Each test has a queue of its own on the Redis at 127.0.0.1:6379, so nothing else's tasks reach
these workers.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from code_index import pipeline, recovery, services
from code_index.models import CodeChunk, CodeFile, CodeIndexRun
from memory_platform.celery import app
from organizations.models import Repository
from tests.code_index.conftest import python_module, write_tree
from tests.conftest import Tenant
from tests.redis_workers import REDIS_URL, StartWorker, drop_queue, private_queue, workers
from tests.worker.conftest import process_gone, wait_for

pytestmark = pytest.mark.processes

TASK = "code_index.tasks.code_index_run"
FILES = 100  # four batches of 25


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = private_queue("test-code-index")

    def send(run_id: int) -> None:
        with app.connection_for_write(REDIS_URL) as connection:
            app.send_task(TASK, args=[run_id], queue=name, connection=connection)

    # The services enqueue on commit: to this test's queue, never to the checkout's own broker.
    monkeypatch.setattr(services, "_enqueue", send)
    yield name
    drop_queue(name)


@pytest.fixture
def start_worker(queue: str, roots: Path, tmp_path: Path) -> Iterator[StartWorker]:
    yield from workers(queue, tmp_path, CODE_INDEX_ROOTS=str(roots))


@pytest.fixture
def tree(roots: Path) -> Path:
    return write_tree(roots, {f"pkg/module_{n:03}.py": python_module(f"module_{n}") for n in range(FILES)})


@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_an_index_run(
    acme: Tenant, repository: Repository, tree: Path, queue: str, start_worker: Callable[[str], object]
) -> None:
    start_worker("indexer")

    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(tree))

    wait_for(lambda: CodeIndexRun.objects.get(pk=run.pk).status != "indexing", 240, "the run to end")
    run.refresh_from_db()
    assert (run.status, run.added, run.total_files, run.indexed_files) == ("completed", FILES, FILES, FILES)
    assert CodeChunk.objects.filter(embedding__isnull=False).count() == FILES


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_run_leaves_whole_files_and_the_next_run_finishes(
    acme: Tenant, repository: Repository, tree: Path, queue: str, start_worker: Callable[[str], subprocess.Popen[bytes]]
) -> None:
    doomed = start_worker("doomed")
    dead = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(tree))
    wait_for(lambda: CodeFile.objects.count() >= pipeline.BATCH_FILES, 240, "the first batch", poll=0.02)
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait()
    assert process_gone(doomed.pid)

    dead.refresh_from_db()
    written = CodeFile.objects.count()
    assert (dead.status, dead.phase) == ("indexing", "running"), "killed before the run finished"
    assert written < FILES and written % pipeline.BATCH_FILES == 0  # whole batches only
    assert CodeChunk.objects.count() == written  # every file written has its chunk
    wait_for(lambda: recovery.lock_is_free(dead.index_id), 30, "the server to drop the dead worker's lock")

    start_worker("restarted")
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(tree))
    wait_for(lambda: CodeIndexRun.objects.get(pk=run.pk).status != "indexing", 240, "the next run")

    dead.refresh_from_db()
    run.refresh_from_db()
    assert dead.status == "failed" and dead.error.startswith("interrupted")
    assert (run.status, run.unchanged, run.added) == ("completed", written, FILES - written)
    assert run.embeddings_computed == FILES - written
    assert CodeChunk.objects.count() == FILES
