"""Writing one memory: create (with upsert and idempotency) and update. Each change writes a full
version and an audit event (memories.versions). The curators' decisions, delete, restore,
invalidate and revert: memories.decisions. Many memories at once: memories.batch."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memories import trust, validation, workflow
from memories.embedding_pipeline import apply_embedding, embed_texts, embedding_text
from memories.hints import report_conflicts, write_hints
from memories.inputs import WRITABLE_FIELDS, MemoryId, NewMemory, planned_changes
from memories.models import Memory, ScopeType, WritePolicy
from memories.rules import check_can_write, check_mutable, check_scope, check_status_allowed, check_writable
from memories.selectors import memory_visible_queryset
from memories.versions import memory_for_write, save_change, write_version
from memories.workflow import STATUS_DECISIONS
from memory_platform import reasons
from memory_platform.exceptions import Conflict, ValidationError
from organizations.models import Repository
from organizations.principal import Principal
from organizations.services import repository_for_write


class _Compute:
    """Sentinel: embed the memory during the write (rather than use a vector computed earlier)."""


COMPUTE = _Compute()
Vector = list[float] | None


# --- create ------------------------------------------------------------------------------------


def memory_create(
    *,
    principal: Principal,
    data: Mapping[str, object],
    memory_id: MemoryId | None = None,
    idempotency_key: str | None = None,
    organization: str | None = None,
    reason: str = "",
    embedding: Vector | _Compute = COMPUTE,
    create_repository: bool = False,
) -> tuple[Memory, bool]:
    """Create a memory; returns it and whether this call created it.

    ``data`` is the raw writable fields (as a client sent them): they are parsed into a NewMemory
    here, once, so every interface gets the same messages for bad input.
    With ``memory_id``, an upsert: the memory is updated if it exists, created with that id if not.
    With ``idempotency_key``, a retry of the same request returns the memory created the first time,
    and the same key with different content is a conflict; this holds under concurrent requests.
    ``embedding`` is for batch writes that embedded many texts at once (None: provider was down).
    A ``repository`` must exist unless ``create_repository`` asks for it to be created.
    """
    principal.check_organization(organization)
    check_can_write(principal)
    policy = trust.write_policy_for(principal.organization)
    screening = trust.screen_credentials(data, policy)
    data = screening.data
    new = NewMemory.parse(data)
    key = validation.idempotency_key(idempotency_key)
    wanted_id = validation.memory_id(memory_id) if memory_id not in (None, "") else None

    if key is not None:
        existing = _memory_for_idempotency_key(principal, key, new)
        if existing is not None:
            return _answered(existing, (), hints=True), False

    if wanted_id is not None:
        upserted = _upsert_existing(principal, wanted_id, data, new, reason=reason, create_repository=create_repository)
        if upserted is not None:
            return upserted, False

    if isinstance(embedding, _Compute):
        # Embedded before the transaction opens, so no lock is held while the model runs.
        title = new.title or validation.derive_title(new.current_content)
        embedding = _embed(title, new.current_content)
    stored = screened_new(principal, policy, screening, new)
    try:
        with transaction.atomic():
            inserted = _insert(
                principal=principal,
                new=stored,
                fingerprint=new.fingerprint() if key else "",
                flags=screening.flags,
                memory_id=wanted_id,
                key=key,
                reason=reason,
                vector=embedding,
                create_repository=create_repository,
            )
            # In the insert's transaction: a contradiction's proposal costs no commit of its own.
            answered = _answered(inserted, screening.notes, hints=True, created=True)
    except IntegrityError as exc:
        # A concurrent request with the same idempotency key (or id) won the race: answer as a retry.
        if key is not None:
            existing = _memory_for_idempotency_key(principal, key, new)
            if existing is not None:
                return _answered(existing, (), hints=True), False
        if wanted_id is not None and Memory.objects.filter(pk=wanted_id).exists():
            raise Conflict(f"memory {wanted_id} was created concurrently; retry the request") from exc
        raise
    return answered, True


def screened_new(principal: Principal, policy: WritePolicy, screening: trust.Screening, new: NewMemory) -> NewMemory:
    """The memory a create stores once the write policy has had its say (status, importance)."""
    # Its fields as they are (the policy only reads them): asdict copied every list and dict in them.
    status = trust.apply_policy(principal, policy, screening, values=vars(new), status=new.status)
    return replace(new, status=status, importance=screening.importance or new.importance)


def _answered(memory: Memory, notes: Any, *, hints: bool = False, created: bool = False) -> Memory:
    """The memory as a write's answer shows it: what the platform did to the write, and (for a new
    memory) the memories of its scope it may repeat or contradict (memories.hints), the
    contradictions of a new one handed to the curators."""
    memory.write_notes = tuple(notes)
    if hints:
        memory.write_hints = write_hints([memory])[memory.pk]
        if created:
            report_conflicts([(memory, memory.write_hints.conflicts)])
    return memory


def _upsert_existing(
    principal: Principal,
    wanted_id: uuid.UUID,
    data: Mapping[str, object],
    new: NewMemory,
    *,
    reason: str,
    create_repository: bool,
) -> Memory | None:
    """An upsert's update: the memory with this id, updated, or None when it is to be created."""
    current = Memory.objects.filter(pk=wanted_id).first()
    visible = (
        current is not None and memory_visible_queryset(principal, include_deleted=True).filter(pk=wanted_id).exists()
    )
    if not visible:
        # Creating with this id, as far as the caller can tell: it must be one nobody could predict.
        validation.new_memory_id(wanted_id)
    if current is None:
        return None
    if not visible:
        raise Conflict(f"id {wanted_id} cannot be used; omit id and the server will choose one")
    if current.deleted_at is not None:
        raise Conflict(f"memory {wanted_id} was deleted; ask a curator to restore it, or write without an id")
    fields = {k: v for k, v in data.items() if v is not None}
    if create_repository and new.repository:
        repository_for_write(principal=principal, slug=new.repository, create=True)
    return memory_update(principal=principal, memory_id=wanted_id, data=fields, reason=reason or "upsert")


