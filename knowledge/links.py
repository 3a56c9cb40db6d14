"""Links between memories: made and removed by agents and curators, each change audited."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from knowledge.models import MemoryLink, RelationType
from memories import validation
from memories.inputs import MemoryId
from memories.models import ScopeType, Status
from memories.selectors import memory_get
from memory_platform.exceptions import Locked, ValidationError
from organizations.audit import audit_record
from organizations.models import Role
from organizations.principal import Principal


def _relation(value: str | None) -> str:
    relation = value or RelationType.RELATED
    if relation not in RelationType.values:
        raise ValidationError(
            f"unknown relation_type '{relation}'; use one of: {', '.join(RelationType.values)}",
            details={"field": "relation_type"},
        )
    return str(relation)


@transaction.atomic
def link_create(
    *, principal: Principal, source_id: MemoryId, target_id: MemoryId, relation_type: str | None = None
) -> tuple[MemoryLink, bool]:
    """Link two memories; returns the link and whether this call created it.

    Linking twice changes nothing (the existing link is returned)."""
    principal.require(Role.AGENT, "linking memories")
    relation = _relation(relation_type)
    source = memory_get(principal, validation.memory_id(source_id, "source_id"))
    target = memory_get(principal, validation.memory_id(target_id, "target_id"))
    if source.pk == target.pk:
        raise ValidationError("a memory cannot be linked to itself", details={"field": "target_id"})
    # System memories are shared by every organization, whichever one their author belongs to:
    # one organization's links must not hang on them.
    if any(
        m.organization_id != principal.organization.pk or m.scope_type == ScopeType.SYSTEM for m in (source, target)
    ):
        raise ValidationError("only memories of your own organization can be linked (system memories cannot)")
    for memory in (source, target):
        if memory.status == Status.LOCKED and not principal.has_role(Role.CURATOR):
            raise Locked(f"memory {memory.pk} is locked; changing its links needs a curator")
    existing = MemoryLink.objects.filter(
        source=source, target=target, relation_type=relation, removed_at__isnull=True
    ).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            link = MemoryLink.objects.create(
                organization=principal.organization,
                source=source,
                target=target,
                relation_type=relation,
                created_by=principal.user,
                created_by_token=principal.token,
            )
    except IntegrityError:
        # A concurrent identical link won: linking is idempotent.
        found = MemoryLink.objects.get(source=source, target=target, relation_type=relation, removed_at__isnull=True)
        return found, False
    audit_record(
        principal=principal,
        action="link.create",
        target_type="memory_link",
        target_id=link.pk,
        data={"source": str(source.pk), "target": str(target.pk), "relation_type": relation},
    )
    return link, True


@transaction.atomic
def link_remove(
    *, principal: Principal, source_id: MemoryId, target_id: MemoryId, relation_type: str | None = None
) -> int:
    """Remove a link (softly: it stays, marked removed). Returns how many were removed (0 or 1)."""
    principal.require(Role.AGENT, "unlinking memories")
    relation = _relation(relation_type)
    source = memory_get(principal, validation.memory_id(source_id, "source_id"))
    target = memory_get(principal, validation.memory_id(target_id, "target_id"))
    for memory in (source, target):
        if memory.status == Status.LOCKED and not principal.has_role(Role.CURATOR):
            raise Locked(f"memory {memory.pk} is locked; changing its links needs a curator")
    link = (
        MemoryLink.objects.select_for_update()
        .filter(source=source, target=target, relation_type=relation, removed_at__isnull=True)
        .first()
    )
    if link is None:
        return 0
    link.removed_at = timezone.now()
    link.save(update_fields=["removed_at"])
    audit_record(principal=principal, action="link.remove", target_type="memory_link", target_id=link.pk)
    return 1
