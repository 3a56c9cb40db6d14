"""Every write to memories: create (with upsert and idempotency), update, status workflow,
soft delete and restore, batch create. Each change writes a full version and an audit event."""

from __future__ import annotations

import functools
import hashlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memories import embedding_pipeline, validation
from memories.embedding_pipeline import (
    EMBEDDING_FIELDS,
    apply_embedding,
    embed_texts,
    embed_texts_later,
    embedding_text,
)
from memories.embeddings import get_provider
from memories.models import EmbeddingStatus, Memory, MemoryVersion, ScopeType, Status
from memories.public import memory_values
from memories.search import memories_changed
from memories.selectors import memory_get, memory_visible_queryset
from memory_platform.bulk import copy_insert
from memory_platform.exceptions import Conflict, DomainError, Locked, PermissionDenied, ValidationError
from organizations.audit import audit_event, audit_record
from organizations.models import Repository, Role
from organizations.principal import Principal
from organizations.services import repository_get_or_create

AGENT_STATUSES = frozenset({Status.DRAFT, Status.ACTIVE})


class _Compute:
    """Sentinel: embed the memory during the write (rather than use a vector computed earlier)."""


COMPUTE = _Compute()
Vector = list[float] | None

# Fields a caller may set; the rest (id, version, timestamps, actors) belong to the platform.
WRITABLE_FIELDS = (
    "scope_type",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "metadata",
    "tags",
    "repository",
    "source",
    "valid_from",
    "valid_until",
)


def memory_snapshot(memory: Memory) -> dict[str, Any]:
    """The memory as one JSON object: what a version keeps (its public fields and its owner)."""
    return {**memory_values(memory), "owner": memory.owner.get_username() if memory.owner else None}


def _version_row(*, principal: Principal, memory: Memory, change: str, fields: list[str], reason: str) -> MemoryVersion:
    return MemoryVersion(
        memory=memory,
        version=memory.version,
        snapshot=memory_snapshot(memory),
        change=change,
        reason=reason,
        changed_fields=fields,
        actor=principal.label,
        user=principal.user,
        token=principal.token,
    )


def _write_version(*, principal: Principal, memory: Memory, change: str, fields: list[str], reason: str) -> None:
    _version_row(principal=principal, memory=memory, change=change, fields=fields, reason=reason).save(
        force_insert=True
    )
    audit_record(
        principal=principal,
        action=f"memory.{change}",
        target_type="memory",
        target_id=memory.id,
        reason=reason,
        data={"version": memory.version, "fields": fields},
    )
    memories_changed(memory.organization_id)


# --- rules -------------------------------------------------------------------------------------


def _check_can_write(principal: Principal) -> None:
    principal.require(Role.AGENT, "writing memories")


def _check_scope(principal: Principal, scope_type: str) -> None:
    if scope_type == ScopeType.SYSTEM and not principal.is_superuser:
        raise PermissionDenied(
            "only platform administrators may write system-scope memories; "
            "use scope_type 'organization' for knowledge shared across your organization"
        )
    if scope_type == ScopeType.USER and principal.user is None:
        raise ValidationError(
            "user-scope memories belong to a person, and this token has no user; "
            "use scope_type 'organization' or 'repository', or a personal token",
            details={"field": "scope_type"},
        )


def _check_status_allowed(principal: Principal, new_status: str, current: str | None = None) -> None:
    if principal.has_role(Role.CURATOR):
        return
    if new_status not in AGENT_STATUSES:
        raise PermissionDenied(
            f"setting status '{new_status}' needs the curator role; agents may use 'draft' or 'active'. "
            "Ask a curator to verify, lock or deprecate it."
        )
    if current is not None and current not in AGENT_STATUSES:
        raise PermissionDenied(f"this memory is '{current}'; only a curator can move it back to '{new_status}'")


def _check_mutable(principal: Principal, memory: Memory, action: str) -> None:
    if memory.status == Status.LOCKED and not principal.has_role(Role.CURATOR):
        raise Locked(
            f"memory {memory.id} is locked; {action} needs a curator. "
            "Ask a curator to unlock it, or write a new draft memory that proposes the change."
        )
    if memory.scope_type == ScopeType.SYSTEM and not principal.is_superuser:
        raise PermissionDenied(f"memory {memory.id} is a system memory; only platform administrators may change it")