def _embed(title: str, content: str) -> Vector:
    """The vector of a memory's text (None while the provider is down). Call it outside any
    transaction of the write: the model (or the HTTP provider's timeout) can take seconds."""
    vectors = embed_texts([embedding_text(title, content)])
    return vectors[0] if vectors else None


def _memory_for_idempotency_key(principal: Principal, key: str, new: NewMemory) -> Memory | None:
    existing = (
        Memory.objects.select_related("organization", "repository")
        .filter(organization=principal.organization, idempotency_key=key)
        .first()
    )
    if existing is None:
        return None
    if not memory_visible_queryset(principal, include_deleted=True).filter(pk=existing.pk).exists():
        # Keys are unique per organization, but a retry must not hand out another person's
        # private memory: refuse without saying which memory holds the key.
        raise Conflict(f"idempotency_key '{key}' is already in use; use a new key for a new memory")
    if existing.idempotency_fingerprint != new.fingerprint():
        raise Conflict(
            f"idempotency_key '{key}' was already used for different content (memory {existing.id}); "
            "use a new key for a new memory",
            details={"id": str(existing.id)},
        )
    return existing


def _insert(
    *,
    principal: Principal,
    new: NewMemory,
    fingerprint: str,
    flags: list[dict[str, Any]],
    memory_id: uuid.UUID | None,
    key: str | None,
    reason: str,
    vector: Vector,
    create_repository: bool = False,
) -> Memory:
    check_scope(principal, new.scope_type)
    check_status_allowed(principal, new.status)
    repository = (
        repository_for_write(principal=principal, slug=new.repository, create=create_repository)
        if new.repository
        else None
    )
    memory = new_row(
        principal=principal,
        new=new,
        memory_id=memory_id,
        key=key,
        repository=repository,
        fingerprint=fingerprint,
        flags=flags,
    )
    apply_embedding(memory, vector)
    memory.save(force_insert=True)
    write_version(principal=principal, memory=memory, change="create", fields=list(WRITABLE_FIELDS), reason=reason)
    return memory


def new_row(
    *,
    principal: Principal,
    new: NewMemory,
    memory_id: uuid.UUID | None,
    key: str | None,
    repository: Repository | None,
    fingerprint: str = "",
    flags: list[dict[str, Any]] | None = None,
    now: datetime | None = None,
) -> Memory:
    """The unsaved memory a create writes (its embedding not set yet), created ``now`` (default: now).

    ``fingerprint`` is the idempotency fingerprint of the request as the client sent it (before the
    write policy changed its status or importance); ``flags`` what the screening flagged."""
    now = now or timezone.now()
    memory = Memory(
        organization=principal.organization,
        repository=repository,
        scope_type=new.scope_type,
        memory_type=new.memory_type,
        title=new.title or validation.derive_title(new.current_content),
        current_content=new.current_content,
        status=new.status,
        importance=new.importance,
        metadata=new.metadata,
        tags=new.tags,
        source=new.source,
        valid_from=new.valid_from,
        valid_until=new.valid_until,
        owner=principal.user if new.scope_type == ScopeType.USER else None,
        created_by=principal.user,
        created_by_token=principal.token,
        updated_by=principal.user,
        updated_by_token=principal.token,
        created_at=now,
        updated_at=now,
        idempotency_key=key,
        idempotency_fingerprint=fingerprint if key else "",
        review_flags=list(flags or []),
    )
    trust.set_author(memory, principal)
    trust.set_review(memory, principal, now)
    if memory_id is not None:
        memory.id = memory_id
    return memory


