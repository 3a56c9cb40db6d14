"""Are the background worker and beat alive? Beat sends ``memory_platform.tasks.worker_heartbeat``
every ``HEARTBEAT_INTERVAL_SECONDS`` and records that it did (memory_platform/celery.py); the worker
running it records the time too. A heartbeat older than ``HEARTBEAT_STALE_SECONDS`` means that one
has stopped: without a worker embeddings stay pending and nothing runs; without beat the periodic
work (sweeps, lifecycle runs, expiry) does not start. /healthz and the status tools report both,
with the backlog."""

from __future__ import annotations

import socket
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory_platform.models import Heartbeat

WORKER = "worker"
BEAT = "beat"


def beat(name: str = WORKER) -> None:
    Heartbeat.objects.update_or_create(
        name=name, defaults={"beat_at": timezone.now(), "hostname": socket.gethostname()[:255]}
    )


def liveness(name: str = WORKER) -> dict[str, Any]:
    """``ok``: a heartbeat fresher than HEARTBEAT_STALE_SECONDS; when it was, and from which host.
    For the worker, beat's report comes along under ``beat`` (``ok`` then needs both)."""
    report = _one(name)
    if name == WORKER:
        scheduler = _one(BEAT)
        report["beat"] = scheduler
        if report["ok"] and not scheduler["ok"]:
            report["ok"] = False
            report["problem"] = f"beat, which starts the periodic work, has stopped ({scheduler['problem']})"
        elif not report["ok"] and scheduler["ok"]:
            report["problem"] = "beat sends work but no worker runs it: is a worker running?"
    return report


def _one(name: str) -> dict[str, Any]:
    last = Heartbeat.objects.filter(name=name).first()
    if last is None:
        running = "a worker" if name == WORKER else "beat"
        return {
            "ok": False,
            "last_heartbeat": None,
            "seconds_ago": None,
            "problem": f"no heartbeat yet: is {running} running?",
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
        report["problem"] = f"no heartbeat for {round(age)} s: {name} has stopped"
    return report
