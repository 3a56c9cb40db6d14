import os

from celery import Celery
from celery.signals import beat_init, before_task_publish, worker_ready

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
