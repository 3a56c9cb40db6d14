"""memory_platform.db.tenant_unique: a tenant table's primary key and unique keys come to name the
organization on tables already holding rows, while they are written to; references within the
organization keep holding through the swap and its way back; a run cut off half way finishes when
run again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from memory_platform.db.tenant_keys import add_tenant_key, build_parent_index, parent_index_name
from memory_platform.db.tenant_unique import (
    primary_key,
    primary_key_with_organization,
    primary_key_without_organization,
    swap_unique,
)
from tests.conftest import Tenant
from tests.writes_during import writes_during

# Built concurrently, which no transaction may hold: every test commits, and drops its tables after.
pytestmark = pytest.mark.django_db(transaction=True)


def _sql(statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
        return list(cursor.fetchall()) if cursor.description else []


def _editor() -> Any:
    return connection.schema_editor(atomic=False)


def _indexes(table: str) -> list[str]:
    """The table's indexes, as PostgreSQL would make them again (names left out)."""
    rows = _sql("SELECT indexdef FROM pg_indexes WHERE tablename = %s", [table])
    found = []
    for (definition,) in rows:
        unique = " UNIQUE" if definition.startswith("CREATE UNIQUE") else ""
        found.append(definition.split(" ON public.", 1)[1] + unique)
    return sorted(found)


def _reference() -> tuple[str, bool]:
    (row,) = _sql(
        "SELECT pg_get_constraintdef(oid), convalidated FROM pg_constraint "
        "WHERE conrelid = 'scratch_child'::regclass AND contype = 'f'"
    )
    return str(row[0]), bool(row[1])


@pytest.fixture
def owners(acme: Tenant, globex: Tenant) -> Iterator[list[int]]:
    """A parent table of 10 rows over two organizations, referenced within the organization by
    ``scratch_child`` (1,000 rows) as tenant_keys leaves it; the parents' organizations. Dropped after."""
    organizations = [(acme if n % 2 else globex).organization.pk for n in range(10)]
    _sql("CREATE TABLE scratch_parent (id bigint PRIMARY KEY, organization_id bigint NOT NULL, code text NOT NULL)")
    _sql(
        "CREATE TABLE scratch_child (id bigserial PRIMARY KEY, organization_id bigint NOT NULL, "
        "parent_id bigint NOT NULL, CONSTRAINT scratch_child_once UNIQUE (parent_id, id))"
    )
    _sql("CREATE UNIQUE INDEX scratch_child_one_big ON scratch_child (parent_id) WHERE id > 1000000")
    _sql(
        "INSERT INTO scratch_parent SELECT n, (%s::bigint[])[n + 1], 'c' || n FROM generate_series(0, 9) n",
        [organizations],
    )
    _sql(
        "INSERT INTO scratch_child (organization_id, parent_id) "
        "SELECT (%s::bigint[])[n %% 10 + 1], n %% 10 FROM generate_series(0, 999) n",
        [organizations],
    )
    with _editor() as editor:
        build_parent_index(editor, "scratch_parent")
        add_tenant_key(editor, "scratch_child", "parent_id", parent="scratch_parent", key="id")
    yield organizations
    _sql("DROP TABLE IF EXISTS scratch_child, scratch_parent")


