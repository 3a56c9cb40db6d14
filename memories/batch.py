"""Batch create: many memories in one call, each validated and saved on its own.

Plain new memories are written together (one COPY each for memories, versions and audit
events), pipelined with their embedding; the rest (upserts, retries, repeated keys) go through
memory_create one by one, so a batch answers each entry as memory_create would.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memories import embedding_pipeline, trust, validation
from memories.batch_pipeline import embed_later, pipeline_chunks, ready_chunks
from memories.embedding_pipeline import embedding_text
from memories.embeddings import get_provider
from memories.hints import report_conflicts, write_hints
from memories.inputs import WRITABLE_FIELDS, NewMemory
from memories.models import EmbeddingStatus, Memory, MemoryVersion, WritePolicy
from memories.rules import check_can_write, check_scope, check_status_allowed
from memories.search import memories_changed
from memories.services import Vector, memory_create, new_row, screened_new
from memories.versions import version_values
from memories.written import text_written
from memory_platform.bulk import copy_insert, copy_values
from memory_platform.db.tenant_keys import analyze_if_grown
from memory_platform.exceptions import DomainError, ValidationError
from organizations.audit import audit_values
from organizations.models import AuditEvent, Repository
from organizations.principal import Principal
from organizations.services import repositories_for_write


@dataclass(frozen=True)
class BatchEntryResult:
    index: int
    memory: Memory | None = None
    error: DomainError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


_BATCH_ENTRY_CONTROL = ("id", "idempotency_key", "create_repository")


def memory_batch_create(
    *, principal: Principal, entries: Sequence[Mapping[str, object]], organization: str | None = None
) -> list[BatchEntryResult]:
    """Create many memories; each entry is validated and saved on its own.

    Each entry is what memory_create takes as ``data``, with its ``id`` and ``idempotency_key``
    (and optionally the ``organization``) beside the fields.

    A bad entry does not stop the others: the result lists, per entry, the memory or the error.
    Memories are written a chunk per transaction (each whole: row, version, audit event), and no
    transaction is open while the model embeds.
    """
    principal.check_organization(organization)
    check_can_write(principal)
    limit = settings.MEMORY_BATCH_MAX_ENTRIES
    if not isinstance(entries, list) or not entries:
        raise ValidationError("memories must be a non-empty list of memory objects")
    if len(entries) > limit:
        raise ValidationError(f"a batch holds at most {limit} memories; got {len(entries)}. Split it.")
    errors: dict[int, DomainError] = {}
    parsed: dict[int, _Entry] = {}
    policy = trust.write_policy_for(principal.organization)
    analyze_if_grown(Memory._meta.db_table)  # before its references are checked (memory_platform.db.tenant_keys)
    for index, entry in enumerate(entries):
        try:
            parsed[index] = _parse_entry(principal, policy, index, entry)
        except DomainError as error:
            errors[index] = error

    texts = {
        index: embedding_text(
            item.new.title or validation.derive_title(item.new.current_content), item.new.current_content
        )
        for index, item in parsed.items()
    }
    results: dict[int, BatchEntryResult] = {i: BatchEntryResult(index=i, error=e) for i, e in errors.items()}
    bulk, one_by_one = _plan_batch(principal, parsed, results)
    # Few embedding calls (the model is far faster on batches than one by one), pipelined with the
    # writes: the new memories are cut into chunks, all of them are queued for embedding at once
    # (worked on in order), and each chunk is inserted as soon as its vectors are there, while the
    # next ones are embedded. The entries written one by one are embedded last. Longest texts
    # first: each piece the model runs holds texts of about the same length (less padding), and the
    # last chunk, written after the model is done, is the quickest to embed.
    batch_time = timezone.now()
    chunks = pipeline_chunks(sorted(bulk, key=lambda item: len(texts[item.index]), reverse=True))
    stages = [[item.index for item in chunk] for chunk in chunks]
    embedding = [embed_later(texts, stage) for stage in [*stages, one_by_one]]
    vector_for: dict[int, Vector] = {}
    inserted: set[int] = set()  # written together here (the others answer through memory_create)
    try:
        if bulk:
            created: dict[int, Memory] = {}
            repositories = _batch_repositories(principal, bulk, results)
            retried: list[int] = []
            for chunk in ready_chunks(chunks, embedding, vector_for):
                try:
                    # A transaction per chunk: none stays open (nor holds its rows) while the model
                    # embeds the next chunk; each memory is whole (row, version, audit event) in one.
                    with transaction.atomic():
                        written = _bulk_insert(
                            principal, chunk, vector_for, repositories=repositories, results=results,
                            batch_time=batch_time,
                        )  # fmt: skip
                except IntegrityError:
                    # A concurrent writer took one of the chunk's ids or idempotency keys meanwhile:
                    # write these one by one, where memory_create answers such races.
                    for item in chunk:
                        results.pop(item.index, None)
                    retried += [item.index for item in chunk]
                else:
                    created.update(written)
            one_by_one = sorted([*one_by_one, *retried])
            results.update({index: BatchEntryResult(index=index, memory=m) for index, m in created.items()})
            inserted = set(created)
    finally:
        for vectors in embedding:  # all of them, also when a write failed: nothing left running
            vector_for.update(vectors())
    for index in one_by_one:
        item = parsed[index]
        try:
            with transaction.atomic():
                memory, _ = memory_create(
                    principal=principal,
                    data=item.data,
                    memory_id=item.memory_id,
                    idempotency_key=item.key,
                    embedding=vector_for[index],
                    create_repository=item.create_repository,
                )
            results[index] = BatchEntryResult(index=index, memory=memory)
        except DomainError as error:
            results[index] = BatchEntryResult(index=index, error=error)
    answered = [results[index] for index in range(len(entries))]
    _hinted(parsed, answered, created=inserted)
    return answered


def _hinted(parsed: dict[int, _Entry], results: list[BatchEntryResult], *, created: set[int]) -> None:
    """Give the batch's new memories their write answers (memories.services._answered does it for
    the ones written one by one): the policy's notes, the write hints, conflicts to the curators."""
    fresh = [r.memory for r in results if r.memory is not None and r.index in created]
    hints = write_hints(fresh)
    for result in results:
        if result.memory is not None and result.index in created:
            result.memory.write_notes = tuple(parsed[result.index].notes)
            result.memory.write_hints = hints[result.memory.pk]
    with transaction.atomic():  # the batch's proposals in one commit
        report_conflicts([(memory, memory.write_hints.conflicts) for memory in fresh])


