"""The decisions taken on a memory: status changes (the curators' verify, lock, unlock, deprecate
and reactivate, by the workflow's table in memories.workflow), soft delete and restore, invalidate
(superseded by another memory) and revert to an earlier version. Each writes a version and an audit
event (memories.versions); nothing is ever destroyed."""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from memories import validation, workflow
from memories.inputs import WRITABLE_FIELDS, MemoryId, planned_changes
from memories.models import Memory, MemoryVersion, ScopeType, Status
from memories.rules import check_can_write, check_mutable, check_writable
from memories.selectors import memory_get
from memories.services import embed_changes, memory_update, set_changes
from memories.versions import memory_for_write, save_change
from memories.workflow import STATUS_DECISIONS
from memory_platform import reasons
from memory_platform.exceptions import Conflict, NotFound, ValidationError
from organizations.models import Role
from organizations.principal import Principal


@transaction.atomic
def memory_set_status(*, principal: Principal, memory_id: MemoryId, status: str, reason: str = "") -> Memory:
    """Set a status: draft or active as an edit (the write policy decides it below the curator
    role); verified, locked and deprecated as the curators' decisions (memories.workflow)."""
    check_can_write(principal)
    new_status = validation.status(status)
    if new_status in STATUS_DECISIONS:
        return _decide(STATUS_DECISIONS[new_status], principal=principal, memory_id=memory_id, reason=reason)
    if not principal.has_role(Role.CURATOR):
        return memory_update(principal=principal, memory_id=memory_id, data={"status": new_status}, reason=reason)
    memory = memory_for_write(principal, memory_id)
    check_mutable(principal, memory, f"changing its status to '{new_status}'")
    check_writable(principal, memory)
    if memory.status == new_status:
        return memory
    memory.status = new_status
    return save_change(
        principal=principal, memory=memory, fields=["status"], change="status", reason=reasons.reason(reason)
    )


def _decided(principal: Principal, memory_id: MemoryId, name: str, *, include_deleted: bool = False) -> Memory:
    """The memory a decision is taken on, its row locked, once the workflow's table allows it."""
    memory = memory_for_write(principal, memory_id, include_deleted=include_deleted)
    workflow.decision(name).check(principal, memory)
    check_mutable(principal, memory, f"taking the decision '{name}' on it")
    return memory


@transaction.atomic
def _decide(name: str, *, principal: Principal, memory_id: MemoryId, reason: str) -> Memory:
    """verify, lock, unlock or deprecate: the status the table gives, with the reason."""
    why = reasons.reason(reason)
    memory = _decided(principal, memory_id, name)
    memory.status = DECIDED_STATUS[name]
    return save_change(principal=principal, memory=memory, fields=["status"], change="status", reason=why)


DECIDED_STATUS = {"verify": Status.VERIFIED, "lock": Status.LOCKED, "unlock": Status.VERIFIED,
                  "deprecate": Status.DEPRECATED}  # fmt: skip


