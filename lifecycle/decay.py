"""Freshness: how much a memory is still in use, a signal for curators (never a ranking multiplier).

    freshness = 2 ** (-idle_days / (half_life_days * (1 + log2(1 + access_count))))

``idle_days`` counts from the later of its last read and its last change; each doubling of the
reads adds one half-life, so a memory read often stays fresh longer. 1 is "in use today", 0.5 is
one half-life idle. Locked and verified memories, business rules, conventions and decision logs do
not decay: their freshness is 1.

Freshness is kept in the narrow access table (``memories_memoryaccess``), written by one statement
per organization: rewriting memory rows would re-insert each into every index of the table. Stale
memories (draft or active, freshness under ``DECAY_STALE_FRESHNESS``, unread for
``DECAY_STALE_DAYS``) become *stale* proposals; only a curator deprecates them.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from lifecycle.consolidation import WORKER
from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalKind, ProposalState, RunKind, RunStatus
from lifecycle.services import proposal_create
from memories.models import Memory, MemoryType, ScopeType, Status
from memory_platform.db.locks import advisory_lock
from memory_platform.db.tenancy import outer_organization, same_organization
from organizations.models import Organization

DECAY_LOCK_NAMESPACE = 0x1C0D
EXEMPT_STATUSES = (Status.LOCKED, Status.VERIFIED)
EXEMPT_TYPES = (MemoryType.BUSINESS_RULE, MemoryType.CONVENTION, MemoryType.DECISION_LOG)

# The formula above, at %(now)s, for memory ``m`` and its access row ``x`` (which may be missing).
# In double precision: with PostgreSQL's numeric (what its literals and extract() give) the power
# and the logarithm cost more than reading the rows (47 of 86 ms over 10,894 memories).
_FRESHNESS_NOW = """
    CASE WHEN m.status = ANY(%(exempt_statuses)s) OR m.memory_type = ANY(%(exempt_types)s) THEN float8 '1'
    ELSE power(float8 '2', -greatest(float8 '0',
            extract(epoch FROM %(now)s - greatest(x.last_accessed_at, m.updated_at))::float8 / float8 '86400')
        / (%(half_life)s::float8 * (1 + ln(1 + coalesce(x.access_count, 0)::float8) / ln(float8 '2'))))
    END"""
_ALIVE = """
FROM memories_memory AS m
LEFT JOIN memories_memoryaccess AS x ON x.organization_id = m.organization_id AND x.memory_id = m.id
WHERE m.organization_id = %(organization)s AND m.deleted_at IS NULL AND m.superseded_by_id IS NULL"""

_FRESHNESS_UPSERT = f"""
INSERT INTO memories_memoryaccess AS a
    (organization_id, memory_id, access_count, last_accessed_at, freshness, freshness_at)
SELECT m.organization_id, m.id, coalesce(x.access_count, 0), x.last_accessed_at, {_FRESHNESS_NOW}, %(now)s
{_ALIVE}
ORDER BY m.id
ON CONFLICT ON CONSTRAINT memories_memoryaccess_pkey
DO UPDATE SET freshness = EXCLUDED.freshness, freshness_at = EXCLUDED.freshness_at
"""

_LEAST_FRESH = f"""
SELECT m.id, {_FRESHNESS_NOW} AS freshness
{_ALIVE} AND m.status = ANY(%(statuses)s) AND (m.scope_type <> %(personal)s OR m.owner_id = %(viewer)s)
ORDER BY freshness, x.last_accessed_at NULLS FIRST, m.updated_at, m.id
LIMIT %(limit)s
"""


def _formula(organization: Organization) -> dict[str, Any]:
    return {
        "now": timezone.now(),
        "organization": organization.pk,
        "half_life": float(settings.DECAY_HALF_LIFE_DAYS),
        "exempt_statuses": list(EXEMPT_STATUSES),
        "exempt_types": list(EXEMPT_TYPES),
    }


def freshness_update(organization: Organization) -> int:
    """Compute every alive memory's freshness now; returns how many were computed."""
    with connection.cursor() as cursor:
        cursor.execute(_FRESHNESS_UPSERT, _formula(organization))
        return int(cursor.rowcount)


def least_fresh(
    organization: Organization, *, statuses: list[str], viewer_id: Any, limit: int
) -> list[tuple[UUID, float]]:
    """The alive memories of ``statuses`` least in use, with their freshness computed now (the
    decay run's stored value is as old as the run; on a new platform there is none yet). Other
    people's personal memories are left out."""
    with connection.cursor() as cursor:
        cursor.execute(
            _LEAST_FRESH,
            {**_formula(organization), "statuses": statuses, "personal": ScopeType.USER, "viewer": viewer_id,
             "limit": limit},
        )  # fmt: skip
        return [(memory_id, float(freshness)) for memory_id, freshness in cursor.fetchall()]


def stale_memories(organization: Organization) -> list[Memory]:
    """Unreviewed memories that decayed below the floor, unread for long, and not already decided on."""
    idle_since = timezone.now() - timedelta(days=settings.DECAY_STALE_DAYS)
    decided = ConsolidationProposal.objects.filter(
        organization=outer_organization(),
        kind=ProposalKind.STALE,
        memory_ids__contains=[OuterRef("pk")],
        state__in=[ProposalState.OPEN, ProposalState.DISMISSED],
        # A curator's "not stale" holds until the memory changes.
        created_at__gte=OuterRef("updated_at"),
    )
    return list(
        Memory.objects.filter(
            same_organization("access"),
            organization=organization,
            deleted_at__isnull=True,
            superseded_by__isnull=True,
            status__in=[Status.DRAFT, Status.ACTIVE],
            access__freshness__lt=settings.DECAY_STALE_FRESHNESS,
        )
        .exclude(memory_type__in=EXEMPT_TYPES)
        .annotate(last_used=Greatest(Coalesce("access__last_accessed_at", "updated_at"), "updated_at"))
        .filter(Q(last_used__lt=idle_since))
        .exclude(Exists(decided))
        .select_related("access")
        .order_by("access__freshness", "pk")[: settings.DECAY_STALE_PER_RUN]
    )


def decay_run(*, organization: Organization) -> LifecycleRun | None:
    """Freshness for the whole organization, then stale proposals; None if another worker is on it."""
    with advisory_lock(DECAY_LOCK_NAMESPACE, organization.pk) as acquired:
        if not acquired:
            return None
        LifecycleRun.objects.filter(organization=organization, kind=RunKind.DECAY, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, finished_at=timezone.now(), errors="interrupted: the worker stopped mid-run"
        )
        run = LifecycleRun.objects.create(organization=organization, kind=RunKind.DECAY)
        started = time.monotonic()
        computed = freshness_update(organization)
        proposed = 0
        for memory in stale_memories(organization):
            evidence = {
                "freshness": round(memory.freshness or 0.0, 4),
                "last_accessed_at": memory.last_accessed_at.isoformat() if memory.last_accessed_at else None,
                "access_count": memory.access_count,
                "updated_at": memory.updated_at.isoformat(),
            }
            _proposal, created = proposal_create(
                organization_id=organization.pk, kind=ProposalKind.STALE, memory_ids=[memory.pk],
                created_by=WORKER, evidence=evidence, run=run,
            )  # fmt: skip
            proposed += created
        run.status = RunStatus.COMPLETED
        run.finished_at = timezone.now()
        run.seconds_used = round(time.monotonic() - started, 3)
        run.counts = {"freshness_computed": computed, "stale_proposed": proposed}
        run.save()
        return run
