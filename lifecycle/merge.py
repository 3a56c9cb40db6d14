"""Merging and undoing: every change a version and an audit event, nothing destroyed.

A merge keeps one memory (the survivor) and supersedes the others: they stay, deprecated, with
``superseded_by`` pointing at the survivor. The survivor gets the union of tags, the highest
importance and the merged metadata (its own values win, then the newest); its content changes only
when a merged text is given. Links of the superseded memories are copied onto the survivor (the
originals stay) and facts learned from them name the survivor. What was changed is kept on the
proposal, so ``proposal_undo`` puts every memory back exactly as it was, byte for byte, as new versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from knowledge.models import MemoryLink, Triple
from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalKind, ProposalState
from lifecycle.selectors import proposal_get
from memories import validation
from memories.embedding_pipeline import EMBEDDING_FIELDS, apply_embedding, embed_texts, embedding_text
from memories.models import Memory, MemoryVersion, Status
from memories.selectors import memory_visible_queryset
from memories.trust import screened_text
from memories.versions import record_memory_change
from memory_platform import reasons
from memory_platform.exceptions import Conflict, NotFound, PermissionDenied, ValidationError
from organizations.audit import audit_record
from organizations.models import Role
from organizations.principal import Principal

MERGE_MIN = 2
MERGE_MAX = 50
REASON_MAX = reasons.REASON_MAX_CHARS
# The order a survivor is chosen by: the most reviewed first.
STATUS_RANK: dict[str, int] = {
    Status.LOCKED: 4,
    Status.VERIFIED: 3,
    Status.ACTIVE: 2,
    Status.DRAFT: 1,
    Status.DEPRECATED: 0,
}
REVIEWED = frozenset({Status.LOCKED, Status.VERIFIED})
# The fields a merge or a stale decision may change, and so the fields undo restores.
RESTORED_FIELDS = ("title", "current_content", "status", "importance", "metadata", "tags", "superseded_by")


def survivor_rank(memory: Memory) -> tuple[Any, ...]:
    """Status (locked > verified > active > draft), then importance, then access, then recency."""
    return (STATUS_RANK.get(memory.status, 0), memory.importance, memory.access_count, memory.updated_at, memory.pk)


def choose_survivor(memories: Sequence[Memory]) -> Memory:
    return max(memories, key=survivor_rank)


def parse_ids(memory_ids: Sequence[Any]) -> list[UUID]:
    if not isinstance(memory_ids, (list, tuple)):
        raise ValidationError("memory_ids must be a list of memory ids", details={"field": "memory_ids"})
    parsed = sorted({validation.memory_id(value, "memory_ids") for value in memory_ids})
    if not MERGE_MIN <= len(parsed) <= MERGE_MAX:
        raise ValidationError(
            f"memory_ids must name {MERGE_MIN} to {MERGE_MAX} different memories (got {len(parsed)})",
            details={"field": "memory_ids"},
        )
    return parsed


def parse_reason(reason: str) -> str:
    return reasons.reason(reason)


def _candidates(principal: Principal | None, organization_id: int) -> QuerySet[Memory]:
    """What a merge may touch: the principal's visible memories, or (the worker) the whole organization."""
    if principal is None:
        return Memory.objects.filter(organization_id=organization_id, deleted_at__isnull=True)
    return memory_visible_queryset(principal)


def lock_members(queryset: QuerySet[Memory], ids: list[UUID], *, skip_locked: bool = False) -> list[Memory]:
    """The memories, their rows locked. ``skip_locked`` (the worker): a row someone is changing right
    now is not waited for; the merge is refused and the next run, seeing the change, looks again."""
    rows = list(
        queryset.select_for_update(of=("self",), skip_locked=skip_locked)
        .select_related("organization", "repository", "owner")
        .prefetch_related("access")
        .filter(pk__in=ids)
        .order_by("pk")  # one lock order for every merge, so two merges never deadlock
    )
    missing = sorted(set(ids) - {row.pk for row in rows})
    if missing and skip_locked and queryset.filter(pk=missing[0]).exists():
        raise MemberBusy(f"memory {missing[0]} is being changed right now; it is left for the next run")
    if missing:
        raise NotFound(f"memory {missing[0]} not found")
    return rows


def _check_mergeable(members: list[Memory]) -> None:
    first = members[0]
    scope = (first.organization_id, first.scope_type, first.repository_id, first.owner_id)
    for member in members:
        if (member.organization_id, member.scope_type, member.repository_id, member.owner_id) != scope:
            raise ValidationError(
                "only memories of one scope can be merged (same scope_type, repository and owner); "
                f"{member.pk} is in another scope than {first.pk}",
                details={"field": "memory_ids"},
            )
        if member.superseded_by_id is not None:
            raise Conflict(
                f"memory {member.pk} was already superseded by {member.superseded_by_id}; merge that one instead"
            )


class MemberBusy(Conflict):
    """The worker found a member's row locked by someone changing it."""


class NeedsCurator(PermissionDenied):
    """A merge only a curator may make (a member is locked or verified)."""


