import os

from celery import Celery
from celery.signals import before_task_publish

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
