"""Every table of the platform's own apps either belongs to one organization and says which (an
``organization`` column), or is shared by all of them for a reason written in tests/tenancy_sql.py.

That column is what keeps more than one database server open (docs/explanation/performance.md,
"Past one database server"): Citus distributes a table by it, co-locating an organization's rows
of every table on one node, and what all organizations share becomes a reference table copied to
each. A tenant's table without the column could be neither: its rows could not follow their
organization. A new table of an app must take a side.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, connection, models, transaction

from knowledge.models import Mention, MentionKind
from memories.models import MemoryVersion
from memories.services import memory_create
from memory_platform.db.tenant_keys import constraint_name
from tests.conftest import Tenant
from tests.tenancy_sql import SHARED, distributed_tables, has_organization, platform_tables


def test_every_table_belongs_to_an_organization_or_is_shared_for_a_reason() -> None:
    undecided = sorted(
        table for table, model in platform_tables().items() if not has_organization(model) and table not in SHARED
    )
    assert not undecided, f"{undecided}: give each an organization (a tenant's rows) or list it in SHARED with why"


def test_the_shared_tables_are_there_and_name_no_organization() -> None:
    tables = platform_tables()
    assert set(SHARED) <= set(tables), set(SHARED) - set(tables)
    assert not [table for table in SHARED if has_organization(tables[table])]


def _references_between_distributed_tables() -> list[tuple[str, models.ForeignKey[Any, Any]]]:
    distributed = distributed_tables()
    return [
        (table, field)
        for table, model in platform_tables().items()
        if table in distributed
        for field in model._meta.concrete_fields
        if isinstance(field, models.ForeignKey) and field.related_model._meta.db_table in distributed  # type: ignore[union-attr]
    ]


def test_there_are_references_between_distributed_tables_to_check() -> None:
    names = {f"{table}.{field.column}" for table, field in _references_between_distributed_tables()}
    assert {"memories_memoryversion.memory_id", "knowledge_memorylink.target_id", "code_index_codechunk.file_id"} <= (
        names
    )
    assert len(names) == 21, sorted(names)


@pytest.mark.django_db
def test_every_reference_between_distributed_tables_names_the_organization_on_both_sides() -> None:
    wrong = []
    with connection.cursor() as cursor:
        for table, field in _references_between_distributed_tables():
            parent = field.related_model._meta.db_table  # type: ignore[union-attr]
            cursor.execute(
                "SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint "
                "WHERE contype = 'f' AND conrelid = %s::regclass AND confrelid = %s::regclass",
                [table, parent],
            )
            found = {definition: (name, validated) for name, definition, validated in cursor.fetchall()}
            within = (
                f"FOREIGN KEY ({field.column}, organization_id) REFERENCES {parent}("
                f"{field.target_field.column}, organization_id) DEFERRABLE INITIALLY DEFERRED"  # type: ignore[union-attr]
            )
            if field.db_constraint:
                wrong.append(f"{table}.{field.name}: db_constraint=True (Django would add a key by id alone)")
            if within not in found or found[within] != (constraint_name(table, field.column), True):
                wrong.append(f"{table}.{field.column}: no validated {within}; found {found}")
            by_id_alone = [definition for definition in found if definition.startswith(f"FOREIGN KEY ({field.column})")]
            if by_id_alone:
                wrong.append(f"{table}.{field.column}: a key by id alone besides: {by_id_alone}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.django_db
def test_the_database_refuses_a_row_naming_another_organizations_row(acme: Tenant, globex: Tenant) -> None:
    memory = memory_create(
        principal=acme.agent, data={"scope_type": "organization", "memory_type": "fact", "current_content": "Ours."}
    )[0]
    version = MemoryVersion.objects.filter(memory=memory).first()
    assert version is not None

    with pytest.raises(IntegrityError, match="same_org"), transaction.atomic():
        MemoryVersion.objects.filter(pk=version.pk).update(organization=globex.organization)
        connection.cursor().execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(IntegrityError, match="same_org"), transaction.atomic():
        Mention.objects.create(
            organization=globex.organization, memory=memory, key="ours", written="Ours", kind=MentionKind.ALIAS
        )
        connection.cursor().execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.django_db
def test_every_key_of_a_distributed_table_names_the_organization() -> None:
    """What Citus asks of a table it distributes: its primary key and every unique key (partial ones
    too) include the distribution column; the primary key is led by Django's, so a lookup by ``pk``
    reads it (memory_platform.db.tenant_unique)."""
    wrong = []
    tables = platform_tables()
    with connection.cursor() as cursor:
        for table in sorted(distributed_tables()):
            cursor.execute(
                "SELECT i.indexrelid::regclass::text, i.indisprimary, ARRAY(SELECT a.attname FROM unnest(i.indkey) "
                "WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n "
                "ORDER BY k.o)::text[] FROM pg_index i WHERE i.indrelid = %s::regclass AND i.indisunique",
                [table],
            )
            keys = cursor.fetchall()
            primary = [columns for _, is_primary, columns in keys if is_primary]
            if primary != [[tables[table]._meta.pk.column, "organization_id"]]:
                wrong.append(f"{table}: primary key {primary}")
            wrong += [
                f"{table}: unique {name} {columns}" for name, _, columns in keys if "organization_id" not in columns
            ]
    assert not wrong, "\n".join(wrong)
