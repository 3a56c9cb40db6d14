"""memory_batch_create validates and saves each entry on its own and reports per-entry results."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from memories.batch import memory_batch_create
from memories.models import Memory
from memory_platform.exceptions import NotFound, PermissionDenied, ValidationError
from tests.conftest import Tenant


def _entry(text: str, **fields: Any) -> dict[str, Any]:
    return {"scope_type": "organization", "memory_type": "fact", "current_content": text, **fields}


def test_valid_entries_are_created_and_bad_ones_reported(acme: Tenant) -> None:
    entries: list[Any] = [
        _entry("The build uses Python 3.12."),
        _entry("Broken scope.", scope_type="galaxy"),
        _entry("The cache is Redis 7.", tags=["Cache"], importance=6),
        "not a memory",
        _entry("Written for another organization.", organization="globex"),
        {"scope_type": "organization", "memory_type": "fact"},
        _entry("Agents cannot verify their own memories.", status="verified"),
        _entry(
            "Frontend builds with Vite.",
            scope_type="repository",
            repository="web",
            organization="acme",
            create_repository=True,
        ),
        _entry("Mobile builds with Expo.", scope_type="repository", repository="wbe"),
    ]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert [r.index for r in results] == list(range(len(entries)))
    assert [r.ok for r in results] == [True, False, True, False, False, False, False, True, False]
    errors = {r.index: r.error for r in results if r.error is not None}
    assert isinstance(errors[1], ValidationError)
    assert "unknown scope_type 'galaxy'" in errors[1].message
    assert isinstance(errors[3], ValidationError)
    assert "entry 3 must be a memory object" in errors[3].message
    assert isinstance(errors[4], NotFound)
    assert "organization 'globex' not found" in errors[4].message
    assert isinstance(errors[5], ValidationError)
    assert "current_content is required" in errors[5].message
    assert isinstance(errors[6], PermissionDenied)
    assert "curator" in errors[6].message
    assert isinstance(errors[8], ValidationError)
    assert "repository 'wbe' does not exist in acme" in errors[8].message

    created = {r.index: r.memory for r in results if r.memory is not None}
    stored = {m.id: m for m in Memory.objects.filter(organization=acme.organization)}
    assert set(stored) == {m.id for m in created.values()}
    assert stored[created[2].id].tags == ["cache"]  # type: ignore[union-attr]
    assert stored[created[7].id].repository.slug == "web"  # type: ignore[union-attr]
    assert Memory.objects.count() == 3


def test_entries_may_carry_id_and_idempotency_key(acme: Tenant) -> None:
    wanted = uuid.uuid4()
    entries = [
        _entry("Deploys are blue-green.", id=str(wanted)),
        _entry("Feature flags live in LaunchDarkly.", idempotency_key="import-42"),
    ]
    first = memory_batch_create(principal=acme.agent, entries=entries)
    assert all(r.ok for r in first)
    assert first[0].memory is not None
    assert first[0].memory.id == wanted

    # Re-sending the same batch updates nothing and creates nothing.
    again = memory_batch_create(principal=acme.agent, entries=entries)
    assert all(r.ok for r in again)
    assert [r.memory.id for r in again if r.memory] == [r.memory.id for r in first if r.memory]
    assert Memory.objects.count() == 2
    assert set(Memory.objects.values_list("version", flat=True)) == {1}


def test_a_failed_entry_leaves_no_trace(acme: Tenant) -> None:
    entries = [
        _entry("Duplicate key, first.", idempotency_key="same"),
        _entry("Duplicate key, different content.", idempotency_key="same"),
    ]
    results = memory_batch_create(principal=acme.agent, entries=entries)
    assert [r.ok for r in results] == [True, False]
    assert "already used for different content" in results[1].error.message  # type: ignore[union-attr]
    assert list(Memory.objects.values_list("current_content", flat=True)) == ["Duplicate key, first."]


@pytest.mark.parametrize(
    "entries",
    [None, {"scope_type": "organization"}, "memories", [], ()],
    ids=["none", "object", "text", "empty", "tuple"],
)
def test_batch_must_be_a_non_empty_list(acme: Tenant, entries: Any) -> None:
    with pytest.raises(ValidationError, match="non-empty list"):
        memory_batch_create(principal=acme.agent, entries=entries)
    assert not Memory.objects.exists()


def test_batch_has_a_size_limit(acme: Tenant, settings: Any) -> None:
    settings.MEMORY_BATCH_MAX_ENTRIES = 3
    entries = [_entry(f"Fact {n}.") for n in range(4)]
    with pytest.raises(ValidationError, match="at most 3 memories; got 4") as exc:
        memory_batch_create(principal=acme.agent, entries=entries)
    assert "Split it" in exc.value.message
    assert not Memory.objects.exists()

    results = memory_batch_create(principal=acme.agent, entries=entries[:3])
    assert all(r.ok for r in results)
    assert Memory.objects.count() == 3


def test_reader_cannot_batch_write(acme: Tenant) -> None:
    with pytest.raises(PermissionDenied, match="agent role"):
        memory_batch_create(principal=acme.reader, entries=[_entry("A fact.")])
    assert not Memory.objects.exists()


def test_batch_for_another_organization_is_not_found(acme: Tenant, globex: Tenant) -> None:
    with pytest.raises(NotFound, match="organization 'globex' not found"):
        memory_batch_create(principal=acme.agent, entries=[_entry("A fact.")], organization="globex")
    assert not Memory.objects.exists()
