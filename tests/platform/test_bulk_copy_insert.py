"""copy_insert writes rows exactly as bulk_create would, errors as Django's, and nothing half-written."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np
import pytest
from django.db import DataError, IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from pgvector import Vector
from psycopg.types.json import Jsonb

from knowledge.models import Mention
from memories.fields import vector_text
from memories.models import Memory, MemoryType, MemoryVersion, Status
from memory_platform.bulk import copy_insert, copy_rows, copy_values
from tests.conftest import Tenant

COMPARED = [field.attname for field in Memory._meta.concrete_fields if field.attname not in ("id", "idempotency_key")]


def _memory(tenant: Tenant, **fields: object) -> Memory:
    values: dict[str, object] = {
        "organization": tenant.organization,
        "scope_type": "organization",
        "memory_type": "decision_log",
        "title": "Queue: RabbitMQ, not Kafka",
        "current_content": "We chose RabbitMQ over Kafka; it's simpler to run.\tTabs, \\backslashes\\ and\nnewlines.",
        "status": "active",
        "importance": 7,
        "metadata": {"ticket": "OPS-12", "weight": 1.5, "reviewed": True, "note": None},
        "tags": ["queue", "infra, core", 'with "quotes"', "{braces}"],
        "source": {"url": "https://example.com/adr/12"},
        "valid_from": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        "updated_at": datetime(2026, 1, 1, tzinfo=UTC),
        "embedding": np.linspace(-1, 1, 384, dtype=np.float32).tolist(),
        "embedding_status": "ready",
        "embedding_model": "all-MiniLM-L6-v2",
    }
    values.update(fields)
    return Memory(**values)


def _stored_alike(copied: Memory, created: Memory) -> Memory:
    """``copied`` inserted by copy_insert and ``created`` by bulk_create are stored alike (but for
    their keys); the copied one as read back."""
    copy_insert([copied])
    Memory.objects.bulk_create([created])
    by_copy = Memory.objects.get(pk=copied.pk)
    by_bulk_create = Memory.objects.get(pk=created.pk)
    for name in COMPARED:
        assert getattr(by_copy, name) == getattr(by_bulk_create, name), name
    return by_copy


def test_rows_are_stored_as_bulk_create_stores_them(acme: Tenant) -> None:
    copied, created = _memory(acme), _memory(acme)

    by_copy = _stored_alike(copied, created)
    assert by_copy.search_vector  # the generated column was computed for the copied row too
    assert Memory.objects.filter(pk=copied.pk, search_vector="rabbitmq").exists()


@pytest.mark.parametrize(
    "fields",
    [
        {"importance": "7"},  # text for a number
        {"importance": True},  # a bool for a number: 1
        {"status": Status.ACTIVE, "memory_type": MemoryType.DECISION_LOG},  # enum members
        {"id": "6f1c1c0e-8a1e-4c1a-9d3e-0f6b1a2c3d4e"},  # text for a UUID
        {"title": ""},
    ],
    ids=["text-for-int", "bool-for-int", "enums", "text-for-uuid", "empty-text"],
)
def test_values_the_field_converts_are_stored_as_bulk_create_stores_them(
    acme: Tenant, fields: dict[str, object]
) -> None:
    copied = _memory(acme, **fields)
    created = _memory(acme, **{**fields, "id": uuid.uuid4()})

    _stored_alike(copied, created)


def test_null_and_empty_values_survive(acme: Tenant) -> None:
    memory = _memory(acme, embedding=None, embedding_status="pending", tags=[], metadata={}, valid_from=None)

    copy_insert([memory])

    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.embedding, stored.tags, stored.metadata, stored.valid_from) == (None, [], {}, None)


def test_copied_instances_count_as_saved(acme: Tenant) -> None:
    memory = _memory(acme)
    copy_insert([memory])

    memory.importance = 9
    memory.save(update_fields=["importance"])  # an UPDATE, not a second INSERT

    assert Memory.objects.get(pk=memory.pk).importance == 9


def test_rows_with_database_assigned_keys_get_them(acme: Tenant) -> None:
    memory = _memory(acme)
    copy_insert([memory])

    versions = [MemoryVersion(memory=memory, version=n, snapshot={"n": n}, change="create", actor="t") for n in (1, 2)]
    copy_insert(versions)

    assert sorted(MemoryVersion.objects.filter(memory=memory).values_list("version", flat=True)) == [1, 2]
    assert all(pk is not None for pk in MemoryVersion.objects.filter(memory=memory).values_list("pk", flat=True))


def test_a_conflict_is_djangos_integrity_error_and_writes_nothing(acme: Tenant) -> None:
    taken = _memory(acme)
    copy_insert([taken])
    fresh = _memory(acme, id=uuid.uuid4())
    duplicate = _memory(acme, id=taken.pk)

    with pytest.raises(IntegrityError), transaction.atomic():
        copy_insert([fresh, duplicate])

    assert not Memory.objects.filter(pk=fresh.pk).exists()
    assert Memory.objects.filter(organization=acme.organization).count() == 1


def test_instances_of_different_models_are_refused(acme: Tenant) -> None:
    memory = _memory(acme)

    with pytest.raises(TypeError, match="one model"):
        copy_insert([memory, MemoryVersion(memory=memory, version=1, snapshot={}, change="create", actor="t")])


def test_a_naive_time_is_refused_as_a_save_refuses_it(acme: Tenant) -> None:
    """A value the field would convert still goes its way: Django's warning about a time without a
    zone (an error in this suite) is raised for a copied row as for a saved one."""
    with pytest.raises(RuntimeWarning, match="naive datetime"):
        copy_insert([_memory(acme, valid_from=datetime(2026, 1, 2, 3, 4, 5))])


def test_rows_given_as_values_are_stored_as_instances_are(acme: Tenant) -> None:
    memory = _memory(acme)
    copy_insert([memory])
    columns = ("organization_id", "memory_id", "key", "written", "kind")

    copy_rows(Mention, columns, [(acme.organization.pk, memory.pk, "rabbitmq", "RabbitMQ", "name")])
    Mention.objects.bulk_create(
        [Mention(organization=acme.organization, memory=memory, key="kafka", written="Kafka", kind="name")]
    )

    stored = {m.key: (m.organization_id, m.memory_id, m.written, m.kind) for m in Mention.objects.filter(memory=memory)}
    assert stored == {
        "rabbitmq": (acme.organization.pk, memory.pk, "RabbitMQ", "name"),
        "kafka": (acme.organization.pk, memory.pk, "Kafka", "name"),
    }
    with pytest.raises(KeyError):  # a name that is no field of the model
        copy_rows(Mention, ("organization_id", "memory"), [(acme.organization.pk, memory.pk)])


def test_a_table_of_common_types_is_copied_in_binary_and_its_vectors_kept_exactly(acme: Tenant) -> None:
    floats = np.random.default_rng(7).standard_normal(384).astype(np.float32)
    given = [floats.tolist(), floats, Vector(floats), vector_text(floats.tolist())]  # each form pgvector takes
    memories = [_memory(acme, id=uuid.uuid4(), embedding=value) for value in given]

    with CaptureQueriesContext(connection) as captured:
        copy_insert(memories)

    [statement] = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("COPY")]
    assert "(FORMAT BINARY)" in statement
    for memory in memories:
        assert np.array_equal(np.asarray(Memory.objects.get(pk=memory.pk).embedding, dtype=np.float32), floats)


def test_a_vector_of_the_wrong_size_is_refused_and_nothing_written(acme: Tenant) -> None:
    with pytest.raises(DataError, match="expected 384 dimensions"), transaction.atomic():
        copy_insert([_memory(acme), _memory(acme, id=uuid.uuid4(), embedding=[0.5] * 3)])

    assert not Memory.objects.filter(organization=acme.organization).exists()


def test_a_value_its_column_cannot_hold_is_a_data_error(acme: Tenant) -> None:
    """As PostgreSQL refuses it when it reads the value as text (a number past smallint's range)."""
    with pytest.raises(DataError, match="memories_memory cannot hold"), transaction.atomic():
        copy_insert([_memory(acme), _memory(acme, id=uuid.uuid4(), importance=10**30)])

    assert not Memory.objects.filter(organization=acme.organization).exists()


def test_rows_given_by_attribute_name_are_stored_as_their_instances_are(acme: Tenant) -> None:
    memory = _memory(acme)
    copy_insert([memory])
    values = {"memory_id": memory.pk, "organization_id": acme.organization.pk, "version": 1, "change": "create",
              "snapshot": {"title": memory.title, "at": "2026-01-01", "n": 1.5}, "changed_fields": ["title"],
              "actor": "token mp_abc", "reason": "tab\there"}  # fmt: skip
    before = timezone.now()

    copy_values(MemoryVersion, [values])
    MemoryVersion.objects.bulk_create([MemoryVersion(**{**values, "version": 2})])

    copied, created = (MemoryVersion.objects.get(memory=memory, version=n) for n in (1, 2))
    for field in MemoryVersion._meta.concrete_fields:
        if field.attname not in ("id", "version", "created_at"):
            assert getattr(copied, field.attname) == getattr(created, field.attname), field.attname
    assert copied.created_at >= before  # left out: the field's default, as for a new instance


def test_a_vector_given_as_a_row_value_is_copied_in_binary(acme: Tenant) -> None:
    floats = np.linspace(-1, 1, 384, dtype=np.float32)
    columns = ("id", "organization_id", "scope_type", "memory_type", "title", "current_content", "status",
               "importance", "metadata", "tags", "version", "source", "review_flags", "created_at", "updated_at",
               "embedding", "embedding_model", "embedding_status", "author_kind", "author_name", "reviewed_by",
               "idempotency_fingerprint")  # fmt: skip
    now = datetime(2026, 1, 1, tzinfo=UTC)
    row = (uuid.uuid4(), acme.organization.pk, "organization", "fact", "A vector", "A vector.", "active", 3,
           Jsonb({}), [], 1, Jsonb({}), Jsonb([]), now, now, floats.tolist(), "m", "ready", "agent", "a", "",
           "")  # fmt: skip

    copy_rows(Memory, columns, [row])

    stored = Memory.objects.get(pk=row[0])
    assert np.array_equal(np.asarray(stored.embedding, dtype=np.float32), floats)
