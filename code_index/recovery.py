"""Runs nobody is finishing: a worker died under one (its repository's lock is free), or one waited too
long for the agent's files or for a worker.

A run holds a PostgreSQL advisory lock on its repository's index for as long as it works; the server
drops the lock when the worker's connection dies. A run that was running once its lock is free is
handed to a worker again by beat's sweep (every minute; up to CODE_INDEX_RESUME_ATTEMPTS times, then
closed as interrupted) and closed by a new request of the repository, which picks up where it
stopped; one that waited for the agent's files or for a worker longer than CODE_INDEX_STALE_SECONDS
is closed. A crashed run never keeps a repository locked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from code_index.models import CodeIndex, CodeIndexRun, CodeUpload, RunPhase, RunStatus
from code_index.writer import merge_pending_keywords, refresh_totals
from memory_platform.db.locks import advisory_lock

logger = logging.getLogger(__name__)

# Distinguishes these advisory locks (keyed by the index's id) from the lifecycle workers' ones.
LOCK_NAMESPACE = 0xC0DE


@contextmanager
def repository_lock(index_id: int) -> Iterator[bool]:
    with advisory_lock(LOCK_NAMESPACE, index_id) as acquired:
        yield acquired


def lock_is_free(index_id: int) -> bool:
    """Whether no process works on this index now (asked from a connection not holding the lock)."""
    with repository_lock(index_id) as acquired:
        return acquired


def close_stale_runs(*, index: CodeIndex | None = None, resume: Callable[[int], None] | None = None) -> int:
    """Close the runs nobody will finish: running with their lock free (the worker died), or
    waiting for files or a worker for longer than CODE_INDEX_STALE_SECONDS. With ``resume`` (beat's
    sweep) a run whose worker died is queued again and ``resume(run_id)`` called after the commit,
    until it has been resumed CODE_INDEX_RESUME_ATTEMPTS times. Returns how many were closed."""
    open_runs = CodeIndexRun.objects.filter(status=RunStatus.INDEXING)
    if index is not None:
        open_runs = open_runs.filter(index=index)
    stale = timezone.now() - timedelta(seconds=settings.CODE_INDEX_STALE_SECONDS)
    minutes = round(settings.CODE_INDEX_STALE_SECONDS / 60)
    closed = 0
    for run in open_runs:
        if run.phase == RunPhase.RECEIVING and run.heartbeat_at < stale:
            reason = f"no files arrived for {minutes} min: send the manifest again to start over"
        elif run.phase == RunPhase.QUEUED and run.heartbeat_at < stale:
            reason = f"no worker took the run within {minutes} min: is the Celery worker running?"
        elif run.phase == RunPhase.RUNNING:
            if resume is not None and run.resumed < settings.CODE_INDEX_RESUME_ATTEMPTS:
                _requeue(run, resume)
                continue
            reason = (
                f"interrupted: the worker stopped after {run.indexed_files} of {run.total_files} files; "
                "what it wrote stays, and the next run picks up from there"
            )
        else:
            continue
        with repository_lock(run.index_id) as acquired:
            # Holding the lock, no worker is on this run; one that picks it up later finds it closed.
            if acquired and _close(run, reason):
                closed += 1
    return closed


def _requeue(run: CodeIndexRun, resume: Callable[[int], None]) -> None:
    """Queue a run whose worker died again (its lock free), for ``resume`` to hand to a worker."""
    with repository_lock(run.index_id) as acquired:
        if not acquired:
            return  # a worker is on it after all
        queued = CodeIndexRun.objects.filter(pk=run.pk, status=RunStatus.INDEXING, phase=RunPhase.RUNNING).update(
            phase=RunPhase.QUEUED, heartbeat_at=timezone.now(), resumed=F("resumed") + 1
        )
    if queued:
        logger.warning("code index run %s: its worker stopped after %s files; queued again", run.pk, run.indexed_files)
        transaction.on_commit(lambda: resume(run.pk))


def _close(run: CodeIndexRun, reason: str) -> bool:
    now = timezone.now()
    closed = CodeIndexRun.objects.filter(pk=run.pk, status=RunStatus.INDEXING, phase=run.phase).update(
        status=RunStatus.FAILED, phase=RunPhase.FINISHED, completed_at=now, heartbeat_at=now, error=reason
    )
    if closed:
        CodeUpload.objects.filter(run_id=run.pk).delete()
        refresh_totals(CodeIndex.objects.get(pk=run.index_id))
        merge_pending_keywords()  # what the dead run wrote
    return bool(closed)
