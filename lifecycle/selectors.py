"""Reads of the lifecycle: proposals and runs as a principal may see them, and duplicate candidates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection
from django.db.models import Count, Exists, OuterRef, QuerySet

from lifecycle import detection
from lifecycle.detection import MatchKind
from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalKind, ProposalState, RunKind
from memories import validation
from memories.fields import vector_text
from memories.models import Memory
from memories.selectors import memory_visibility_q, memory_visible_queryset
from memory_platform.db.transactions import savepoint_if_in_transaction
from memory_platform.exceptions import NotFound, ValidationError
from organizations.models import Role
from organizations.principal import Principal


def proposal_visible_queryset(principal: Principal) -> QuerySet[ConsolidationProposal]:
    """The organization's proposals, less those naming a memory the principal may not see
    (another person's private memory): "not yours" is "not found"."""
    hidden = Memory.objects.filter(organization=principal.organization).exclude(memory_visibility_q(principal))
    naming_hidden = ConsolidationProposal.memories.through.objects.filter(
        consolidationproposal_id=OuterRef("pk"), memory__in=hidden
    )
    return ConsolidationProposal.objects.filter(organization=principal.organization).exclude(Exists(naming_hidden))


def proposal_get(principal: Principal, proposal_id: Any, *, for_update: bool = False) -> ConsolidationProposal:
    parsed = validation.memory_id(proposal_id, "proposal_id")
    queryset = proposal_visible_queryset(principal).filter(pk=parsed)
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    proposal = queryset.first()
    if proposal is None:
        raise NotFound(f"proposal {parsed} not found")
    return proposal


def proposal_get_for_display(proposal: ConsolidationProposal) -> ConsolidationProposal:
    """The proposal as it stands now, with its memories, for an answer after a decision."""
    return ConsolidationProposal.objects.prefetch_related("memories").get(pk=proposal.pk)


def proposal_list(
    principal: Principal, *, state: str | None = ProposalState.OPEN, kind: str | None = None
) -> QuerySet[ConsolidationProposal]:
    queryset = proposal_visible_queryset(principal)
    if state:
        if state not in ProposalState.values:
            raise ValidationError(f"unknown state '{state}'; use one of: {', '.join(ProposalState.values)}")
        queryset = queryset.filter(state=state)
    if kind:
        if kind not in ProposalKind.values:
            raise ValidationError(f"unknown kind '{kind}'; use one of: {', '.join(ProposalKind.values)}")
        queryset = queryset.filter(kind=kind)
    return queryset.order_by("-created_at", "-pk")


def run_list(principal: Principal, *, kind: str | None = None) -> QuerySet[LifecycleRun]:
    queryset = LifecycleRun.objects.filter(organization=principal.organization)
    if kind:
        if kind not in RunKind.values:
            raise ValidationError(f"unknown kind '{kind}'; use one of: {', '.join(RunKind.values)}")
        queryset = queryset.filter(kind=kind)
    return queryset.order_by("-started_at", "-pk")


def lifecycle_report(principal: Principal) -> dict[str, Any]:
    """For status tools and pages: open proposals by kind and the last run of each kind."""
    open_by_kind = dict(proposal_list(principal).values_list("kind").annotate(n=Count("pk")).order_by())
    last_runs = {}
    for kind in RunKind.values:
        run = run_list(principal, kind=kind).first()
        if run is not None:
            last_runs[kind] = {
                "status": run.status,
                "started_at": run.started_at.isoformat(),
                "finished_at": run.finished_at.isoformat() if run.finished_at else None,
                "counts": run.counts,
            }
    return {"open_proposals": open_by_kind, "last_runs": last_runs}


@dataclass(frozen=True)
class Cluster:
    """Memories that look like one another, as ``memory-consolidate`` offers them to an agent."""

    kind: str  # duplicate, contradiction
    memory_ids: list[UUID]
    similarity: float
    exact: bool = False
    proposal_id: UUID | None = None
    differences: dict[str, Any] = field(default_factory=dict)


CANDIDATE_LOOKAHEAD = 100


def duplicate_candidates(principal: Principal, *, limit: int = 20) -> list[Cluster]:
    """Open proposals the principal can see, then what the latest writes look like (not yet seen by
    the worker): duplicates and contradiction candidates within the principal's visible scope."""
    principal.require(Role.AGENT, "finding duplicates to merge")
    clusters = [
        Cluster(
            kind="contradiction" if proposal.kind == ProposalKind.CONTRADICTION else "duplicate",
            memory_ids=list(proposal.memory_ids),
            similarity=float(proposal.evidence.get("similarity", 0.0)),
            exact=bool(proposal.evidence.get("exact", False)),
            proposal_id=proposal.pk,
            differences={k: v for k, v in proposal.evidence.items() if k in ("numbers", "values", "negations")},
        )
        for proposal in proposal_list(principal).filter(kind__in=[ProposalKind.MERGE, ProposalKind.CONTRADICTION])[
            :limit
        ]
    ]
    seen = {frozenset(cluster.memory_ids) for cluster in clusters}
    visible = memory_visible_queryset(principal)
    recent = detection.alive(visible).order_by("-updated_at")[:CANDIDATE_LOOKAHEAD]
    for memory in recent:
        if len(clusters) >= limit:
            break
        for other, similarity in detection.nearest(memory, limit=5, candidates=visible):
            match = detection.classify(memory, other, similarity)
            if match is None or match.kind == MatchKind.RELATED or frozenset(match.pair) in seen:
                continue
            seen.add(frozenset(match.pair))
            clusters.append(
                Cluster(
                    kind=str(match.kind),
                    memory_ids=list(match.pair),
                    similarity=round(similarity, 4),
                    exact=match.exact,
                    differences=match.differences,
                )
            )
    return clusters[:limit]


@dataclass(frozen=True)
class PossibleDuplicate:
    id: UUID
    title: str
    similarity: float


WRITE_HINTS = 3
# The new memory's nearest alive neighbours of the same scope (which its writer can see: it just
# wrote there). The vector is sent as a value, so PostgreSQL walks the HNSW graph for it, with the
# iterative scan (so that enough rows of the scope are found) and pgvector's default ef_search (40:
# three hints need no more), set for this query alone and sent with it in one round trip.
_WRITE_HINTS_SQL = """
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '40', true);
SELECT m.id, m.title, 1 - (m.embedding <=> %(vector)s::vector) AS similarity
FROM memories_memory AS m
WHERE m.organization_id = %(organization)s AND m.scope_type = %(scope_type)s
  AND m.repository_id IS NOT DISTINCT FROM %(repository)s AND m.owner_id IS NOT DISTINCT FROM %(owner)s
  AND m.deleted_at IS NULL AND m.superseded_by_id IS NULL AND m.embedding IS NOT NULL AND m.id <> %(id)s
ORDER BY m.embedding <=> %(vector)s::vector
LIMIT %(limit)s
"""


def possible_duplicates(memories: list[Memory]) -> dict[UUID, list[PossibleDuplicate]]:
    """The write-time hint: for each just-written memory, up to three alive memories of its scope at
    least ``CONSOLIDATION_RELATED`` similar, so an agent can update one instead of adding another."""
    hints: dict[UUID, list[PossibleDuplicate]] = {memory.pk: [] for memory in memories}
    embedded = [memory for memory in memories if memory.embedding is not None]
    if not embedded:
        return hints
    # Two statements sent as one run in one (implicit) transaction, which the settings last for;
    # inside a caller's transaction, a savepoint keeps them to it as before.
    with savepoint_if_in_transaction(), connection.cursor() as cursor:
        for memory in embedded:
            cursor.execute(
                _WRITE_HINTS_SQL,
                {
                    "vector": vector_text(list(memory.embedding)),
                    "organization": memory.organization_id,
                    "scope_type": memory.scope_type,
                    "repository": memory.repository_id,
                    "owner": memory.owner_id,
                    "id": memory.pk,
                    "limit": WRITE_HINTS,
                },
            )
            cursor.nextset()
            hints[memory.pk] = [
                PossibleDuplicate(other_id, title, round(float(similarity), 4))
                for other_id, title, similarity in cursor.fetchall()
                if similarity >= settings.CONSOLIDATION_RELATED
            ]
    return hints