def _check_allowed(principal: Principal | None, members: list[Memory]) -> None:
    """Curators merge anything visible; agents only unlocked, unreviewed memories; the worker likewise."""
    if principal is not None and principal.has_role(Role.CURATOR):
        return
    if principal is not None:
        principal.require(Role.AGENT, "merging memories")
    reviewed = [member for member in members if member.status in REVIEWED]
    if reviewed:
        raise NeedsCurator(
            f"memory {reviewed[0].pk} is {reviewed[0].status}; merging reviewed memories needs a curator"
        )


# --- merge -------------------------------------------------------------------------------------


def memories_merge(
    *,
    principal: Principal | None,
    organization_id: int,
    memory_ids: Sequence[Any],
    survivor_id: Any = None,
    content: str | None = None,
    reason: str = "",
    actor: Principal,
    proposal: ConsolidationProposal | None = None,
    run: LifecycleRun | None = None,
    evidence: dict[str, Any] | None = None,
) -> ConsolidationProposal:
    """Merge now. ``principal`` None is the worker, which may merge only unreviewed memories;
    ``actor`` is whom versions and audit events name. Returns the proposal recording the merge."""
    ids = parse_ids(memory_ids)
    wanted_survivor = validation.memory_id(survivor_id, "survivor_id") if survivor_id not in (None, "") else None
    if wanted_survivor is not None and wanted_survivor not in ids:
        raise ValidationError("survivor_id must be one of memory_ids", details={"field": "survivor_id"})
    reason = parse_reason(reason)
    vector = None
    if content is not None:
        content = screened_text(actor.organization, "content", validation.content(content))
        # Embedded before the rows are locked: no lock is held while the model runs.
        vectors = embed_texts([embedding_text(validation.derive_title(content), content)])
        vector = vectors[0] if vectors else None
    with transaction.atomic():
        members = lock_members(_candidates(principal, organization_id), ids, skip_locked=principal is None)
        _check_mergeable(members)
        _check_allowed(principal, members)
        survivor = next(m for m in members if m.pk == wanted_survivor) if wanted_survivor else choose_survivor(members)
        return _apply_merge(
            actor=actor,
            members=members,
            survivor=survivor,
            content=content,
            vector=vector,
            reason=reason,
            proposal=proposal,
            run=run,
            evidence=evidence or {},
        )


def _apply_merge(
    *,
    actor: Principal,
    members: list[Memory],
    survivor: Memory,
    content: str | None,
    vector: list[float] | None,
    reason: str,
    proposal: ConsolidationProposal | None,
    run: LifecycleRun | None,
    evidence: dict[str, Any],
) -> ConsolidationProposal:
    # Oldest first: the union of tags, and metadata precedence, follow the order memories were written.
    others = sorted((m for m in members if m.pk != survivor.pk), key=lambda m: (m.created_at, m.pk))
    if proposal is None:
        proposal = ConsolidationProposal(
            organization_id=survivor.organization_id,
            kind=ProposalKind.MERGE,
            memory_ids=sorted(member.pk for member in members),
            evidence=evidence,
            run=run,
            created_by=actor.label,
        )
    proposal.survivor = survivor
    proposal.state = ProposalState.APPLIED
    decide(proposal, actor, reason)
    proposal.save()
    proposal.set_members(member.pk for member in members)
    why = reason or f"merged as duplicates (proposal {proposal.pk})"
    versions: dict[str, list[int]] = {}

    before = survivor.version
    changed = _absorb(survivor, others, content, vector)
    if changed:
        record_memory_change(principal=actor, memory=survivor, fields=changed, change="merge", reason=why)
    versions[str(survivor.pk)] = [before, survivor.version]
    for member in others:
        before = member.version
        member.superseded_by = survivor
        fields = ["superseded_by"]
        if member.status != Status.DEPRECATED:
            member.status = Status.DEPRECATED
            fields.append("status")
        record_memory_change(principal=actor, memory=member, fields=fields, change="superseded", reason=why)
        versions[str(member.pk)] = [before, member.version]

    proposal.applied = {
        "survivor": str(survivor.pk),
        "versions": versions,
        "links_added": _copy_links(actor, survivor, others),
        "facts": _repoint_facts(survivor, others),
    }
    proposal.save(update_fields=["applied"])
    audit_record(
        principal=actor,
        action="proposal.apply",
        target_type="consolidation_proposal",
        target_id=proposal.pk,
        reason=why,
        data={"kind": proposal.kind, "survivor": str(survivor.pk), "superseded": [str(m.pk) for m in others]},
    )
    return proposal


def _absorb(survivor: Memory, others: list[Memory], content: str | None, vector: list[float] | None) -> list[str]:
    """The survivor takes the others' tags, the highest importance, their metadata (its own wins)."""
    changed: list[str] = []
    tags = list(survivor.tags)
    for other in others:
        tags.extend(tag for tag in other.tags if tag not in tags)
    if tags != list(survivor.tags):
        survivor.tags = tags
        changed.append("tags")
    importance = max(member.importance for member in [survivor, *others])
    if importance != survivor.importance:
        survivor.importance = importance
        changed.append("importance")
    metadata: dict[str, Any] = {}
    for other in others:  # oldest first: a newer memory's value wins over an older one's
        metadata.update(other.metadata)
    metadata.update(survivor.metadata)
    if metadata != survivor.metadata:
        survivor.metadata = metadata
        changed.append("metadata")
    if content is not None and content != survivor.current_content:
        if survivor.title == validation.derive_title(survivor.current_content):
            survivor.title = validation.derive_title(content)
            changed.append("title")
        survivor.current_content = content
        apply_embedding(survivor, vector)
        changed.extend(["current_content", *EMBEDDING_FIELDS])
    return changed