# --- create ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NewMemory:
    scope_type: str
    memory_type: str
    current_content: str
    title: str | None
    status: str
    importance: int
    metadata: dict[str, Any]
    tags: list[str]
    repository: str | None
    source: dict[str, Any]
    valid_from: datetime | None
    valid_until: datetime | None

    def fingerprint(self) -> str:
        payload = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in self.__dict__.items()}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _parse_new(data: Mapping[str, Any]) -> _NewMemory:
    unknown = set(data) - set(WRITABLE_FIELDS)
    if unknown:
        raise ValidationError(
            f"unknown field(s): {', '.join(sorted(unknown))}; writable fields are: {', '.join(WRITABLE_FIELDS)}"
        )
    for required in ("scope_type", "memory_type", "current_content"):
        if data.get(required) in (None, ""):
            raise ValidationError(f"{required} is required", details={"field": required})
    new = _NewMemory(
        scope_type=validation.scope_type(data["scope_type"]),
        memory_type=validation.memory_type(data["memory_type"]),
        current_content=validation.content(data["current_content"]),
        title=validation.title(data["title"]) if data.get("title") not in (None, "") else None,
        status=validation.status(data.get("status") or Status.DRAFT),
        importance=validation.importance(data["importance"]) if data.get("importance") is not None else 1,
        metadata=validation.metadata(data.get("metadata")),
        tags=validation.tags(data.get("tags")),
        repository=validation.repository_slug(data.get("repository")),
        source=validation.json_object(data.get("source"), "source"),
        valid_from=validation.aware_datetime(data.get("valid_from"), "valid_from"),
        valid_until=validation.aware_datetime(data.get("valid_until"), "valid_until"),
    )
    _check_consistency(new.scope_type, new.repository, new.valid_from, new.valid_until)
    return new


def _check_consistency(
    scope_type: str, repository: str | Repository | None, valid_from: datetime | None, valid_until: datetime | None
) -> None:
    if scope_type == ScopeType.REPOSITORY and repository is None:
        raise ValidationError(
            "scope_type 'repository' needs a repository slug in 'repository'", details={"field": "repository"}
        )
    if scope_type != ScopeType.REPOSITORY and repository is not None:
        raise ValidationError(
            f"'repository' is only used with scope_type 'repository' (got scope_type '{scope_type}'); "
            "drop the repository or change the scope",
            details={"field": "repository"},
        )
    if valid_from and valid_until and valid_until <= valid_from:
        raise ValidationError("valid_until must be later than valid_from", details={"field": "valid_until"})


def memory_create(
    *,
    principal: Principal,
    data: Mapping[str, Any],
    memory_id: Any = None,
    idempotency_key: Any = None,
    organization: str | None = None,
    reason: str = "",
    embedding: Vector | _Compute = COMPUTE,
) -> Memory:
    """Create a memory.

    With ``memory_id``, an upsert: the memory is updated if it exists, created with that id if not.
    With ``idempotency_key``, a retry of the same request returns the memory created the first time,
    and the same key with different content is a conflict; this holds under concurrent requests.
    ``embedding`` is for batch writes that embedded many texts at once (None: provider was down).
    """
    principal.check_organization(organization)
    _check_can_write(principal)
    new = _parse_new(data)
    key = validation.idempotency_key(idempotency_key)
    wanted_id = validation.memory_id(memory_id) if memory_id not in (None, "") else None

    if key is not None:
        existing = _memory_for_idempotency_key(principal, key, new)
        if existing is not None:
            return existing

    if wanted_id is not None:
        current = Memory.objects.filter(pk=wanted_id).select_related("organization").first()
        if current is not None:
            if not memory_visible_queryset(principal, include_deleted=True).filter(pk=wanted_id).exists():
                raise Conflict(f"id {wanted_id} cannot be used; omit id and the server will choose one")
            if current.deleted_at is not None:
                raise Conflict(f"memory {wanted_id} was deleted; ask a curator to restore it, or write without an id")
            fields = {k: v for k, v in data.items() if v is not None}
            return memory_update(principal=principal, memory_id=wanted_id, data=fields, reason=reason or "upsert")

    if isinstance(embedding, _Compute):
        # Embedded before the transaction opens, so no lock is held while the model runs.
        title = new.title or validation.derive_title(new.current_content)
        vectors = embed_texts([embedding_text(title, new.current_content)])
        embedding = vectors[0] if vectors else None
    try:
        with transaction.atomic():
            return _insert(principal=principal, new=new, memory_id=wanted_id, key=key, reason=reason, vector=embedding)
    except IntegrityError as exc:
        # A concurrent request with the same idempotency key (or id) won the race: answer as a retry.
        if key is not None:
            existing = _memory_for_idempotency_key(principal, key, new)
            if existing is not None:
                return existing
        if wanted_id is not None and Memory.objects.filter(pk=wanted_id).exists():
            raise Conflict(f"memory {wanted_id} was created concurrently; retry the request") from exc
        raise


