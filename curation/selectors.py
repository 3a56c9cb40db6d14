"""The dashboard's numbers for one organization, as one member may see them.

A handful of aggregate queries, whatever the organization's size. Counts include every memory of
the organization (a personal memory is counted, never named); lists that name memories leave out
other people's personal ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from lifecycle.decay import least_fresh
from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalState
from memories.models import RULE_TYPES, AuthorKind, EmbeddingStatus, Memory, MemoryType, Status
from memories.selectors import memory_counts
from organizations.models import Organization, User

DAYS = 30
TOP_TAGS = 10
LEAST_FRESH = 8


@dataclass(frozen=True)
class Dashboard:
    organization: Organization
    total: int
    by_status: list[tuple[str, int]]
    by_type: list[tuple[str, int]]
    days: list[date]
    written_by_agents: list[int]
    written_by_people: list[int]
    open_proposals: list[tuple[str, int]]
    embeddings: dict[str, int]
    runs: list[LifecycleRun]
    tags: list[tuple[str, int]]
    least_fresh: list[tuple[Memory, float]]
    # Rules (memories.models.RULE_TYPES) an agent wrote that no curator has verified or locked yet.
    unreviewed_agent_rules: int = 0

    @property
    def open_proposal_count(self) -> int:
        return sum(n for _, n in self.open_proposals)


def _alive(organization: Organization) -> QuerySet[Memory]:
    return Memory.objects.filter(organization=organization, deleted_at__isnull=True)


def _labelled(found: dict[str, int], labels: dict[str, str]) -> list[tuple[str, int]]:
    return [(label, found[value]) for value, label in labels.items() if found.get(value)]


def _written_per_day(organization: Organization, today: date) -> tuple[list[date], list[int], list[int]]:
    first = today - timedelta(days=DAYS - 1)
    rows = (
        Memory.objects.filter(organization=organization, created_at__date__gte=first)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values_list("day")
        .annotate(agents=Count("pk", filter=Q(author_kind=AuthorKind.AGENT)), all=Count("pk"))
    )
    by_day = {day: (agents, total - agents) for day, agents, total in rows}
    days = [first + timedelta(days=i) for i in range(DAYS)]
    return days, [by_day.get(d, (0, 0))[0] for d in days], [by_day.get(d, (0, 0))[1] for d in days]


def _top_tags(organization: Organization) -> list[tuple[str, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tag, count(*) FROM memories_memory, unnest(tags) AS tag "
            "WHERE organization_id = %s AND deleted_at IS NULL GROUP BY tag ORDER BY count(*) DESC, tag LIMIT %s",
            [organization.pk, TOP_TAGS],
        )
        return [(str(tag), int(count)) for tag, count in cursor.fetchall()]


def _least_fresh(organization: Organization, user: User | Any) -> list[tuple[Memory, float]]:
    """Alive, unreviewed memories least in use, with their freshness now (never read comes first)."""
    found = least_fresh(organization, statuses=[Status.DRAFT, Status.ACTIVE], viewer_id=user.pk, limit=LEAST_FRESH)
    memories = Memory.objects.prefetch_related("access").in_bulk([memory_id for memory_id, _ in found])
    return [(memories[memory_id], freshness) for memory_id, freshness in found if memory_id in memories]


def dashboard(organization: Organization, user: User | Any) -> Dashboard:
    alive = _alive(organization)
    counts = memory_counts(alive)
    days, agents, people = _written_per_day(organization, timezone.localdate())
    embeddings = dict(
        alive.filter(embedding_status__in=[EmbeddingStatus.PENDING, EmbeddingStatus.FAILED])
        .order_by()
        .values_list("embedding_status")
        .annotate(n=Count("pk"))
    )
    proposals = (
        ConsolidationProposal.objects.filter(organization=organization, state=ProposalState.OPEN)
        .order_by()
        .values_list("kind")
        .annotate(n=Count("pk"))
    )
    return Dashboard(
        organization=organization,
        total=counts.total,
        by_status=_labelled(counts.by_status, dict(Status.choices)),
        by_type=_labelled(counts.by_type, dict(MemoryType.choices)),
        days=days,
        written_by_agents=agents,
        written_by_people=people,
        open_proposals=[(str(kind), int(n)) for kind, n in proposals],
        embeddings={str(k): int(v) for k, v in embeddings.items()},
        runs=list(LifecycleRun.objects.filter(organization=organization).order_by("-started_at")[:5]),
        tags=_top_tags(organization),
        least_fresh=_least_fresh(organization, user),
        unreviewed_agent_rules=alive.filter(
            superseded_by__isnull=True,
            status__in=[Status.DRAFT, Status.ACTIVE],
            author_kind=AuthorKind.AGENT,
            memory_type__in=RULE_TYPES,
        ).count(),
    )
