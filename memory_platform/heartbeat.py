"""Is the background worker alive? Beat sends ``memory_platform.tasks.worker_heartbeat`` every
``HEARTBEAT_INTERVAL_SECONDS``; the worker running it records the time. A heartbeat older than
``HEARTBEAT_STALE_SECONDS`` means the worker, or beat, has stopped: embeddings stay pending and the
lifecycle workers do not run. /healthz and the status tools report it, with the backlog."""

from __future__ import annotations

import socket
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory_platform.models import Heartbeat

WORKER = "worker"


def beat(name: str = WORKER) -> None:
    Heartbeat.objects.update_or_create(
        name=name, defaults={"beat_at": timezone.now(), "hostname": socket.gethostname()[:255]}
    )


def liveness(name: str = WORKER) -> dict[str, Any]:
    """``ok``: a heartbeat fresher than HEARTBEAT_STALE_SECONDS; when it was, and from which host."""
    last = Heartbeat.objects.filter(name=name).first()
    if last is None:
        return {
            "ok": False,
            "last_heartbeat": None,
            "seconds_ago": None,
            "problem": "no heartbeat yet: is a worker running?",
        }
    age = (timezone.now() - last.beat_at).total_seconds()
    ok = age <= settings.HEARTBEAT_STALE_SECONDS
    report: dict[str, Any] = {
        "ok": ok,
        "last_heartbeat": last.beat_at.isoformat(),
        "seconds_ago": round(age, 1),
        "host": last.hostname,
    }
    if not ok:
        report["problem"] = f"no heartbeat for {round(age)} s: the worker or beat has stopped"
    return report
