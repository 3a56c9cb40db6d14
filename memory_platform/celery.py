import logging
import os
import time

from celery import Celery
from celery.signals import (
    after_setup_logger,
    after_setup_task_logger,
    beat_init,
    before_task_publish,
    task_failure,
    task_postrun,
    task_prerun,
    worker_ready,
)

from memory_platform import logs, metrics

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")

app = Celery("memory_platform")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

HEARTBEAT_TASK = "memory_platform.tasks.worker_heartbeat"


@before_task_publish.connect
def _beat_sends_a_heartbeat(sender: object = None, **kwargs: object) -> None:
    """Beat, sending the worker's heartbeat task, records its own: so beat and the worker are each
    known to be alive (a worker without beat, or beat without a worker, is told apart)."""
    if sender == HEARTBEAT_TASK:
        from memory_platform import heartbeat

        heartbeat.beat(heartbeat.BEAT)


@worker_ready.connect
def _worker_beats_when_ready(**kwargs: object) -> None:
    """A worker says it is alive as soon as it can take work, not at beat's first heartbeat task."""
    from memory_platform import heartbeat

    heartbeat.beat(heartbeat.WORKER)


@beat_init.connect
def _beat_beats_when_it_starts(**kwargs: object) -> None:
    from memory_platform import heartbeat

    heartbeat.beat(heartbeat.BEAT)


# The request id travels with the tasks a request enqueues (a message header), and each task's log
# lines carry it (or the task's own id, for tasks beat or another task started).
REQUEST_ID_TASK_HEADER = "request_id"


@before_task_publish.connect
def _send_the_request_id(headers: dict[str, object] | None = None, **kwargs: object) -> None:
    request_id = logs.current_request_id()
    if request_id is not None and headers is not None:
        headers.setdefault(REQUEST_ID_TASK_HEADER, request_id)


# When each running task started (by task id): its run time goes to metrics.TASK_SECONDS.
_started: dict[str, float] = {}


@task_prerun.connect
def _task_starts(task_id: str | None = None, task: object = None, **kwargs: object) -> None:
    request = getattr(task, "request", None)
    request_id = getattr(request, REQUEST_ID_TASK_HEADER, None) or task_id or ""
    logs.clear()
    logs.bind(request_id=str(request_id))
    if task_id is not None:
        _started[task_id] = time.perf_counter()


@task_postrun.connect
def _task_ends(task_id: str | None = None, task: object = None, **kwargs: object) -> None:
    started = _started.pop(task_id or "", None)
    if started is not None:
        metrics.TASK_SECONDS.labels(getattr(task, "name", "unknown")).observe(time.perf_counter() - started)
    logs.clear()


@task_failure.connect
def _task_failed(sender: object = None, **kwargs: object) -> None:
    metrics.TASK_FAILURES.labels(getattr(sender, "name", "unknown")).inc()


@after_setup_logger.connect
@after_setup_task_logger.connect
def _log_lines_as_the_web_does(logger: logging.Logger | None = None, **kwargs: object) -> None:
    """The worker's log lines in LOG_FORMAT, with the request id of the task's request."""
    from django.conf import settings

    for handler in logger.handlers if logger is not None else ():
        handler.setFormatter(logs.formatter(settings.LOG_FORMAT))
        handler.addFilter(logs.ContextFilter())