@dataclass(frozen=True)
class _Entry:
    """One batch entry, parsed: its memory fields (raw and checked), its idempotency key and id."""

    index: int
    data: dict[str, object]
    new: NewMemory  # as the write policy lets it be stored
    key: str | None
    memory_id: uuid.UUID | None
    create_repository: bool
    fingerprint: str = ""  # of the entry as sent (memories.services.new_row)
    flags: list[dict[str, Any]] = field(default_factory=list)
    notes: list[trust.Note] = field(default_factory=list)


def _parse_entry(principal: Principal, policy: WritePolicy, index: int, entry: object) -> _Entry:
    """Check an entry as memory_create would, in the same order (so with the same first error)."""
    if not isinstance(entry, Mapping):
        raise ValidationError(f"entry {index} must be a memory object, got {type(entry).__name__}")
    principal.check_organization(entry.get("organization"))
    screening = trust.screen_credentials(
        {k: v for k, v in entry.items() if k not in (*_BATCH_ENTRY_CONTROL, "organization")}, policy
    )
    data = screening.data
    requested = NewMemory.parse(data)
    new = screened_new(principal, policy, screening, requested)
    key = validation.idempotency_key(entry.get("idempotency_key"))
    raw_id = entry.get("id")
    wanted_id = validation.memory_id(raw_id) if raw_id not in (None, "") else None
    create_repository = entry.get("create_repository", False)
    if not isinstance(create_repository, bool):
        raise ValidationError("create_repository must be true or false", details={"field": "create_repository"})
    return _Entry(
        index=index,
        data=data,
        new=new,
        key=key,
        memory_id=wanted_id,
        create_repository=create_repository,
        fingerprint=requested.fingerprint() if key else "",
        flags=screening.flags,
        notes=screening.notes,
    )


def _plan_batch(
    principal: Principal, parsed: dict[int, _Entry], results: dict[int, BatchEntryResult]
) -> tuple[list[_Entry], list[int]]:
    """Split the valid entries: plain new memories, inserted together, and the rest, one by one.

    One by one (through memory_create, after the bulk insert, in entry order): an entry whose id
    or idempotency key is already taken (an upsert, or a retry), or repeats an earlier entry's.
    Entries the rules refuse get their error in ``results``.
    """
    one_by_one: list[int] = []
    plain: list[_Entry] = []
    keys: set[str] = set()
    ids: set[uuid.UUID] = set()
    for index, item in parsed.items():
        key, wanted_id = item.key, item.memory_id
        if (key is not None and key in keys) or (wanted_id is not None and wanted_id in ids):
            one_by_one.append(index)
            continue
        if key is not None:
            keys.add(key)
        if wanted_id is not None:
            ids.add(wanted_id)
        plain.append(item)
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
    bulk: list[_Entry] = []
    for item in plain:
        if item.key in taken_keys or item.memory_id in taken_ids:
            one_by_one.append(item.index)
            continue
        try:
            if item.memory_id is not None:
                validation.new_memory_id(item.memory_id)
            check_scope(principal, item.new.scope_type)
            check_status_allowed(principal, item.new.status)
        except DomainError as error:
            results[item.index] = BatchEntryResult(index=item.index, error=error)
            continue
        bulk.append(item)
    return bulk, sorted(one_by_one)


def _batch_repositories(
    principal: Principal, bulk: list[_Entry], results: dict[int, BatchEntryResult]
) -> dict[str, Repository]:
    """The repositories the batch's new memories name, the missing ones created (together) when an
    entry naming them asks for it with ``create_repository``.

    Entries naming a repository that does not exist (and none asked to create), or that cannot be
    created, get their error in ``results``.
    """
    repositories, errors = repositories_for_write(
        principal=principal,
        slugs={item.new.repository for item in bulk if item.new.repository},
        create={item.new.repository for item in bulk if item.new.repository and item.create_repository},
    )
    for item in bulk:
        if item.new.repository in errors:
            results[item.index] = BatchEntryResult(index=item.index, error=errors[item.new.repository])
    return repositories


def _bulk_insert(
    principal: Principal,
    bulk: list[_Entry],
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
        memory = new_row(
            principal=principal,
            new=item.new,
            memory_id=item.memory_id,
            key=item.key,
            repository=repository,
            fingerprint=item.fingerprint,
            flags=item.flags,
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
    copy_values(
        MemoryVersion,
        [
            version_values(principal=principal, memory=memory, change="create", fields=fields, reason="")
            for memory in memories.values()
        ],
    )
    copy_values(
        AuditEvent,
        [
            audit_values(
                principal=principal,
                action="memory.create",
                target_type="memory",
                target_id=memory.id,
                data={"version": memory.version, "fields": fields},
            )
            for memory in memories.values()
        ],
    )
    if pending:
        transaction.on_commit(lambda: embedding_pipeline.schedule_backfill(pending))
    memories_changed(principal.organization.pk, created_only=True)
    text_written(principal.organization.pk, list(memories.values()), created=True)
    return memories