def memory_verify(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    return _decide("verify", principal=principal, memory_id=memory_id, reason=reason)


def memory_lock(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    return _decide("lock", principal=principal, memory_id=memory_id, reason=reason)


def memory_deprecate(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    return _decide("deprecate", principal=principal, memory_id=memory_id, reason=reason)


def memory_unlock(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    """Unlocking leaves the memory verified: it was reviewed, it just may change again."""
    return _decide("unlock", principal=principal, memory_id=memory_id, reason=reason)


# --- delete and restore ------------------------------------------------------------------------


@transaction.atomic
def memory_delete(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    """Soft delete: the row and every version stay; the memory leaves default reads."""
    check_can_write(principal)
    why = reasons.reason(reason)
    memory = _decided(principal, memory_id, "delete")
    memory.deleted_at = timezone.now()
    return save_change(principal=principal, memory=memory, fields=["deleted_at"], change="delete", reason=why)


@transaction.atomic
def memory_restore(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    why = reasons.reason(reason)
    memory = _decided(principal, memory_id, "restore", include_deleted=True)
    memory.deleted_at = None
    return save_change(principal=principal, memory=memory, fields=["deleted_at"], change="restore", reason=why)


# --- invalidate --------------------------------------------------------------------------------


@transaction.atomic
def memory_invalidate(
    *, principal: Principal, memory_id: MemoryId, reason: str, superseded_by: MemoryId | None = None
) -> Memory:
    """Record that a memory stopped being true: it ends now, is deprecated, and may name its successor."""
    check_can_write(principal)
    if not isinstance(reason, str) or not reason.strip():
        raise ValidationError("reason is required: say why the memory is no longer true", details={"field": "reason"})
    memory = memory_for_write(principal, memory_id)
    check_mutable(principal, memory, "invalidating it")
    fields = ["status", "valid_until"]
    if superseded_by not in (None, ""):
        successor_id = validation.memory_id(superseded_by, "superseded_by")
        if successor_id == memory.pk:
            raise ValidationError("a memory cannot supersede itself", details={"field": "superseded_by"})
        memory.superseded_by = memory_get(principal, successor_id, field="superseded_by")
        fields.append("superseded_by")
    now = timezone.now()
    memory.status = Status.DEPRECATED
    if memory.valid_until is None or memory.valid_until > now:
        memory.valid_until = now
    return save_change(principal=principal, memory=memory, fields=fields, change="invalidate", reason=reason.strip())


# --- reactivate and revert -----------------------------------------------------------------------


@transaction.atomic
def memory_reactivate(*, principal: Principal, memory_id: MemoryId, reason: str = "") -> Memory:
    """A deprecated memory is in force again: back to the status it had before it was deprecated
    (verified if it never had another), no longer superseded, no longer ended."""
    why = reasons.reason(reason)
    memory = _decided(principal, memory_id, "reactivate")
    memory.status = reactivated_status(memory)
    fields = ["status"]
    if memory.superseded_by_id is not None:
        memory.superseded_by = None
        fields.append("superseded_by")
    if memory.valid_until is not None and memory.valid_until <= timezone.now():
        memory.valid_until = None
        fields.append("valid_until")
    return save_change(principal=principal, memory=memory, fields=fields, change="reactivate", reason=why)


def reactivated_status(memory: Memory) -> str:
    """The status a deprecated memory goes back to: its last one before deprecation, else verified."""
    versions = MemoryVersion.objects.filter(memory=memory).order_by("-version")
    statuses = versions.values_list("snapshot__status", flat=True)
    previous = next((status for status in statuses if status != Status.DEPRECATED), None)
    return previous if previous in Status.values else Status.VERIFIED


def memory_revert(*, principal: Principal, memory_id: MemoryId, version: object, reason: str = "") -> Memory:
    """Make the memory read as it did at ``version``, by writing a new version: history is never
    rewritten, and the revert itself can be reverted. No difference, no new version."""
    principal.require(Role.CURATOR, "reverting a memory to an earlier version")
    reason = reasons.reason(reason)
    number = validation.version_number(version)
    memory = memory_for_write(principal, memory_id, lock=False)
    snapshot = MemoryVersion.objects.filter(memory=memory, version=number).values_list("snapshot", flat=True).first()
    if snapshot is None:
        raise NotFound(f"memory {memory.pk} has no version {number} (it is at version {memory.version})")
    if snapshot.get("scope_type") == ScopeType.USER and memory.scope_type != ScopeType.USER:
        raise ValidationError(
            f"version {number} was a personal memory; make it personal again by editing its scope",
            details={"field": "version"},
        )
    changes = planned_changes(principal, memory, {k: snapshot[k] for k in WRITABLE_FIELDS if k in snapshot})
    superseded_by = snapshot.get("superseded_by")
    embeds, vector = embed_changes(memory, changes)
    with transaction.atomic():
        locked = memory_for_write(principal, memory.pk)
        if locked.version != memory.version:
            raise Conflict(f"memory {memory.pk} changed while it was being reverted; look at it again and retry")
        set_changes(principal, locked, changes, embeds, vector)
        if str(locked.superseded_by_id or "") != (superseded_by or ""):
            locked.superseded_by_id = uuid.UUID(superseded_by) if superseded_by else None
            changes["superseded_by"] = locked.superseded_by_id
        if not changes:
            return locked
        why = f"back to version {number}" + (f": {reason}" if reason else "")
        return save_change(
            principal=principal, memory=locked, fields=sorted(changes), change="revert", reason=why, embedded=embeds
        )
