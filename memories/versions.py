"""What every change to a memory leaves behind: a full version (its snapshot, who, why) and an audit
event, written in the change's transaction; the primitives the create, update and decision services
share, and that other apps' services (merges and their undo) record their changes with."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from memories import trust
from memories.embedding_pipeline import EMBEDDING_FIELDS
from memories.inputs import MemoryId
from memories.models import Memory, MemoryVersion
from memories.public import memory_values
from memories.search import memories_changed
from memories.selectors import memory_get
from memories.written import TEXT_FIELDS, text_written
from organizations.audit import audit_record
from organizations.principal import Principal
from screening import redact_secrets


def memory_snapshot(memory: Memory) -> dict[str, Any]:
    """The memory as one JSON object: what a version keeps (its public fields and its owner)."""
    return {**memory_values(memory), "owner": memory.owner.get_username() if memory.owner else None}


def version_values(
    *, principal: Principal, memory: Memory, change: str, fields: list[str], reason: str
) -> dict[str, Any]:
    """A version of ``memory`` as it stands now, as values by attribute name (for many at once:
    memory_platform.bulk.copy_values); audit_record keeps the reason free of credentials too."""
    return {
        "memory_id": memory.pk,
        "organization_id": memory.organization_id,
        "version": memory.version,
        "snapshot": memory_snapshot(memory),
        "change": change,
        "reason": redact_secrets(reason),
        "changed_fields": fields,
        "actor": principal.label,
        "user_id": principal.user.pk if principal.user is not None else None,
        "token_id": principal.token.pk if principal.token is not None else None,
    }


def version_row(*, principal: Principal, memory: Memory, change: str, fields: list[str], reason: str) -> MemoryVersion:
    """An unsaved version of ``memory`` as it stands now."""
    return MemoryVersion(
        **version_values(principal=principal, memory=memory, change=change, fields=fields, reason=reason)
    )


def write_version(*, principal: Principal, memory: Memory, change: str, fields: list[str], reason: str) -> None:
    version_row(principal=principal, memory=memory, change=change, fields=fields, reason=reason).save(force_insert=True)
    audit_record(
        principal=principal,
        action=f"memory.{change}",
        target_type="memory",
        target_id=memory.id,
        reason=reason,
        data={"version": memory.version, "fields": fields},
    )
    memories_changed(memory.organization_id, created_only=change == "create")
    if change == "create" or TEXT_FIELDS.intersection(fields):
        text_written(memory.organization_id, [memory], created=change == "create")


def memory_for_write(
    principal: Principal, memory_id: MemoryId, *, lock: bool = True, include_deleted: bool = False
) -> Memory:
    """The visible memory a write changes; with ``lock``, its row locked until the transaction ends."""
    return memory_get(principal, memory_id, include_deleted=include_deleted, for_update=lock)


def save_change(
    *, principal: Principal, memory: Memory, fields: list[str], change: str, reason: str, embedded: bool = False
) -> Memory:
    """Save a change made on a locked row (``embedded``: its embedding fields were set too)."""
    memory.version += 1
    memory.updated_at = timezone.now()
    memory.updated_by = principal.user
    memory.updated_by_token = principal.token
    derived = list(EMBEDDING_FIELDS) if embedded else []
    if {"title", "current_content"} & set(fields):
        trust.set_author(memory, principal)  # the author is whoever wrote the text as it reads now
        derived += ["author_kind", "author_name"]
    if "status" in fields:
        derived += [name for name in trust.set_review(memory, principal, memory.updated_at) if name not in fields]
    memory.save(update_fields=[*fields, *derived, "version", "updated_at", "updated_by", "updated_by_token"])
    write_version(principal=principal, memory=memory, change=change, fields=fields, reason=reason)
    return memory


def record_memory_change(
    *, principal: Principal, memory: Memory, fields: list[str], change: str, reason: str
) -> Memory:
    """Save what another app's service changed on a row it holds locked (merges, undo): a new
    version and an audit event. If the text changed, the caller has set the embedding fields."""
    embedded = any(name in EMBEDDING_FIELDS for name in fields)
    recorded = [name for name in fields if name not in EMBEDDING_FIELDS]
    return save_change(
        principal=principal, memory=memory, fields=recorded, change=change, reason=reason, embedded=embedded
    )
