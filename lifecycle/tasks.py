"""Lifecycle tasks: thin, idempotent, one organization per task."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from lifecycle.consolidation import consolidation_run
from lifecycle.decay import decay_run
from lifecycle.expiry import expiry_run
from organizations.models import Organization

logger = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def lifecycle_consolidate_all() -> int:
    """Beat's entry point: one consolidation task per organization, so organizations run in parallel."""
    ids = list(Organization.objects.values_list("pk", flat=True))
    for organization_id in ids:
        lifecycle_consolidate.delay(organization_id)
    return len(ids)


@shared_task(bind=True, max_retries=3, ignore_result=True, acks_late=True)
def lifecycle_consolidate(self: Any, organization_id: int, full: bool = False) -> dict[str, Any] | None:
    organization = Organization.objects.filter(pk=organization_id).first()
    if organization is None:
        return None
    run = consolidation_run(organization=organization, full=full)
    if run is None:
        logger.info("consolidation of %s skipped: another worker is running it", organization.slug)
        return None
    return {"run": run.pk, **run.counts}


@shared_task(ignore_result=True)
def lifecycle_decay_all() -> int:
    ids = list(Organization.objects.values_list("pk", flat=True))
    for organization_id in ids:
        lifecycle_decay.delay(organization_id)
    return len(ids)


@shared_task(ignore_result=True, acks_late=True)
def lifecycle_decay(organization_id: int) -> dict[str, Any] | None:
    organization = Organization.objects.filter(pk=organization_id).first()
    run = decay_run(organization=organization) if organization else None
    return {"run": run.pk, **run.counts} if run else None


@shared_task(ignore_result=True)
def lifecycle_expire_all() -> int:
    """Record the expiries of every organization (cheap: one indexed query each)."""
    count = 0
    for organization in Organization.objects.all():
        count += expiry_run(organization=organization).counts["expired"]
    return count