def test_a_referenced_primary_key_becomes_the_index_its_references_name(owners: list[int]) -> None:
    before = _indexes("scratch_parent")
    assert "scratch_parent USING btree (id) UNIQUE" in before

    with _editor() as editor:
        primary_key_with_organization(editor, "scratch_parent")
        key = primary_key(editor, "scratch_parent")

    assert (key.name, key.columns) == ("scratch_parent_pkey", ["id", "organization_id"])
    assert _indexes("scratch_parent") == ["scratch_parent USING btree (id, organization_id) UNIQUE"], (
        "the index on the id alone is gone: one index fewer"
    )
    assert _reference() == (
        "FOREIGN KEY (parent_id, organization_id) REFERENCES scratch_parent(id, organization_id) "
        "DEFERRABLE INITIALLY DEFERRED",
        True,
    )
    with pytest.raises(IntegrityError, match="same_org"), transaction.atomic():
        _sql("INSERT INTO scratch_child (organization_id, parent_id) VALUES (%s, 2)", [owners[1]])
        _sql("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(IntegrityError, match="scratch_parent_pkey"):
        _sql("INSERT INTO scratch_parent VALUES (3, %s, 'again')", [owners[3]])


def test_taken_back_the_schema_is_what_it_was(owners: list[int]) -> None:
    parent, child = _indexes("scratch_parent"), _indexes("scratch_child")
    reference = _reference()
    with _editor() as editor:
        primary_key_with_organization(editor, "scratch_child")
        primary_key_with_organization(editor, "scratch_parent")

        primary_key_without_organization(editor, "scratch_parent")
        primary_key_without_organization(editor, "scratch_child")
        primary_key_without_organization(editor, "scratch_child")  # twice: nothing left to do

    assert (_indexes("scratch_parent"), _indexes("scratch_child")) == (parent, child)
    assert _reference() == reference, "the reference made again on its own index, and validated"
    assert _sql("SELECT to_regclass(%s) IS NOT NULL", [parent_index_name("scratch_parent")]) == [(True,)]
    assert _sql("SELECT count(*) FROM scratch_child") == [(1000,)]


def test_a_primary_key_still_named_by_a_reference_by_id_alone_is_left(
    owners: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    _sql("CREATE TABLE scratch_legacy (parent_id bigint REFERENCES scratch_parent)")
    try:
        with caplog.at_level(logging.WARNING, logger="memory_platform.db.tenant_unique"), _editor() as editor:
            primary_key_with_organization(editor, "scratch_parent")
            assert primary_key(editor, "scratch_parent").columns == ["id"]
    finally:
        _sql("DROP TABLE scratch_legacy")
    assert "scratch_parent: ['scratch_legacy_parent_id_fkey'] still name its primary key alone" in caplog.text


def test_unique_keys_name_the_organization_and_still_refuse_a_second_row(owners: list[int]) -> None:
    with _editor() as editor:
        swap_unique(editor, "scratch_child", "scratch_child_once", with_organization=True)
        swap_unique(editor, "scratch_child", "scratch_child_one_big", with_organization=True)

    assert set(_indexes("scratch_child")) == {
        "scratch_child USING btree (id) UNIQUE",
        "scratch_child USING btree (parent_id, id, organization_id) UNIQUE",
        "scratch_child USING btree (parent_id, organization_id) WHERE (id > 1000000) UNIQUE",
    }
    assert _sql("SELECT contype FROM pg_constraint WHERE conname = 'scratch_child_once'") == [("u",)]
    _sql("INSERT INTO scratch_child VALUES (2000000, %s, 4)", [owners[4]])
    with pytest.raises(IntegrityError, match="scratch_child_one_big"):
        _sql("INSERT INTO scratch_child VALUES (2000001, %s, 4)", [owners[4]])

    with _editor() as editor:
        swap_unique(editor, "scratch_child", "scratch_child_once", with_organization=False)
        swap_unique(editor, "scratch_child", "scratch_child_one_big", with_organization=False)
    assert "scratch_child USING btree (parent_id, id) UNIQUE" in _indexes("scratch_child")
    assert "scratch_child USING btree (parent_id) WHERE (id > 1000000) UNIQUE" in _indexes("scratch_child")


def test_run_again_after_being_cut_off_it_finishes(owners: list[int]) -> None:
    # A concurrent build that failed half way leaves an invalid index under the name the swap builds.
    with pytest.raises(DatabaseError, match="division by zero"):
        _sql("CREATE UNIQUE INDEX CONCURRENTLY scratch_child_once_next ON scratch_child ((1 / (id - 5)))")
    # And a partial index dropped before the new one got its name.
    _sql(
        "CREATE UNIQUE INDEX scratch_child_one_big_next ON scratch_child (parent_id, organization_id) "
        "WHERE id > 1000000"
    )
    _sql("DROP INDEX scratch_child_one_big")

    with _editor() as editor:
        swap_unique(editor, "scratch_child", "scratch_child_once", with_organization=True)
        swap_unique(editor, "scratch_child", "scratch_child_one_big", with_organization=True)
        swap_unique(editor, "scratch_child", "scratch_child_one_big", with_organization=True)

    names = {name for (name,) in _sql("SELECT indexname FROM pg_indexes WHERE tablename = 'scratch_child'")}
    assert names == {"scratch_child_pkey", "scratch_child_once", "scratch_child_one_big"}
    assert _sql("SELECT bool_and(indisvalid) FROM pg_index WHERE indrelid = 'scratch_child'::regclass") == [(True,)]


def test_writes_go_on_while_the_keys_are_swapped_and_none_is_lost(owners: list[int]) -> None:
    _sql(
        "INSERT INTO scratch_child (organization_id, parent_id) "
        "SELECT organization_id, parent_id FROM scratch_child, generate_series(1, 50)"
    )

    def insert(n: int) -> int:
        parent = n % 10
        sql = "INSERT INTO scratch_child (organization_id, parent_id) VALUES (%s, %s) RETURNING id"
        return int(_sql(sql, [owners[parent], parent])[0][0])

    def swap() -> None:
        with _editor() as editor:
            primary_key_with_organization(editor, "scratch_parent")
            primary_key_with_organization(editor, "scratch_child")
            swap_unique(editor, "scratch_child", "scratch_child_once", with_organization=True)

    seen = writes_during(swap, insert)

    assert not seen.errors and len(seen.written) >= 20
    assert seen.during, "writes went on while the keys were swapped"
    assert _sql("SELECT count(*) FROM scratch_child WHERE id = ANY(%s)", [seen.written]) == [(len(seen.written),)]
