"""memory_platform.db.migration_ops.organization_from_parent: a tenant table whose rows reached their
organization through a parent's key gets its own organization column, filled in batches while it
is written to; a row inserted without it (the previous release, raw SQL) gets its parent's."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.db.models import F

from lifecycle.models import ProposalMemory
from lifecycle.services import proposal_create
from memories.batch import memory_batch_create
from memories.models import MemoryAccess, MemoryVersion
from memories.services import memory_update
from memory_platform.db.migration_ops import organization_from_parent
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def _sql(statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
        return list(cursor.fetchall()) if cursor.description else []


def _add_organization(batch: int) -> None:
    operation = organization_from_parent(
        "child", table="scratch_child", key="id", parent="parent", parent_table="scratch_parent", batch=batch
    )
    with connection.schema_editor(atomic=False) as editor:
        operation.database_operations[0].code(apps, editor)  # type: ignore[attr-defined]


@pytest.fixture
def scratch(acme: Tenant, globex: Tenant) -> dict[int, int]:
    """A parent table of 10 rows over two organizations and 25 children without their organization."""
    _sql("CREATE TABLE scratch_parent (id bigint PRIMARY KEY, organization_id bigint NOT NULL)")
    _sql("CREATE TABLE scratch_child (id bigserial PRIMARY KEY, parent_id bigint NOT NULL REFERENCES scratch_parent)")
    owners = {n: (acme if n % 2 else globex).organization.pk for n in range(10)}
    for n, organization in owners.items():
        _sql("INSERT INTO scratch_parent VALUES (%s, %s)", [n, organization])
    for n in range(25):
        _sql("INSERT INTO scratch_child (parent_id) VALUES (%s)", [n % 10])
    return owners


def _misplaced() -> int:
    return _sql(
        "SELECT count(*) FROM scratch_child c JOIN scratch_parent p ON p.id = c.parent_id "
        "WHERE c.organization_id IS DISTINCT FROM p.organization_id"
    )[0][0]


def test_the_rows_there_are_filled_in_batches_and_the_column_is_required(scratch: dict[int, int]) -> None:
    _add_organization(batch=4)  # seven batches

    assert _sql("SELECT count(*) FROM scratch_child")[0][0] == 25
    assert _misplaced() == 0
    assert _sql(
        "SELECT is_nullable FROM information_schema.columns "
        "WHERE table_name = 'scratch_child' AND column_name = 'organization_id'"
    ) == [("NO",)]


def test_a_row_inserted_without_it_gets_its_parents_and_one_naming_another_organization_is_refused(
    scratch: dict[int, int],
) -> None:
    _add_organization(batch=10)

    _sql("INSERT INTO scratch_child (parent_id) VALUES (3)")  # as the previous release writes
    assert _misplaced() == 0
    with pytest.raises(IntegrityError), transaction.atomic():
        _sql("INSERT INTO scratch_child (parent_id, organization_id) VALUES (3, -1)")
        _sql("SET CONSTRAINTS ALL IMMEDIATE")


def test_run_again_after_being_cut_off_it_finishes(scratch: dict[int, int]) -> None:
    _add_organization(batch=4)
    _sql("ALTER TABLE scratch_child ALTER COLUMN organization_id DROP NOT NULL")
    _sql("UPDATE scratch_child SET organization_id = NULL WHERE id > 20")  # as if cut off before these
    _sql("SET CONSTRAINTS ALL IMMEDIATE")  # the test's one transaction: its key checks are done now

    _add_organization(batch=4)

    assert _misplaced() == 0


def test_every_version_access_count_and_proposed_memory_is_in_its_organization(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory
) -> None:
    mine = make_memory(current_content="Deploys wait for two approvals.")
    memory_update(principal=acme.agent, memory_id=mine.pk, data={"current_content": "Deploys wait for one approval."})
    memory_batch_create(
        principal=globex.agent,
        entries=[{"scope_type": "organization", "memory_type": "fact", "current_content": f"Globex note {n}."}
               for n in range(3)],
    )  # fmt: skip
    _sql("INSERT INTO memories_memoryaccess (memory_id, access_count) VALUES (%s, 1)", [mine.pk])  # raw, as flushes
    twin = make_memory(current_content="Deploys wait for one approval!")
    proposal_create(organization_id=acme.organization.pk, kind="merge", memory_ids=[mine.pk, twin.pk], created_by="t")

    assert MemoryVersion.objects.count() >= 5
    assert not MemoryVersion.objects.exclude(organization_id=F("memory__organization_id")).exists()
    assert MemoryAccess.objects.get(memory=mine).organization_id == acme.organization.pk
    proposed = ProposalMemory.objects.filter(memory__in=[mine, twin])
    assert sorted(proposed.values_list("organization_id", flat=True)) == [acme.organization.pk] * 2