def _memory_for_idempotency_key(principal: Principal, key: str, new: _NewMemory) -> Memory | None:
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
    *, principal: Principal, new: _NewMemory, memory_id: uuid.UUID | None, key: str | None, reason: str, vector: Vector
) -> Memory:
    _check_scope(principal, new.scope_type)
    _check_status_allowed(principal, new.status)
    repository = repository_get_or_create(principal=principal, slug=new.repository) if new.repository else None
    memory = _new_row(principal=principal, new=new, memory_id=memory_id, key=key, repository=repository)
    apply_embedding(memory, vector)
    memory.save(force_insert=True)
    _write_version(principal=principal, memory=memory, change="create", fields=list(WRITABLE_FIELDS), reason=reason)
    return memory


def _new_row(
    *,
    principal: Principal,
    new: _NewMemory,
    memory_id: uuid.UUID | None,
    key: str | None,
    repository: Repository | None,
    now: datetime | None = None,
) -> Memory:
    """The unsaved memory a create writes (its embedding not set yet), created ``now`` (default: now)."""
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
        idempotency_fingerprint=new.fingerprint() if key else "",
    )
    if memory_id is not None:
        memory.id = memory_id
    return memory


# --- update ------------------------------------------------------------------------------------


def _locked_for_write(principal: Principal, memory_id: Any) -> Memory:
    return memory_get(principal, memory_id, for_update=True)


def _save_change(*, principal: Principal, memory: Memory, fields: list[str], change: str, reason: str) -> Memory:
    memory.version += 1
    memory.updated_at = timezone.now()
    memory.updated_by = principal.user
    memory.updated_by_token = principal.token
    derived: list[str] = []
    if {"title", "current_content"} & set(fields):
        vectors = embed_texts([embedding_text(memory.title, memory.current_content)])
        apply_embedding(memory, vectors[0] if vectors else None)
        derived = EMBEDDING_FIELDS
    memory.save(update_fields=[*fields, *derived, "version", "updated_at", "updated_by", "updated_by_token"])
    _write_version(principal=principal, memory=memory, change=change, fields=fields, reason=reason)
    return memory


