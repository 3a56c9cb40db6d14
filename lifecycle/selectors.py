"""Reads of the lifecycle: proposals and runs as a principal may see them, and duplicate candidates."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.db.models import Count, Exists, OuterRef, QuerySet

from lifecycle.models import (
    ConsolidationProposal,
    LifecycleRun,
    ProposalKind,
    ProposalMemory,
    ProposalState,
    RunKind,
    with_members,
)
from memories import validation
from memories.hints import write_hints
from memories.models import Memory
from memories.selectors import memory_status_report, memory_visibility_q, memory_visible_queryset
from memories.similarity import alive
from memory_platform.db.tenancy import outer_organization
from memory_platform.exceptions import NotFound, ValidationError
from memory_platform.pagination import (
    Keyset,
    Kind,
    decode_cursor,
    encode_cursor,
    fingerprint,
    invalid_cursor,
    keyset_page,
)
from memory_platform.timefmt import iso
from organizations.models import Role
from organizations.principal import Principal


def proposal_visible_queryset(principal: Principal) -> QuerySet[ConsolidationProposal]:
    """The organization's proposals, less those naming a memory the principal may not see
    (another person's private memory): "not yours" is "not found"."""
    hidden = Memory.objects.filter(organization=principal.organization).exclude(memory_visibility_q(principal))
    return ConsolidationProposal.objects.filter(organization=principal.organization).exclude(naming(hidden))


def naming(memories: QuerySet[Memory]) -> Exists:
    """Whether a proposal names one of ``memories`` (a subquery asked of each proposal)."""
    return Exists(
        ProposalMemory.objects.filter(
            consolidationproposal_id=OuterRef("pk"), organization=outer_organization(), memory__in=memories
        )
    )


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
    return ConsolidationProposal.objects.prefetch_related(with_members()).get(pk=proposal.pk)


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
                "started_at": iso(run.started_at),
                "finished_at": iso(run.finished_at),
                "counts": run.counts,
            }
    return {"open_proposals": open_by_kind, "last_runs": last_runs}


def platform_status(principal: Principal) -> dict[str, Any]:
    """What platform-status and GET /api/v1/status/ both answer: the caller, the platform's health,
    the memories it sees (memories.selectors.memory_status_report) and the workers' proposals and runs."""
    return {**memory_status_report(principal), "lifecycle": lifecycle_report(principal)}


@dataclass(frozen=True)
class Cluster:
    """Memories that look like one another, as ``memory-consolidate`` offers them to an agent."""

    kind: str  # duplicate, contradiction
    memory_ids: list[UUID]
    similarity: float
    exact: bool = False
    proposal_id: UUID | None = None
    differences: dict[str, Any] = field(default_factory=dict)


# A page of the listing looks at the latest writes the worker may not have seen yet: at most this
# many, for at most this long (the open proposals come first and cost one query); its next_cursor
# goes on from there.
CANDIDATE_LOOKAHEAD = 100
CANDIDATE_CHUNK = 10
LISTING_SECONDS = 2.0
CANDIDATES_PER_PAGE = 20
_PROPOSALS = Keyset.of(("-created_at", Kind.MOMENT), ("-id", Kind.UUID))
_RECENT = Keyset.of(("-updated_at", Kind.MOMENT), ("-id", Kind.UUID))
_PHASES = ("proposals", "recent")


@dataclass(frozen=True)
class Candidates:
    clusters: list[Cluster]
    # Where the next page starts, when the listing stopped early (its limit, its time, its lookahead).
    next_cursor: str | None


def duplicate_candidates(principal: Principal, *, limit: int | None = None, cursor: str | None = None) -> Candidates:
    """Open proposals the principal can see, then what the latest writes look like (not yet seen by
    the worker): what their write hints say (memories.hints, the same rules as a write's answer),
    within the principal's visible scope, newest first; about ``limit`` clusters a page (a memory's
    clusters are never split between pages), each page bounded in time."""
    principal.require(Role.AGENT, "finding duplicates to merge")
    limit = limit or CANDIDATES_PER_PAGE
    listing = fingerprint({"listing": "duplicate-candidates", "limit": limit})
    phase: str = _PHASES[0]
    after: list[Any] | None = None
    if cursor:
        payload = decode_cursor(cursor, listing)
        if payload.get("p") not in _PHASES:
            raise invalid_cursor()
        phase = str(payload["p"])
        after = (_PROPOSALS if phase == "proposals" else _RECENT).load(payload["k"]) if payload["k"] else None
    proposals = proposal_list(principal).filter(kind__in=[ProposalKind.MERGE, ProposalKind.CONTRADICTION])
    clusters: list[Cluster] = []
    if phase == "proposals":
        page = keyset_page(proposals, _PROPOSALS, limit=limit, after=after)
        clusters = [_proposal_cluster(proposal) for proposal in page.items]
        if page.last_key is not None:
            return Candidates(clusters, encode_cursor(listing, page.last_key, p="proposals"))
        after = None
    # Pairs an open proposal already names are listed as that proposal, on whichever page.
    seen = {frozenset(ids) for ids in proposals.values_list("memory_ids", flat=True)}
    return _recent_candidates(principal, clusters, seen, limit=limit, after=after, listing=listing)


def _proposal_cluster(proposal: ConsolidationProposal) -> Cluster:
    return Cluster(
        kind="contradiction" if proposal.kind == ProposalKind.CONTRADICTION else "duplicate",
        memory_ids=list(proposal.memory_ids),
        similarity=float(proposal.evidence.get("similarity", 0.0)),
        exact=bool(proposal.evidence.get("exact", False)),
        proposal_id=proposal.pk,
        differences={k: v for k, v in proposal.evidence.items() if k in ("numbers", "values", "negations")},
    )


def _recent_candidates(
    principal: Principal, clusters: list[Cluster], seen: set[frozenset[UUID]], *, limit: int,
    after: list[Any] | None, listing: str,
) -> Candidates:  # fmt: skip
    recent = alive(memory_visible_queryset(principal))
    if after is not None:
        recent = recent.filter(_RECENT.after(after))
    rows = list(recent.order_by(*_RECENT.order_by())[: CANDIDATE_LOOKAHEAD + 1])
    scanned, more = rows[:CANDIDATE_LOOKAHEAD], len(rows) > CANDIDATE_LOOKAHEAD
    deadline = time.monotonic() + LISTING_SECONDS
    last_done: Memory | None = None
    stopped = False
    for start in range(0, len(scanned), CANDIDATE_CHUNK):
        if start and time.monotonic() > deadline:  # every page looks at one chunk at least
            stopped = True
            break
        chunk = scanned[start : start + CANDIDATE_CHUNK]
        hints = write_hints(chunk)
        for memory in chunk:
            found = hints[memory.pk]
            new: list[Cluster] = []
            for kind, hint in [*(("contradiction", h) for h in found.conflicts),
                               *(("duplicate", h) for h in found.possible_duplicates)]:  # fmt: skip
                pair = frozenset({memory.pk, hint.id})
                if pair not in seen and all(set(c.memory_ids) != pair for c in new):
                    new.append(Cluster(kind, sorted(pair), hint.similarity, hint.exact, differences=hint.differences))
            if clusters and len(clusters) + len(new) > limit:
                stopped = True
                break
            clusters.extend(new)
            seen.update(frozenset(c.memory_ids) for c in new)
            last_done = memory
        if stopped:
            break
    if not (stopped or more):
        return Candidates(clusters, None)
    key = _RECENT.key_of(last_done) if last_done is not None else (_RECENT.dump(after) if after else [])
    return Candidates(clusters, encode_cursor(listing, key, p="recent"))
