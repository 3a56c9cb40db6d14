"""The consolidation worker's pass over one organization.

Incremental: a run looks at the memories created or changed since the last run's watermark and
compares each with its exact twins and nearest neighbours, so a daily run costs in proportion to
what is new, not to the organization's size. Clear duplicates among unreviewed, agent-written
memories are merged at once (``CONSOLIDATION_AUTO_MERGE``), within a cap per run; everything else
becomes a proposal for curators.

Safe to run anywhere, any number of times: an advisory lock lets one run per organization work at
a time (the others return at once), each merge is one transaction, proposals are unique while open,
and a run killed half-way leaves its watermark unmoved, so the next run looks at the same memories
again and finds the finished merges already done.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from lifecycle.detection import dismissed
from lifecycle.merge import MemberBusy, memories_merge, survivor_rank
from lifecycle.models import LifecycleRun, ProposalKind, RunKind, RunStatus
from lifecycle.services import proposal_create
from memories.models import Memory, Status
from memories.similarity import Match, MatchKind, alive, classify, exact_twins, nearest
from memory_platform.db.locks import advisory_lock
from memory_platform.exceptions import DomainError
from organizations.models import Organization
from organizations.principal import Principal

logger = logging.getLogger(__name__)

WORKER = "lifecycle worker"
CHUNK = 200
# The advisory lock namespace of consolidation runs (one per organization at a time).
LOCK_NAMESPACE = 0x1C0C


@dataclass
class _Tally:
    examined: int = 0
    auto_merged: int = 0
    auto_changed: int = 0
    proposals: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def proposed(self, kind: str) -> None:
        self.proposals[kind] = self.proposals.get(kind, 0) + 1

    def as_counts(self) -> dict[str, Any]:
        return {
            "examined": self.examined,
            "auto_merged": self.auto_merged,
            "memories_changed": self.auto_changed,
            "proposals": self.proposals,
        }


def _written_by_agent(memory: Memory) -> bool:
    return memory.created_by_token_id is not None and memory.created_by_id is None


def _auto_mergeable(match: Match) -> bool:
    mode = settings.CONSOLIDATION_AUTO_MERGE
    return match.kind == MatchKind.DUPLICATE and (mode == "near" or (mode == "exact" and match.exact))


def consolidation_run(
    *, organization: Organization, full: bool = False, time_budget: float | None = None
) -> LifecycleRun | None:
    """One pass; None when another worker is already consolidating this organization."""
    budget = settings.CONSOLIDATION_TIME_BUDGET if time_budget is None else time_budget
    with advisory_lock(LOCK_NAMESPACE, organization.pk) as acquired:
        if not acquired:
            return None
        _close_interrupted(organization)
        run = LifecycleRun.objects.create(
            organization=organization, kind=RunKind.CONSOLIDATION, full=full, time_budget_seconds=budget
        )
        started = time.monotonic()
        tally = _Tally()
        try:
            watermark = _consolidate(organization, run, tally, full=full, deadline=started + budget)
        except Exception as error:  # recorded on the run, then raised for the task's retry policy
            _finish(run, tally, started, status=RunStatus.FAILED, error=f"{type(error).__name__}: {error}")
            raise
        _finish(run, tally, started, status=RunStatus.COMPLETED, watermark=watermark)
        return run


def _close_interrupted(organization: Organization) -> None:
    """Runs still 'running' while we hold the lock belong to a worker that died."""
    LifecycleRun.objects.filter(organization=organization, kind=RunKind.CONSOLIDATION, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, finished_at=timezone.now(), errors="interrupted: the worker stopped mid-run"
    )


def _finish(
    run: LifecycleRun, tally: _Tally, started: float, *, status: str, watermark: datetime | None = None, error: str = ""
) -> None:
    run.status = status
    run.finished_at = timezone.now()
    run.seconds_used = round(time.monotonic() - started, 3)
    run.counts = tally.as_counts()
    run.errors = "\n".join([*tally.errors, error]).strip()
    run.watermark = watermark
    run.save()


def _since(organization: Organization) -> datetime | None:
    last = (
        LifecycleRun.objects.filter(organization=organization, kind=RunKind.CONSOLIDATION, watermark__isnull=False)
        .order_by("-watermark")
        .values_list("watermark", flat=True)
        .first()
    )
    return last


def _consolidate(
    organization: Organization, run: LifecycleRun, tally: _Tally, *, full: bool, deadline: float
) -> datetime | None:
    """Returns the watermark the next run starts from."""
    now = timezone.now()
    since = None if full else _since(organization)
    changed = alive(Memory.objects.filter(organization=organization, updated_at__lte=now))
    if since is not None:
        changed = changed.filter(updated_at__gt=since)
    alive_count = alive(Memory.objects.filter(organization=organization)).count()
    cap = max(2, math.floor(alive_count * settings.CONSOLIDATION_AUTO_MERGE_SHARE))
    ordered = changed.order_by("updated_at", "pk").values_list("pk", "updated_at")
    ids = list(ordered)
    for start in range(0, len(ids), CHUNK):
        if time.monotonic() > deadline:
            # Out of time: the next run starts where this one stopped.
            tally.errors.append(f"time budget spent after {tally.examined} of {len(ids)} memories")
            return ids[start - 1][1] if start else since
        chunk = [pk for pk, _ in ids[start : start + CHUNK]]
        _consolidate_chunk(organization, run, tally, chunk, cap)
    return now


def _consolidate_chunk(
    organization: Organization, run: LifecycleRun, tally: _Tally, chunk: list[UUID], cap: int
) -> None:
    memories = list(alive(Memory.objects.filter(pk__in=chunk)).prefetch_related("access"))
    twins = exact_twins(memories)
    for memory in memories:
        tally.examined += 1
        matches = [Match(memory.pk, twin.pk, MatchKind.DUPLICATE, 1.0, True) for twin in twins.get(memory.pk, [])]
        seen = {match.other_id for match in matches}
        for other, similarity in nearest(memory, limit=settings.CONSOLIDATION_NEIGHBOURS):
            if other.pk not in seen:
                found = classify(memory, other, similarity)
                if found is not None:
                    matches.append(found)
        for match in matches:
            _act_on(organization, run, tally, match, cap)


def _act_on(organization: Organization, run: LifecycleRun, tally: _Tally, match: Match, cap: int) -> None:
    pair = sorted([match.memory_id, match.other_id])
    members = {m.pk: m for m in alive(Memory.objects.filter(pk__in=pair)).prefetch_related("access")}
    if len(members) < 2:
        return  # one of them was merged earlier in this run
    evidence = {
        "similarity": round(match.similarity, 4),
        "exact": match.exact,
        "match": str(match.kind),
        **match.differences,
    }
    if match.kind == MatchKind.RELATED:
        if match.differences or members[pair[0]].memory_type != members[pair[1]].memory_type:
            return  # about different things: nothing for a curator to decide
        kind = ProposalKind.MERGE
    elif match.kind == MatchKind.CONTRADICTION:
        kind = ProposalKind.CONTRADICTION
    else:
        kind = ProposalKind.MERGE
        automatic = (
            _auto_mergeable(match)
            and all(m.status in (Status.DRAFT, Status.ACTIVE) and _written_by_agent(m) for m in members.values())
            and tally.auto_changed + len(members) <= cap
            and not dismissed(pair)
        )
        if automatic and _merge(organization, run, tally, pair, evidence):
            return
    survivor = max(members.values(), key=survivor_rank).pk if kind == ProposalKind.MERGE else None
    _proposal, created = proposal_create(
        organization_id=organization.pk, kind=kind, memory_ids=pair, created_by=WORKER,
        survivor_id=survivor, evidence=evidence, run=run,
    )  # fmt: skip
    if created:
        tally.proposed(kind)


def _merge(
    organization: Organization, run: LifecycleRun, tally: _Tally, pair: list[UUID], evidence: dict[str, Any]
) -> bool:
    """Merge on our own; False leaves the pair to a curator. A pair whose row someone is changing
    right now counts as handled: that change brings it back to the next run."""
    actor = Principal.for_operator(organization, WORKER)
    try:
        memories_merge(
            principal=None, organization_id=organization.pk, memory_ids=pair, actor=actor,
            reason=f"{'exact' if evidence['exact'] else 'near'} duplicates merged automatically",
            run=run, evidence=evidence,
        )  # fmt: skip
    except MemberBusy as error:
        tally.errors.append(str(error))
        return True
    except (DomainError, DatabaseError) as error:
        # A concurrent edit (a curator verified one meanwhile) or a refused row: a curator decides instead.
        tally.errors.append(f"merge of {pair[0]} and {pair[1]} left to a curator: {error}")
        return False
    tally.auto_merged += 1
    tally.auto_changed += len(pair)
    return True