@transaction.atomic
def memory_update(*, principal: Principal, memory_id: Any, data: Mapping[str, Any], reason: str = "") -> Memory:
    """Partial update: only the given fields change. No change, no new version."""
    _check_can_write(principal)
    unknown = set(data) - set(WRITABLE_FIELDS)
    if unknown:
        raise ValidationError(
            f"unknown field(s): {', '.join(sorted(unknown))}; updatable fields are: {', '.join(WRITABLE_FIELDS)}"
        )
    memory = _locked_for_write(principal, memory_id)
    _check_mutable(principal, memory, "changing it")

    parsers: dict[str, Any] = {
        "scope_type": validation.scope_type,
        "memory_type": validation.memory_type,
        "title": validation.title,
        "current_content": validation.content,
        "status": validation.status,
        "importance": validation.importance,
        "metadata": validation.metadata,
        "tags": validation.tags,
        "source": lambda v: validation.json_object(v, "source"),
        "valid_from": lambda v: validation.aware_datetime(v, "valid_from"),
        "valid_until": lambda v: validation.aware_datetime(v, "valid_until"),
    }
    changes: dict[str, Any] = {}
    for field, raw in data.items():
        if field == "repository":
            slug = validation.repository_slug(raw)
            current_slug = memory.repository.slug if memory.repository else None
            if slug != current_slug:
                changes["repository"] = repository_get_or_create(principal=principal, slug=slug) if slug else None
            continue
        if raw is None and field not in ("valid_from", "valid_until"):
            continue
        value = parsers[field](raw)
        if getattr(memory, field) != value:
            changes[field] = value

    # A title the platform derived follows the content; one a person wrote stays.
    title_was_derived = memory.title == validation.derive_title(memory.current_content)
    if "current_content" in changes and "title" not in data and title_was_derived:
        changes["title"] = validation.derive_title(changes["current_content"])
    if "status" in changes:
        _check_status_allowed(principal, changes["status"], memory.status)
    if "scope_type" in changes:
        _check_scope(principal, changes["scope_type"])
        if changes["scope_type"] != ScopeType.REPOSITORY and "repository" not in changes:
            changes["repository"] = None
        changes["owner"] = principal.user if changes["scope_type"] == ScopeType.USER else None
    _check_consistency(
        changes.get("scope_type", memory.scope_type),
        changes.get("repository", memory.repository),
        changes.get("valid_from", memory.valid_from),
        changes.get("valid_until", memory.valid_until),
    )
    changes = {k: v for k, v in changes.items() if getattr(memory, k) != v}
    if not changes:
        return memory
    for field, value in changes.items():
        setattr(memory, field, value)
    change = "status" if set(changes) == {"status"} else "update"
    return _save_change(principal=principal, memory=memory, fields=sorted(changes), change=change, reason=reason)


@transaction.atomic
def memory_set_status(*, principal: Principal, memory_id: Any, status: str, reason: str = "") -> Memory:
    _check_can_write(principal)
    new_status = validation.status(status)
    memory = _locked_for_write(principal, memory_id)
    _check_mutable(principal, memory, f"changing its status to '{new_status}'")
    _check_status_allowed(principal, new_status, memory.status)
    if memory.status == new_status:
        return memory
    memory.status = new_status
    return _save_change(principal=principal, memory=memory, fields=["status"], change="status", reason=reason)


def memory_verify(*, principal: Principal, memory_id: Any, reason: str = "") -> Memory:
    principal.require(Role.CURATOR, "verifying a memory")
    return memory_set_status(principal=principal, memory_id=memory_id, status=Status.VERIFIED, reason=reason)


def memory_lock(*, principal: Principal, memory_id: Any, reason: str = "") -> Memory:
    principal.require(Role.CURATOR, "locking a memory")
    return memory_set_status(principal=principal, memory_id=memory_id, status=Status.LOCKED, reason=reason)


def memory_deprecate(*, principal: Principal, memory_id: Any, reason: str = "") -> Memory:
    principal.require(Role.CURATOR, "deprecating a memory")
    return memory_set_status(principal=principal, memory_id=memory_id, status=Status.DEPRECATED, reason=reason)


@transaction.atomic
def memory_unlock(*, principal: Principal, memory_id: Any, reason: str = "") -> Memory:
    """Unlocking leaves the memory verified: it was reviewed, it just may change again."""
    principal.require(Role.CURATOR, "unlocking a memory")
    memory = _locked_for_write(principal, memory_id)
    if memory.status != Status.LOCKED:
        raise Conflict(f"memory {memory.id} is not locked (status '{memory.status}')")
    return memory_set_status(principal=principal, memory_id=memory.id, status=Status.VERIFIED, reason=reason)


# --- delete and restore ------------------------------------------------------------------------


@transaction.atomic
def memory_delete(*, principal: Principal, memory_id: Any, reason: str = "") -> Memory:
    """Soft delete: the row and every version stay; the memory leaves default reads."""
    _check_can_write(principal)
    memory = _locked_for_write(principal, memory_id)
    _check_mutable(principal, memory, "deleting it")
    memory.deleted_at = timezone.now()
    return _save_change(principal=principal, memory=memory, fields=["deleted_at"], change="delete", reason=reason)