def _copy_links(actor: Principal, survivor: Memory, others: list[Memory]) -> list[int]:
    """Each active link of a superseded memory is copied onto the survivor; the original stays."""
    merged = {member.pk for member in others} | {survivor.pk}
    added: list[int] = []
    links = MemoryLink.objects.filter(Q(source__in=others) | Q(target__in=others), removed_at__isnull=True)
    for link in links.order_by("pk"):
        source = survivor.pk if link.source_id in merged else link.source_id
        target = survivor.pk if link.target_id in merged else link.target_id
        if source == target:
            continue
        exists = MemoryLink.objects.filter(
            source_id=source, target_id=target, relation_type=link.relation_type, removed_at__isnull=True
        ).exists()
        if not exists:
            copy = MemoryLink.objects.create(
                organization_id=link.organization_id,
                source_id=source,
                target_id=target,
                relation_type=link.relation_type,
                created_by=actor.user,
                created_by_token=actor.token,
            )
            added.append(copy.pk)
    return added


def _repoint_facts(survivor: Memory, others: list[Memory]) -> dict[str, str]:
    """Facts learned from a superseded memory now name the survivor; the old source is kept for undo."""
    moved = {
        str(pk): str(memory_id)
        for pk, memory_id in Triple.objects.filter(memory__in=others).values_list("pk", "memory_id")
    }
    if moved:
        Triple.objects.filter(pk__in=[int(pk) for pk in moved]).update(memory=survivor)
    return moved


def decide(proposal: ConsolidationProposal, actor: Principal, reason: str) -> None:
    proposal.decided_at = timezone.now()
    proposal.decided_by = actor.label
    proposal.decided_by_user = actor.user
    proposal.decided_by_token = actor.token
    proposal.reason = reason


# --- undo --------------------------------------------------------------------------------------


@transaction.atomic
def proposal_undo(*, principal: Principal, proposal_id: Any, reason: str = "") -> ConsolidationProposal:
    """Put every memory an applied proposal changed back as it was before, as new versions."""
    principal.require(Role.CURATOR, "undoing a merge")
    proposal = proposal_get(principal, proposal_id, for_update=True)
    if proposal.state != ProposalState.APPLIED:
        raise Conflict(f"proposal {proposal.pk} is {proposal.state}; only an applied proposal can be undone")
    reason = parse_reason(reason)
    versions: dict[str, list[int]] = proposal.applied.get("versions", {})
    ids = sorted(UUID(pk) for pk in versions)
    members = lock_members(memory_visible_queryset(principal, include_deleted=True), ids)
    for member in members:
        after = versions[str(member.pk)][1]
        if member.version != after:
            raise Conflict(
                f"memory {member.pk} changed after the merge (version {after} → {member.version}); "
                "revert it from its history instead"
            )
    why = reason or f"undo of proposal {proposal.pk}"
    for member in members:
        before = versions[str(member.pk)][0]
        snapshot = MemoryVersion.objects.get(memory=member, version=before).snapshot
        fields = _restore(member, snapshot)
        if fields:
            record_memory_change(principal=principal, memory=member, fields=fields, change="undo", reason=why)
    MemoryLink.objects.filter(pk__in=proposal.applied.get("links_added", []), removed_at__isnull=True).update(
        removed_at=timezone.now()
    )
    for triple_id, memory_id in proposal.applied.get("facts", {}).items():
        Triple.objects.filter(pk=int(triple_id)).update(memory_id=UUID(memory_id))
    proposal.state = ProposalState.UNDONE
    proposal.applied = {**proposal.applied, "undone_at": timezone.now().isoformat(), "undone_by": principal.label}
    proposal.save(update_fields=["state", "applied"])
    audit_record(
        principal=principal, action="proposal.undo", target_type="consolidation_proposal", target_id=proposal.pk,
        reason=why, data={"kind": proposal.kind, "restored": [str(pk) for pk in ids]},
    )  # fmt: skip
    return proposal


def _restore(memory: Memory, snapshot: dict[str, Any]) -> list[str]:
    changed: list[str] = []
    for name in RESTORED_FIELDS:
        if name == "superseded_by":
            value: Any = UUID(snapshot[name]) if snapshot.get(name) else None
            if memory.superseded_by_id != value:
                memory.superseded_by_id = value
                changed.append(name)
            continue
        value = snapshot[name]
        if getattr(memory, name) != value:
            setattr(memory, name, value)
            changed.append(name)
    if "current_content" in changed or "title" in changed:
        apply_embedding(memory, None)  # the old text's vector was not kept: the backfill computes it again
        changed.extend(EMBEDDING_FIELDS)
    return changed
