"""Expiry: a memory whose ``valid_until`` has passed leaves default reads by itself (the selectors
filter on validity); this records each expiry once, as an audit event curators can see."""

from __future__ import annotations

import time

from django.db.models import CharField, Exists, OuterRef
from django.db.models.functions import Cast
from django.utils import timezone

from lifecycle.consolidation import WORKER
from lifecycle.models import LifecycleRun, RunKind, RunStatus
from memories.models import Memory
from memory_platform.bulk import copy_values
from organizations.audit import audit_values
from organizations.models import AuditEvent, Organization
from organizations.principal import Principal

EXPIRE_ACTION = "memory.expire"
BATCH = 1000


def expiry_run(*, organization: Organization) -> LifecycleRun:
    """Audit events for memories that expired since they were last looked at; idempotent."""
    run = LifecycleRun.objects.create(organization=organization, kind=RunKind.EXPIRY)
    started = time.monotonic()
    now = timezone.now()
    recorded = AuditEvent.objects.filter(
        organization=organization,
        action=EXPIRE_ACTION,
        target_type="memory",
        target_id=Cast(OuterRef("pk"), output_field=CharField()),
    )
    expired = (
        Memory.objects.filter(organization=organization, deleted_at__isnull=True, valid_until__lte=now)
        .exclude(Exists(recorded))
        .values_list("pk", "valid_until", "title")
    )
    actor = Principal.for_operator(organization, WORKER)
    count = 0
    rows = list(expired[:BATCH])
    while rows:
        copy_values(
            AuditEvent,
            [
                audit_values(
                    principal=actor,
                    action=EXPIRE_ACTION,
                    target_type="memory",
                    target_id=pk,
                    reason="valid_until passed",
                    data={"valid_until": valid_until.isoformat() if valid_until else None, "title": title},
                )
                for pk, valid_until, title in rows
            ],
        )
        count += len(rows)
        rows = list(expired[:BATCH]) if len(rows) == BATCH else []
    run.status = RunStatus.COMPLETED
    run.finished_at = timezone.now()
    run.seconds_used = round(time.monotonic() - started, 3)
    run.counts = {"expired": count}
    run.save()
    return run