@transaction.atomic
def memory_restore(*, principal: Principal, memory_id: Any, reason: str = "") -> Memory:
    principal.require(Role.CURATOR, "restoring a deleted memory")
    memory = memory_get(principal, memory_id, include_deleted=True, for_update=True)
    if memory.deleted_at is None:
        raise Conflict(f"memory {memory.pk} is not deleted")
    _check_mutable(principal, memory, "restoring it")
    memory.deleted_at = None
    return _save_change(principal=principal, memory=memory, fields=["deleted_at"], change="restore", reason=reason)


# --- batch -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchEntryResult:
    index: int
    memory: Memory | None = None
    error: DomainError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


_BATCH_ENTRY_CONTROL = ("id", "idempotency_key")


@transaction.atomic
def memory_batch_create(
    *, principal: Principal, entries: Any, organization: str | None = None
) -> list[BatchEntryResult]:
    """Create many memories; each entry is validated and saved on its own.

    A bad entry does not stop the others: the result lists, per entry, the memory or the error.
    """
    principal.check_organization(organization)
    _check_can_write(principal)
    limit = settings.MEMORY_BATCH_MAX_ENTRIES
    if not isinstance(entries, list) or not entries:
        raise ValidationError("memories must be a non-empty list of memory objects")
    if len(entries) > limit:
        raise ValidationError(f"a batch holds at most {limit} memories; got {len(entries)}. Split it.")
    errors: dict[int, DomainError] = {}
    parsed: dict[int, tuple[dict[str, Any], _NewMemory]] = {}
    for index, entry in enumerate(entries):
        try:
            if not isinstance(entry, Mapping):
                raise ValidationError(f"entry {index} must be a memory object, got {type(entry).__name__}")
            principal.check_organization(entry.get("organization"))
            data = {k: v for k, v in entry.items() if k not in (*_BATCH_ENTRY_CONTROL, "organization")}
            parsed[index] = (data, _parse_new(data))
        except DomainError as error:
            errors[index] = error

    texts = {
        index: embedding_text(new.title or validation.derive_title(new.current_content), new.current_content)
        for index, (_, new) in parsed.items()
    }
    results: dict[int, BatchEntryResult] = {i: BatchEntryResult(index=i, error=e) for i, e in errors.items()}
    bulk, one_by_one = _plan_batch(principal, entries, parsed, results)
    # Few embedding calls (the model is far faster on batches than one by one), pipelined with the
    # writes: the new memories are cut into chunks, all of them are queued for embedding at once
    # (worked on in order), and each chunk is inserted as soon as its vectors are there, while the
    # next ones are embedded. The entries written one by one are embedded last. Longest texts
    # first: each piece the model runs holds texts of about the same length (less padding), and the
    # last chunk, written after the model is done, is the quickest to embed.
    batch_time = timezone.now()
    chunks = _pipeline_chunks(sorted(bulk, key=lambda item: len(texts[item.index]), reverse=True))
    stages = [[item.index for item in chunk] for chunk in chunks]
    embedding = [_embed_later(texts, stage) for stage in [*stages, one_by_one]]
    vector_for: dict[int, Vector] = {}
    try:
        if bulk:
            created: dict[int, Memory] = {}
            try:
                with transaction.atomic():
                    repositories = _batch_repositories(principal, bulk, results)
                    for number, chunk in enumerate(chunks):
                        vector_for.update(embedding[number]())
                        created.update(
                            _bulk_insert(
                                principal,
                                chunk,
                                vector_for,
                                repositories=repositories,
                                results=results,
                                batch_time=batch_time,
                            )
                        )
            except IntegrityError:
                # A concurrent writer took one of the ids or idempotency keys meanwhile: write
                # these one by one, where memory_create answers such races.
                for item in bulk:
                    results.pop(item.index, None)
                one_by_one = sorted([*one_by_one, *(item.index for item in bulk)])
            else:
                results.update({index: BatchEntryResult(index=index, memory=m) for index, m in created.items()})
    finally:
        for vectors in embedding:  # all of them, also when a write failed: nothing left running
            vector_for.update(vectors())
    for index in one_by_one:
        entry = entries[index]
        try:
            with transaction.atomic():
                memory = memory_create(
                    principal=principal,
                    data=parsed[index][0],
                    memory_id=entry.get("id"),
                    idempotency_key=entry.get("idempotency_key"),
                    embedding=vector_for[index],
                )
            results[index] = BatchEntryResult(index=index, memory=memory)
        except DomainError as error:
            results[index] = BatchEntryResult(index=index, error=error)
    return [results[index] for index in range(len(entries))]


