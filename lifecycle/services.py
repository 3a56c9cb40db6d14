"""Proposals: what the workers and agents hand to curators, and the curators' decisions on them.

Applying a merge-like proposal merges (lifecycle.merge); applying a stale one deprecates. Dismissing
remembers every pair, so the same memories are never proposed together again.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any
from uuid import UUID

from django.db import transaction

from lifecycle.detection import dismissed
from lifecycle.merge import (
    NeedsCurator,
    choose_survivor,
    decide,
    lock_members,
    memories_merge,
    parse_ids,
    parse_reason,
)
from lifecycle.models import (
    ConsolidationProposal,
    DismissedPair,
    LifecycleRun,
    ProposalKind,
    ProposalMemory,
    ProposalState,
)
from lifecycle.selectors import proposal_get
from memories import validation
from memories.hints import CURATED, Hint
from memories.models import RULE_TYPES, Memory, Status
from memories.selectors import memory_visible_queryset
from memories.trust import screened_text
from memories.versions import record_memory_change
from memory_platform.exceptions import Conflict, NotFound
from organizations.audit import audit_record
from organizations.models import Role
from organizations.principal import Principal
from screening import redact_secrets

# --- proposals ---------------------------------------------------------------------------------


def proposal_create(
    *,
    organization_id: int,
    kind: str,
    memory_ids: Sequence[UUID],
    created_by: str,
    survivor_id: UUID | None = None,
    evidence: dict[str, Any] | None = None,
    run: LifecycleRun | None = None,
) -> tuple[ConsolidationProposal | None, bool]:
    """An open proposal and whether it is new: the same one may be open already (returned), or a
    curator may have dismissed one of its pairs (None)."""
    ids = sorted(set(memory_ids))
    if dismissed(ids):
        return None, False
    existing = ConsolidationProposal.objects.filter(
        organization_id=organization_id, kind=kind, memory_ids=ids, state=ProposalState.OPEN
    ).first()
    if existing is not None:
        return existing, False
    with transaction.atomic():
        proposal = ConsolidationProposal.objects.create(
            organization_id=organization_id,
            kind=kind,
            memory_ids=ids,
            survivor_id=survivor_id,
            evidence=evidence or {},
            run=run,
            created_by=created_by,
        )
        proposal.set_members(
            Memory.objects.filter(organization_id=proposal.organization_id, pk__in=ids).values_list("pk", flat=True)
        )
    return proposal, True


RULES = frozenset(str(kind) for kind in RULE_TYPES)


def propose_write_conflicts(written: Sequence[tuple[Memory, Sequence[Hint]]]) -> list[ConsolidationProposal]:
    """New memories' contradictions (memories.hints) that can steer other agents, each an open
    proposal for curators: those with a curated memory (always the reference side: the one the other
    is checked against, and the one kept if applied) or a rule. Two unreviewed facts that disagree
    wait for the consolidation worker's hourly pass, which proposes them too: a writer of many
    near-identical notes must not pay for a proposal per note. A few statements for a whole batch of
    writes, whatever the count; a pair two of them name (both new) is proposed once."""
    wanted: dict[tuple[UUID, ...], tuple[Memory, Hint]] = {}
    for memory, conflicts in written:
        for conflict in conflicts:
            if conflict.curated or memory.status in CURATED or {memory.memory_type, conflict.memory_type} & RULES:
                wanted.setdefault(tuple(sorted([memory.pk, conflict.id])), (memory, conflict))
    if not wanted:
        return []
    organization_id = written[0][0].organization_id
    taken = {
        tuple(ids)
        for ids in ConsolidationProposal.objects.filter(
            organization_id=organization_id,
            kind=ProposalKind.CONTRADICTION,
            state=ProposalState.OPEN,
            memory_ids__in=[list(ids) for ids in wanted],
        ).values_list("memory_ids", flat=True)
    }
    gone = _dismissed_pairs(organization_id, wanted)
    proposals = [
        _write_conflict(memory, conflict, list(ids))
        for ids, (memory, conflict) in wanted.items()
        if ids not in gone and ids not in taken
    ]
    if proposals:
        ConsolidationProposal.objects.bulk_create(proposals)
        ProposalMemory.objects.bulk_create(
            [
                ProposalMemory(consolidationproposal_id=p.pk, memory_id=pk, organization_id=p.organization_id)
                for p in proposals
                for pk in p.memory_ids
            ]
        )
    return proposals


def _write_conflict(memory: Memory, conflict: Hint, ids: list[UUID]) -> ConsolidationProposal:
    reference = conflict.id if conflict.curated else (memory.pk if memory.status in CURATED else None)
    evidence = {
        "similarity": conflict.similarity,
        "exact": False,
        "match": "contradiction",
        "found": "at write time",
        **({"reference": str(reference)} if reference else {}),
        **_older_first(conflict.differences),
    }
    return ConsolidationProposal(
        organization_id=memory.organization_id,
        kind=ProposalKind.CONTRADICTION,
        memory_ids=ids,
        survivor_id=reference,
        evidence=evidence,
        # "found by the write check (ci-bot)": the check run when ci-bot wrote the memory.
        created_by=f"the write check ({memory.author_name or memory.author_kind})",
    )


def _dismissed_pairs(organization_id: int, pairs: Collection[tuple[UUID, ...]]) -> set[tuple[UUID, ...]]:
    """Which of these pairs (each sorted) a curator of the organization dismissed."""
    dismissed = DismissedPair.objects.filter(
        organization_id=organization_id,
        first_id__in={pair[0] for pair in pairs},
        second_id__in={pair[1] for pair in pairs},
    ).values_list("first_id", "second_id")
    return {tuple(pair) for pair in dismissed} & set(pairs)


def _older_first(differences: dict[str, Any]) -> dict[str, Any]:
    """A write's differences (first: the new memory) as a proposal shows them: the memory that was
    there first, then the one that contradicts it."""
    return {
        key: {"first": sides.get("second"), "second": sides.get("first")} if isinstance(sides, dict) else sides
        for key, sides in differences.items()
    }


def _open_proposal(principal: Principal, proposal_id: Any) -> ConsolidationProposal:
    proposal = proposal_get(principal, proposal_id, for_update=True)
    if proposal.state != ProposalState.OPEN:
        raise Conflict(f"proposal {proposal.pk} is {proposal.state}, not open")
    return proposal


def proposal_apply(
    *, principal: Principal, proposal_id: Any, survivor_id: Any = None, content: str | None = None, reason: str = ""
) -> ConsolidationProposal:
    """A curator accepts a proposal: merge (merge, supersede, contradiction) or deprecate (stale)."""
    principal.require(Role.CURATOR, "applying a consolidation proposal")
    with transaction.atomic():
        proposal = _open_proposal(principal, proposal_id)
        if proposal.kind == ProposalKind.STALE:
            return _apply_stale(principal, proposal, parse_reason(reason))
        return memories_merge(
            principal=principal,
            organization_id=principal.organization.pk,
            memory_ids=proposal.memory_ids,
            survivor_id=survivor_id or proposal.survivor_id,
            # The merged text an agent suggested when it asked for this merge, unless the curator wrote one.
            content=content if content is not None else proposal.evidence.get("content"),
            reason=reason,
            actor=principal,
            proposal=proposal,
        )


def _apply_stale(principal: Principal, proposal: ConsolidationProposal, reason: str) -> ConsolidationProposal:
    members = lock_members(memory_visible_queryset(principal), list(proposal.memory_ids))
    why = reason or f"stale (proposal {proposal.pk})"
    versions: dict[str, list[int]] = {}
    for member in members:
        if member.status == Status.DEPRECATED:
            continue
        before = member.version
        member.status = Status.DEPRECATED
        record_memory_change(principal=principal, memory=member, fields=["status"], change="status", reason=why)
        versions[str(member.pk)] = [before, member.version]
    proposal.state = ProposalState.APPLIED
    proposal.applied = {"versions": versions, "links_added": [], "facts": {}}
    decide(proposal, principal, reason)
    proposal.save()
    audit_record(
        principal=principal, action="proposal.apply", target_type="consolidation_proposal", target_id=proposal.pk,
        reason=why, data={"kind": proposal.kind, "deprecated": list(versions)},
    )  # fmt: skip
    return proposal


@transaction.atomic
def proposal_dismiss(*, principal: Principal, proposal_id: Any, reason: str = "") -> ConsolidationProposal:
    """Not duplicates (or not stale): the pairs are remembered and never proposed together again."""
    principal.require(Role.CURATOR, "dismissing a consolidation proposal")
    proposal = _open_proposal(principal, proposal_id)
    reason = parse_reason(reason)
    proposal.state = ProposalState.DISMISSED
    decide(proposal, principal, reason)
    proposal.save()
    if proposal.kind != ProposalKind.STALE:
        DismissedPair.objects.bulk_create(
            [
                DismissedPair(organization=principal.organization, first_id=a, second_id=b, proposal=proposal)
                for a, b in combinations(sorted(proposal.memory_ids), 2)
            ],
            ignore_conflicts=True,
        )
    audit_record(
        principal=principal, action="proposal.dismiss", target_type="consolidation_proposal",
        target_id=proposal.pk, reason=reason, data={"kind": proposal.kind},
    )  # fmt: skip
    return proposal


# --- an agent asks for a merge -----------------------------------------------------------------


@dataclass(frozen=True)
class Consolidation:
    """What ``memories_consolidate`` did: ``merged``, ``proposed`` (a curator decides) or ``preview``."""

    outcome: str
    message: str
    survivor: Memory | None = None
    superseded: list[Memory] = field(default_factory=list)
    proposal: ConsolidationProposal | None = None
    result: dict[str, Any] = field(default_factory=dict)


def memories_consolidate(
    *,
    principal: Principal,
    memory_ids: Sequence[Any],
    survivor_id: Any = None,
    content: str | None = None,
    dry_run: bool = False,
    reason: str = "",
) -> Consolidation:
    """Merge now when the principal may; otherwise (a member is reviewed) hand it to curators as a proposal."""
    principal.require(Role.AGENT, "merging memories")
    if content is not None:
        content = screened_text(principal.organization, "content", validation.content(content))
    if dry_run:
        return _preview(principal, memory_ids, survivor_id, content)
    try:
        merged = memories_merge(
            principal=principal, organization_id=principal.organization.pk, memory_ids=memory_ids,
            survivor_id=survivor_id, content=content, reason=reason, actor=principal,
        )  # fmt: skip
    except NeedsCurator as refused:
        ids = parse_ids(memory_ids)
        evidence: dict[str, Any] = {"requested_by": principal.label, "reason": redact_secrets(parse_reason(reason))}
        if content is not None:
            evidence["content"] = content
        proposal, created = proposal_create(
            organization_id=principal.organization.pk,
            kind=ProposalKind.MERGE,
            memory_ids=ids,
            created_by=principal.label,
            survivor_id=validation.memory_id(survivor_id, "survivor_id") if survivor_id else None,
            evidence=evidence,
        )
        if proposal is None:
            return Consolidation("refused", f"{refused.message}; a curator dismissed merging these memories before")
        said = "proposed to curators" if created else "already proposed to curators"
        return Consolidation("proposed", f"{refused.message}: {said} (proposal {proposal.pk})", proposal=proposal)
    survivor = Memory.objects.select_related("organization", "repository").get(pk=merged.survivor_id or "")
    superseded = list(Memory.objects.filter(superseded_by=survivor, pk__in=merged.memory_ids))
    return Consolidation(
        "merged",
        f"merged {len(superseded) + 1} memories into {survivor.pk}; a curator can undo it (proposal {merged.pk})",
        survivor=survivor,
        superseded=superseded,
        proposal=merged,
    )


def _preview(principal: Principal, memory_ids: Sequence[Any], survivor_id: Any, content: str | None) -> Consolidation:
    ids = parse_ids(memory_ids)
    members = list(memory_visible_queryset(principal).filter(pk__in=ids).prefetch_related("access"))
    missing = sorted(set(ids) - {m.pk for m in members})
    if missing:
        raise NotFound(f"memory {missing[0]} not found")
    chosen = next((m for m in members if str(m.pk) == str(survivor_id)), None) if survivor_id else None
    survivor = chosen or choose_survivor(members)
    others = [m for m in members if m.pk != survivor.pk]
    tags = list(survivor.tags) + [t for m in others for t in m.tags if t not in survivor.tags]
    reviewed = [m for m in members if m.status in (Status.LOCKED, Status.VERIFIED)]
    would = "propose" if reviewed and not principal.has_role(Role.CURATOR) else "merge"
    return Consolidation(
        "preview",
        f"would {would}: {survivor.pk} stays, {len(others)} superseded; nothing was changed",
        survivor=survivor,
        superseded=others,
        result={
            "would": would,
            "tags": list(dict.fromkeys(tags)),
            "importance": max(m.importance for m in members),
            "content_changes": content is not None and content != survivor.current_content,
        },
    )