# --- update ------------------------------------------------------------------------------------


# How many times an update is planned again when the memory changed between its read and its write.
UPDATE_ATTEMPTS = 3


def embed_changes(memory: Memory, changes: Mapping[str, Any]) -> tuple[bool, Vector]:
    """Whether the planned changes need a new embedding, and that embedding (computed unlocked)."""
    if not {"title", "current_content"} & set(changes):
        return False, None
    return True, _embed(changes.get("title", memory.title), changes.get("current_content", memory.current_content))


def set_changes(principal: Principal, locked: Memory, changes: dict[str, Any], embeds: bool, vector: Vector) -> None:
    """Set planned changes on the locked row, and its new embedding if the text changed."""
    if changes.get("repository"):
        changes["repository"] = repository_for_write(principal=principal, slug=changes["repository"])
    for field, value in changes.items():
        setattr(locked, field, value)
    if embeds:
        apply_embedding(locked, vector)


def memory_update(*, principal: Principal, memory_id: MemoryId, data: Mapping[str, object], reason: str = "") -> Memory:
    """Partial update: only the given fields change. No change, no new version.

    ``data`` is the raw fields to change, parsed here. A new text is embedded before the row is
    locked: the model (or the HTTP provider's timeout) must not hold the lock. The write then locks
    the row and checks the memory is still the version the change was planned on; if another
    write came first, the update is planned again on the new version (a few times, then Conflict).
    """
    check_can_write(principal)
    unknown = set(data) - set(WRITABLE_FIELDS)
    if unknown:
        raise ValidationError(
            f"unknown field(s): {', '.join(sorted(unknown))}; updatable fields are: {', '.join(WRITABLE_FIELDS)}"
        )
    reason = reasons.reason(reason)
    policy = trust.write_policy_for(principal.organization)
    data = trust.screen_credentials(data, policy).data
    for _ in range(UPDATE_ATTEMPTS):
        memory = memory_for_write(principal, memory_id, lock=False)
        check_mutable(principal, memory, "changing it")
        check_writable(principal, memory)
        screening = trust.screen_credentials(data, policy)  # redacted already: only its notes are new
        planned = planned_changes(principal, memory, data)
        if planned.get("status") in STATUS_DECISIONS:  # a curator's decision, taken by an edit
            workflow.decision(STATUS_DECISIONS[planned["status"]]).check(principal, memory)
        changes = screened_changes(principal, policy, screening, memory, planned)
        if not changes:
            return _answered(memory, screening.notes)
        embeds, vector = embed_changes(memory, changes)
        with transaction.atomic():
            locked = memory_for_write(principal, memory.pk)
            if locked.version != memory.version:
                continue
            set_changes(principal, locked, changes, embeds, vector)
            change = "status" if set(changes) == {"status"} else "update"
            fields = sorted(changes)
            saved = save_change(
                principal=principal, memory=locked, fields=fields, change=change, reason=reason, embedded=embeds
            )
        return _answered(saved, screening.notes)
    raise Conflict(f"memory {memory.pk} kept changing while this update was written; read it again and retry")


def screened_changes(
    principal: Principal, policy: WritePolicy, screening: trust.Screening, memory: Memory, changes: dict[str, Any]
) -> dict[str, Any]:
    """An update's changes once the write policy has had its say: a status it may not keep, an
    importance above its ceiling, and the flags a curator should see."""
    if not changes:
        return changes
    status = trust.apply_policy(
        principal, policy, screening, values=changes, status=changes.get("status", memory.status), current=memory
    )
    changes = dict(changes)
    if status != memory.status:
        changes["status"] = status
    else:
        changes.pop("status", None)
    if "importance" in changes and screening.importance is not None:
        changes["importance"] = screening.importance
        if changes["importance"] == memory.importance:
            del changes["importance"]
    if screening.flags:
        flags = trust.merged_flags(memory.review_flags, screening.flags)
        if flags != memory.review_flags:
            changes["review_flags"] = flags
    return changes