# The pipeline's chunks. The writes wait for the first chunk's vectors, and the last chunk is
# written after every embedding has finished, so both are small; the ones between are as large as
# the batch allows (fewer statements).
PIPELINE_FIRST_CHUNK = 8
PIPELINE_LAST_CHUNK = 8
PIPELINE_CHUNK = 32


def _pipeline_chunks(bulk: list[_BulkEntry]) -> list[list[_BulkEntry]]:
    """Split the batch's new memories into the chunks inserted one after another."""
    if len(bulk) <= PIPELINE_FIRST_CHUNK + PIPELINE_LAST_CHUNK:
        return [bulk] if bulk else []
    first, middle, last = (
        bulk[:PIPELINE_FIRST_CHUNK],
        bulk[PIPELINE_FIRST_CHUNK:-PIPELINE_LAST_CHUNK],
        bulk[-PIPELINE_LAST_CHUNK:],
    )
    count = -(-len(middle) // PIPELINE_CHUNK)
    size = -(-len(middle) // count)
    return [first, *(middle[start : start + size] for start in range(0, len(middle), size)), last]


def _embed_later(texts: dict[int, str], indices: list[int]) -> Callable[[], dict[int, Vector]]:
    """Start embedding these entries' texts; the returned call waits for their vectors (None each
    while the provider is down)."""
    wait = embed_texts_later([texts[index] for index in indices])

    @functools.cache
    def vectors() -> dict[int, Vector]:
        embedded = wait()
        found: list[Vector] = list(embedded) if embedded is not None else [None for _ in indices]
        return dict(zip(indices, found, strict=True))

    return vectors


@dataclass(frozen=True)
class _BulkEntry:
    index: int
    new: _NewMemory
    key: str | None
    memory_id: uuid.UUID | None


def _plan_batch(
    principal: Principal,
    entries: list[Any],
    parsed: dict[int, tuple[dict[str, Any], _NewMemory]],
    results: dict[int, BatchEntryResult],
) -> tuple[list[_BulkEntry], list[int]]:
    """Split the valid entries: plain new memories, inserted together, and the rest, one by one.

    One by one (through memory_create, after the bulk insert, in entry order): an entry whose id
    or idempotency key is already taken (an upsert, or a retry), or repeats an earlier entry's,
    or is malformed. Entries the rules refuse get their error in ``results``.
    """
    one_by_one: list[int] = []
    plain: list[_BulkEntry] = []
    keys: set[str] = set()
    ids: set[uuid.UUID] = set()
    for index, (_, new) in parsed.items():
        entry = entries[index]
        try:
            key = validation.idempotency_key(entry.get("idempotency_key"))
            raw_id = entry.get("id")
            wanted_id = validation.memory_id(raw_id) if raw_id not in (None, "") else None
        except DomainError:
            one_by_one.append(index)  # memory_create reports it
            continue
        if (key is not None and key in keys) or (wanted_id is not None and wanted_id in ids):
            one_by_one.append(index)
            continue
        if key is not None:
            keys.add(key)
        if wanted_id is not None:
            ids.add(wanted_id)
        plain.append(_BulkEntry(index=index, new=new, key=key, memory_id=wanted_id))
    taken_keys = (
        set(
            Memory.objects.filter(organization=principal.organization, idempotency_key__in=keys).values_list(
                "idempotency_key", flat=True
            )
        )
        if keys
        else set()
    )
    taken_ids = set(Memory.objects.filter(pk__in=ids).values_list("pk", flat=True)) if ids else set()
    bulk: list[_BulkEntry] = []
    for item in plain:
        if item.key in taken_keys or item.memory_id in taken_ids:
            one_by_one.append(item.index)
            continue
        try:
            _check_scope(principal, item.new.scope_type)
            _check_status_allowed(principal, item.new.status)
        except DomainError as error:
            results[item.index] = BatchEntryResult(index=item.index, error=error)
            continue
        bulk.append(item)
    return bulk, sorted(one_by_one)


def _batch_repositories(
    principal: Principal, bulk: list[_BulkEntry], results: dict[int, BatchEntryResult]
) -> dict[str, Repository]:
    """The repositories the batch's new memories name, the missing ones created (once per batch).

    Entries naming a repository that cannot be created get their error in ``results``.
    """
    slugs = {item.new.repository for item in bulk if item.new.repository}
    repositories: dict[str, Repository] = (
        {r.slug: r for r in Repository.objects.filter(organization=principal.organization, slug__in=slugs)}
        if slugs
        else {}
    )
    for slug in sorted(slugs - set(repositories)):  # the first memory naming a repository creates it
        try:
            with transaction.atomic():
                repositories[slug] = repository_get_or_create(principal=principal, slug=slug)
        except DomainError as error:
            for item in bulk:
                if item.new.repository == slug:
                    results[item.index] = BatchEntryResult(index=item.index, error=error)
    return repositories


def _bulk_insert(
    principal: Principal,
    bulk: list[_BulkEntry],
    vector_for: dict[int, Vector],
    *,
    repositories: dict[str, Repository],
    results: dict[int, BatchEntryResult],
    batch_time: datetime,
) -> dict[int, Memory]:
    """Insert new memories with their versions and audit events: one COPY each for all of them."""
    model_name = ""
    memories: dict[int, Memory] = {}
    pending: list[str] = []
    for item in bulk:
        if item.index in results:
            continue
        repository = repositories[item.new.repository] if item.new.repository else None
        memory = _new_row(
            principal=principal,
            new=item.new,
            memory_id=item.memory_id,
            key=item.key,
            repository=repository,
            # Written in order of length, created in entry order: a microsecond apart.
            now=batch_time + timedelta(microseconds=item.index),
        )
        vector = vector_for[item.index]
        if vector is None:
            memory.embedding_status = EmbeddingStatus.PENDING
            pending.append(str(memory.pk))
        else:
            model_name = model_name or get_provider().name
            memory.embedding, memory.embedding_status, memory.embedding_model = (
                vector,
                EmbeddingStatus.READY,
                model_name,
            )
        memories[item.index] = memory
    if not memories:
        return {}
    copy_insert(list(memories.values()))
    fields = list(WRITABLE_FIELDS)
    copy_insert(
        [
            _version_row(principal=principal, memory=memory, change="create", fields=fields, reason="")
            for memory in memories.values()
        ]
    )
    copy_insert(
        [
            audit_event(
                principal=principal,
                action="memory.create",
                target_type="memory",
                target_id=memory.id,
                data={"version": memory.version, "fields": fields},
            )
            for memory in memories.values()
        ]
    )
    if pending:
        transaction.on_commit(lambda: embedding_pipeline.schedule_backfill(pending))
    memories_changed(principal.organization.pk)
    return memories


# --- invalidate --------------------------------------------------------------------------------


@transaction.atomic
def memory_invalidate(*, principal: Principal, memory_id: Any, reason: Any, superseded_by: Any = None) -> Memory:
    """Record that a memory stopped being true: it ends now, is deprecated, and may name its successor."""
    _check_can_write(principal)
    if not isinstance(reason, str) or not reason.strip():
        raise ValidationError("reason is required: say why the memory is no longer true", details={"field": "reason"})
    memory = _locked_for_write(principal, memory_id)
    _check_mutable(principal, memory, "invalidating it")
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
    return _save_change(principal=principal, memory=memory, fields=fields, change="invalidate", reason=reason.strip())
