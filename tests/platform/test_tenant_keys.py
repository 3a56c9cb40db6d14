"""memory_platform.db.tenant_keys: a reference between two tenant tables becomes one within the
organization, added to tables already holding rows while they are written to, run again safely
after being cut off, and taken back to Django's own key; and the statistics its checks are planned
with are kept current by the bulk writes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from memory_platform.db.tenant_keys import (
    GROWN_ROWS,
    add_tenant_key,
    analyze_if_grown,
    build_parent_index,
    constraint_name,
    drop_parent_index,
    parent_index_name,
    restore_django_key,
)
from tests.conftest import Tenant
from tests.writes_during import writes_during

# Built concurrently, which no transaction may hold: every test commits, and drops its tables after.
pytestmark = pytest.mark.django_db(transaction=True)

KEY = constraint_name("scratch_child", "parent_id")
DJANGO_KEY = "scratch_child_parent_id_fk_scratch_parent_id"
BY_ID_ALONE = "FOREIGN KEY (parent_id) REFERENCES scratch_parent(id) DEFERRABLE INITIALLY DEFERRED"
PARENT_INDEX = parent_index_name("scratch_parent")
Scratch = Callable[[int], list[int]]


def _sql(statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
        return list(cursor.fetchall()) if cursor.description else []


def _make_keys() -> None:
    with connection.schema_editor(atomic=False) as editor:
        build_parent_index(editor, "scratch_parent")
        add_tenant_key(editor, "scratch_child", "parent_id", parent="scratch_parent", key="id")


def _keys() -> dict[str, tuple[str, bool]]:
    rows = _sql(
        "SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint "
        "WHERE conrelid = 'scratch_child'::regclass AND contype = 'f'"
    )
    return {name: (definition, validated) for name, definition, validated in rows}


@pytest.fixture
def scratch(acme: Tenant, globex: Tenant) -> Iterator[Scratch]:
    """Makes a parent table of 10 rows over two organizations and ``children`` rows naming them,
    each in its parent's organization, under Django's kind of key (by id alone); the parents'
    organizations, by id. Drops both tables after the test."""
    owners = [(acme if n % 2 else globex).organization.pk for n in range(10)]

    def make(children: int) -> list[int]:
        # Autovacuum left out: its ANALYZE would change what the statistics test reads.
        _sql(
            "CREATE TABLE scratch_parent (id bigint PRIMARY KEY, organization_id bigint NOT NULL) "
            "WITH (autovacuum_enabled = off)"
        )
        _sql(
            "CREATE TABLE scratch_child (id bigserial PRIMARY KEY, organization_id bigint NOT NULL, "
            "parent_id bigint NOT NULL CONSTRAINT scratch_child_parent_id_fk_scratch_parent_id "
            "REFERENCES scratch_parent DEFERRABLE INITIALLY DEFERRED) WITH (autovacuum_enabled = off)"
        )
        _sql("INSERT INTO scratch_parent SELECT n, (%s::bigint[])[n + 1] FROM generate_series(0, 9) n", [owners])
        _sql(
            "INSERT INTO scratch_child (organization_id, parent_id) "
            "SELECT (%s::bigint[])[n %% 10 + 1], n %% 10 FROM generate_series(0, %s - 1) n",
            [owners, children],
        )
        return owners

    yield make
    _sql("DROP TABLE IF EXISTS scratch_child, scratch_parent")


def test_the_key_names_the_organization_and_refuses_a_row_of_another(scratch: Scratch) -> None:
    owners = scratch(25)

    _make_keys()

    assert _keys() == {
        KEY: ("FOREIGN KEY (parent_id, organization_id) REFERENCES scratch_parent(id, organization_id) "
              "DEFERRABLE INITIALLY DEFERRED", True)
    }, "validated, and Django's key by id alone is gone"  # fmt: skip
    assert _sql("SELECT count(*) FROM scratch_child")[0][0] == 25
    with pytest.raises(IntegrityError, match=KEY), transaction.atomic():
        _sql("INSERT INTO scratch_child (organization_id, parent_id) VALUES (%s, 2)", [owners[1]])
        _sql("SET CONSTRAINTS ALL IMMEDIATE")


def test_rows_already_naming_another_organization_are_kept_and_said(
    scratch: Scratch, caplog: pytest.LogCaptureFixture
) -> None:
    owners = scratch(10)
    _sql("UPDATE scratch_child SET organization_id = %s WHERE parent_id IN (2, 4)", [owners[1]])  # as legacy rows

    with caplog.at_level(logging.WARNING, logger="memory_platform.db.tenant_keys"):
        _make_keys()

    assert _sql("SELECT count(*) FROM scratch_child")[0][0] == 10, "nothing is deleted to make a key hold"
    assert _keys()[KEY][1] is False, "left unvalidated"
    assert _keys()[DJANGO_KEY] == (BY_ID_ALONE, True), "the rows there keep the key by id alone"
    assert "scratch_child: 2 rows name a row of another organization" in caplog.text
    with pytest.raises(IntegrityError, match=KEY), transaction.atomic():
        _sql("INSERT INTO scratch_child (organization_id, parent_id) VALUES (%s, 2)", [owners[1]])
        _sql("SET CONSTRAINTS ALL IMMEDIATE")


def test_run_again_after_being_cut_off_it_finishes(scratch: Scratch) -> None:
    scratch(10)
    # A concurrent build that failed half way leaves an invalid index behind under the name.
    with pytest.raises(DatabaseError, match="division by zero"):
        _sql(f"CREATE UNIQUE INDEX CONCURRENTLY {PARENT_INDEX} ON scratch_parent ((1 / (id - 5)), organization_id)")
    assert _sql("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [PARENT_INDEX]) == [(False,)]

    _make_keys()
    _make_keys()  # and once more, all of it done already

    assert list(_keys()) == [KEY] and _keys()[KEY][1]
    assert _sql("SELECT indisvalid FROM pg_index WHERE indexrelid = %s::regclass", [PARENT_INDEX]) == [(True,)]


def test_taken_back_it_is_djangos_key_again(scratch: Scratch) -> None:
    scratch(10)
    _make_keys()

    with connection.schema_editor(atomic=False) as editor:
        restore_django_key(
            editor, "scratch_child", "parent_id", parent="scratch_parent", key="id", django_name=DJANGO_KEY
        )
        drop_parent_index(editor, "scratch_parent")

    assert _keys() == {DJANGO_KEY: (BY_ID_ALONE, True)}
    assert _sql("SELECT to_regclass(%s)", [PARENT_INDEX]) == [(None,)]


def test_writes_go_on_while_the_key_is_added_and_none_is_lost(scratch: Scratch) -> None:
    owners = scratch(50_000)

    def insert(n: int) -> int:
        parent = n % 10
        sql = "INSERT INTO scratch_child (organization_id, parent_id) VALUES (%s, %s) RETURNING id"
        return int(_sql(sql, [owners[parent], parent])[0][0])

    seen = writes_during(_make_keys, insert)
    kept = _sql("SELECT count(*) FROM scratch_child WHERE id = ANY(%s)", [seen.written])[0][0]

    assert not seen.errors and len(seen.written) >= 20
    assert seen.during, "writes went on while the keys were made"
    assert kept == len(seen.written), "every acknowledged write is there"


def _changed_since_analyze(table: str, at_least: int) -> int:
    """The table's rows changed since its statistics, once the counters show ``at_least`` (a
    backend reports them a moment after it commits)."""
    deadline = time.monotonic() + 10
    while True:
        (changed,) = _sql("SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = %s", [table])[0]
        if changed >= at_least or time.monotonic() > deadline:
            return int(changed)
        _sql("SELECT pg_stat_force_next_flush()")
        time.sleep(0.05)


def test_a_table_grown_past_its_statistics_is_analyzed_and_one_that_did_not_is_left(scratch: Scratch) -> None:
    scratch(GROWN_ROWS // 2)
    _sql("ANALYZE scratch_child")
    assert analyze_if_grown("scratch_child") == [], "half as many rows changed as it holds"

    _sql("INSERT INTO scratch_child (organization_id, parent_id) SELECT organization_id, parent_id FROM scratch_child")
    _sql("INSERT INTO scratch_child (organization_id, parent_id) SELECT organization_id, parent_id FROM scratch_child")
    assert _changed_since_analyze("scratch_child", at_least=GROWN_ROWS + GROWN_ROWS // 2) >= GROWN_ROWS

    assert analyze_if_grown("scratch_child", "scratch_parent") == ["scratch_child"]
    assert _sql("SELECT reltuples FROM pg_class WHERE relname = 'scratch_child'") == [(2 * GROWN_ROWS,)]
    assert analyze_if_grown("scratch_child") == []
