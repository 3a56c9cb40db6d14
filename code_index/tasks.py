"""Code index tasks: thin, each calling the pipeline."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from code_index import pipeline, recovery
from code_index.models import CodeIndex, Source

logger = logging.getLogger(__name__)

# A run whose repository's lock is held (by a watch re-scan) is tried again this often, this many times.
BUSY_COUNTDOWN = 5
BUSY_RETRIES = 120


@shared_task(bind=True, max_retries=BUSY_RETRIES, ignore_result=True, acks_late=True)
def code_index_run(self: Any, run_id: int) -> dict[str, Any] | None:
    """Execute one queued run. Delivered again after a worker crash, it resumes the run (files
    already written are unchanged by then); a run closed meanwhile is left alone."""
    try:
        run = pipeline.run_index(run_id)
    except pipeline.Busy as busy:
        raise self.retry(exc=busy, countdown=BUSY_COUNTDOWN) from busy
    if run is None:
        return None
    logger.info("code index run %s %s: %s files, %s chunks", run.pk, run.status, run.total_files, run.chunks_written)
    return {"run": run.pk, "status": run.status}


@shared_task(ignore_result=True)
def code_index_watch() -> int:
    """Beat's entry point: hand runs a dead worker left open to a worker again (or close them), then
    re-scan each watched index."""
    closed = recovery.close_stale_runs(resume=code_index_run.delay)
    if closed:
        logger.warning("closed %s code index runs nobody was finishing", closed)
    ids = list(CodeIndex.objects.filter(watch=True, source=Source.PATH).values_list("pk", flat=True))
    for index_id in ids:
        code_index_rescan.delay(index_id)
    return len(ids)


@shared_task(ignore_result=True, acks_late=True)
def code_index_rescan(index_id: int) -> dict[str, Any] | None:
    run = pipeline.rescan(index_id)
    return {"run": run.pk, "status": run.status} if run is not None else None
