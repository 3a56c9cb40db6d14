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
from memory_platform.timefmt import iso

WORKER = "worker"
BEAT = "beat"
# When a worker (with its beat) was last started: until both have beaten since, they are starting,
# not stopped (a fresh start has no heartbeat, or its last run's).
STARTED = "worker-started"


def beat(name: str = WORKER) -> None:
    Heartbeat.objects.update_or_create(
        name=name, defaults={"beat_at": timezone.now(), "hostname": socket.gethostname()[:255]}
    )


def started() -> None:
    """A worker and its beat are being started (manage.py serve, on each start and restart)."""
    beat(STARTED)


def status(*, database_ok: bool, worker: dict[str, Any]) -> str:
    """The one word health reports give: ok, starting (a worker just started has not beaten yet),
    or degraded (the database lacks pgvector, or the worker or beat has stopped)."""
    if not database_ok:
        return "degraded"
    if worker["ok"]:
        return "ok"
    return "starting" if worker.get("starting") else "degraded"


def liveness(name: str = WORKER) -> dict[str, Any]:
    """``ok``: a heartbeat fresher than HEARTBEAT_STALE_SECONDS; when it was, and from which host.
    For the worker, beat's report comes along under ``beat`` (``ok`` then needs both)."""
    report = _one(name)
    if name == WORKER:
        scheduler = _one(BEAT)
        starting = _starting()
        if starting is not None:
            return {**report, "beat": scheduler, "ok": False, "starting": True, "problem": starting}
        report["beat"] = scheduler
        if report["ok"] and not scheduler["ok"]:
            report["ok"] = False
            report["problem"] = f"beat, which starts the periodic work, has stopped ({scheduler['problem']})"
        elif not report["ok"] and scheduler["ok"]:
            report["problem"] = "beat sends work but no worker runs it: is a worker running?"
    return report


def _starting() -> str | None:
    """Why the worker counts as starting (started moments ago, not both beaten since), else None."""
    beats = dict(Heartbeat.objects.filter(name__in=[STARTED, WORKER, BEAT]).values_list("name", "beat_at"))
    start = beats.get(STARTED)
    if start is None or (timezone.now() - start).total_seconds() > settings.HEARTBEAT_STALE_SECONDS:
        return None
    waiting = [label for label, name in (("the worker", WORKER), ("beat", BEAT)) if (beats.get(name) or start) <= start]
    if not waiting:
        return None
    return f"starting: {' and '.join(waiting)} started {round((timezone.now() - start).total_seconds())} s ago"


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
        "last_heartbeat": iso(last.beat_at),
        "seconds_ago": round(age, 1),
        "host": last.hostname,
    }
    if not ok:
        report["problem"] = f"no heartbeat for {round(age)} s: {name} has stopped"
    return report
