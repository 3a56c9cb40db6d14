"""Foreign keys that keep a tenant's rows in their organization.

A reference from one tenant table to another names the organization on both sides::

    FOREIGN KEY (memory_id, organization_id) REFERENCES memories_memory (id, organization_id)

so PostgreSQL itself refuses a row that names a row of another organization (a version of another
organization's memory, a chunk of another's file), which only the code promised before. It is also
the form Citus needs to keep the reference on one node when every tenant table is distributed by
its organization (docs/explanation/performance.md, "Past one database server").

Django knows no reference to two columns: the model's ForeignKey says ``db_constraint=False`` (Django
neither creates nor drops a constraint for it) and the constraint is added here, in a migration,
with ``tenant_foreign_keys``: the referenced table gets a unique index on ``(id, organization_id)``
built concurrently; each reference is added ``NOT VALID`` (a moment's lock) and then validated
while the tables are written to; the single-column constraint Django made is dropped. The
migration must be ``atomic = False``; every step may run again after a run cut off half way.
tests/platform/test_tenant_tables.py checks that every reference between two tenant tables is one.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, OperationalError, connection, migrations, transaction
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from psycopg import errors

logger = logging.getLogger(__name__)

ORGANIZATION = "organization_id"
MAX_NAME = 63  # PostgreSQL's identifier length
# Adding a key locks both tables against writes for a moment, dropping one against reads too: a lock
# not had within LOCK_TIMEOUT is let go (and asked for again a little later) rather than hold up
# every query queued behind the migration.
LOCK_TIMEOUT = "200ms"
LOCK_ATTEMPTS = 50
ADD_LOCK = "SHARE ROW EXCLUSIVE"  # what ALTER TABLE ... ADD FOREIGN KEY takes on both tables
DROP_LOCK = "ACCESS EXCLUSIVE"  # what ALTER TABLE ... DROP CONSTRAINT takes


def name_of(*parts: str, suffix: str) -> str:
    name = "_".join((*parts, suffix))
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:8]
    return f"{name[: MAX_NAME - len(suffix) - 10]}_{digest}_{suffix}"


def parent_index_name(table: str) -> str:
    return name_of(table, suffix="in_organization")


def constraint_name(table: str, column: str) -> str:
    return name_of(table, column, suffix="same_org")


def _constraints(schema_editor: BaseDatabaseSchemaEditor, table: str) -> dict[str, dict[str, Any]]:
    with schema_editor.connection.cursor() as cursor:
        found: dict[str, dict[str, Any]] = schema_editor.connection.introspection.get_constraints(cursor, table)
    return found


def _keys_by_id_alone(schema_editor: BaseDatabaseSchemaEditor, table: str, column: str) -> list[str]:
    """The names of ``table``'s foreign keys on ``column`` alone (Django's kind)."""
    return [
        name
        for name, info in _constraints(schema_editor, table).items()
        if info["foreign_key"] and info["columns"] == [column]
    ]


def index_valid(schema_editor: BaseDatabaseSchemaEditor, name: str) -> bool | None:
    """Whether the index is usable (None: there is none; False: a concurrent build cut off half way)."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", [name])
        row = cursor.fetchone()
    return None if row is None else bool(row[0])


def build_parent_index(schema_editor: BaseDatabaseSchemaEditor, table: str, key: str = "id") -> None:
    name = parent_index_name(table)
    if index_valid(schema_editor, name) is False:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    schema_editor.execute(f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} ({key}, {ORGANIZATION})")


def drop_parent_index(schema_editor: BaseDatabaseSchemaEditor, table: str) -> None:
    schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {parent_index_name(table)}")


def _validate(schema_editor: BaseDatabaseSchemaEditor, table: str, name: str, misplaced: str) -> bool:
    """Validate ``name`` while ``table`` is written to; whether it holds. Rows already there that
    break it are kept (nothing is deleted to make a key hold) and said; the key holds for every row
    written after, and the caller keeps Django's key for the rows there."""
    try:
        schema_editor.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {name}")
    except IntegrityError:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(misplaced)
            (count,) = cursor.fetchone() or (0,)
        message = (
            f"{table}: {count} rows name a row of another organization; {name} holds for every row "
            f"written from now on and is left unvalidated, beside the key by id alone (find them with: {misplaced})"
        )
        logger.warning(message)  # on migrate's standard error, as every log line of the platform
        return False
    return True


def _existing(schema_editor: BaseDatabaseSchemaEditor, table: str, name: str) -> bool | None:
    """Whether ``table`` has constraint ``name`` validated (None: it has none)."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT convalidated FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s", [table, name]
        )
        row = cursor.fetchone()
    return None if row is None else bool(row[0])


def under_lock(
    schema_editor: BaseDatabaseSchemaEditor, mode: str, tables: Sequence[str], statements: Sequence[str]
) -> None:
    """Run ``statements`` (which need ``mode`` on ``tables``, for a moment and with no scan) in one
    short transaction that takes the locks first, in the order given: a parent's before its
    children's, as writes take them (a memory, then its version), so the statements never ask for
    more than they hold. A lock not had within LOCK_TIMEOUT is let go and asked for again a little later."""
    for attempt in range(1, LOCK_ATTEMPTS + 1):
        try:
            with transaction.atomic(using=schema_editor.connection.alias):
                schema_editor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
                schema_editor.execute(f"LOCK TABLE {', '.join(dict.fromkeys(tables))} IN {mode} MODE")
                for statement in statements:
                    schema_editor.execute(statement)
            return
        except OperationalError as error:
            waited = isinstance(error.__cause__, errors.LockNotAvailable | errors.DeadlockDetected)
            if not waited or attempt == LOCK_ATTEMPTS:
                raise
            logger.info("%s: others held the lock; trying again (%d)", tables[-1], attempt)
            time.sleep(random.uniform(0.05, 0.25) * min(attempt, 8))  # noqa: S311 - jitter, not a secret


def add_tenant_key(schema_editor: BaseDatabaseSchemaEditor, table: str, column: str, *, parent: str, key: str) -> None:
    """``table.column`` (naming ``parent.key``) becomes a reference within the organization. Run
    again, it picks up where it stopped: a key already there is validated, not made again."""
    name = constraint_name(table, column)
    validated = _existing(schema_editor, table, name)
    if validated is None:
        under_lock(schema_editor, ADD_LOCK, [parent, table], [
            f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({column}, {ORGANIZATION}) "
            f"REFERENCES {parent} ({key}, {ORGANIZATION}) DEFERRABLE INITIALLY DEFERRED NOT VALID",
        ])  # fmt: skip
    misplaced = (
        f"SELECT count(*) FROM {table} t JOIN {parent} p ON p.{key} = t.{column} "  # noqa: S608
        f"WHERE p.{ORGANIZATION} <> t.{ORGANIZATION}"
    )
    holds = validated or _validate(schema_editor, table, name, misplaced)
    # Django's key goes only once the new one holds for every row (else it keeps the rows there).
    if holds and (old := _keys_by_id_alone(schema_editor, table, column)):
        drops = [f"ALTER TABLE {table} DROP CONSTRAINT {schema_editor.quote_name(django)}" for django in old]
        under_lock(schema_editor, DROP_LOCK, [parent, table], drops)


def restore_django_key(
    schema_editor: BaseDatabaseSchemaEditor, table: str, column: str, *, parent: str, key: str, django_name: str
) -> None:
    """Undo add_tenant_key: Django's single-column constraint again, validated while written to."""
    if not _keys_by_id_alone(schema_editor, table, column):
        under_lock(schema_editor, ADD_LOCK, [parent, table], [
            f"ALTER TABLE {table} ADD CONSTRAINT {django_name} FOREIGN KEY ({column}) "
            f"REFERENCES {parent} ({key}) DEFERRABLE INITIALLY DEFERRED NOT VALID",
        ])  # fmt: skip
        schema_editor.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {django_name}")
    name = constraint_name(table, column)
    if _existing(schema_editor, table, name) is not None:
        under_lock(schema_editor, DROP_LOCK, [parent, table], [f"ALTER TABLE {table} DROP CONSTRAINT {name}"])


def tenant_foreign_keys(
    app_label: str, *alters: migrations.AlterField, parents: Sequence[str] = ()
) -> migrations.SeparateDatabaseAndState:
    """The migration step: ``parents`` (model names of ``app_label``) get their unique index on
    ``(id, organization_id)``; each of ``alters`` (an AlterField to ``db_constraint=False``) becomes
    a reference within the organization, as described above."""

    def references(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> list[tuple[str, str, str, str, str]]:
        found = []
        for alter in alters:
            model = apps.get_model(app_label, alter.model_name)
            field = model._meta.get_field(alter.name)
            target = field.target_field
            suffix = "_fk_%(to_table)s_%(to_column)s"
            django_name = str(schema_editor._fk_constraint_name(model, field, suffix))  # type: ignore[attr-defined]
            found.append((model._meta.db_table, field.column, target.model._meta.db_table, target.column, django_name))
        return found

    def parent_tables(apps: StateApps) -> list[str]:
        return [apps.get_model(app_label, name)._meta.db_table for name in parents]

    def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for table in parent_tables(apps):
            build_parent_index(schema_editor, table)
        for table, column, parent, key, _ in references(apps, schema_editor):
            add_tenant_key(schema_editor, table, column, parent=parent, key=key)

    def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for table, column, parent, key, django_name in references(apps, schema_editor):
            restore_django_key(schema_editor, table, column, parent=parent, key=key, django_name=django_name)
        for table in parent_tables(apps):
            drop_parent_index(schema_editor, table)

    return migrations.SeparateDatabaseAndState(
        state_operations=list(alters), database_operations=[migrations.RunPython(forwards, backwards, elidable=False)]
    )


# A table whose rows grew past this many since its statistics, and past what it held then, is analyzed.
GROWN_ROWS = 1000


def analyze_if_grown(*tables: str) -> list[str]:
    """ANALYZE each of ``tables`` holding more rows changed since its statistics were taken than it
    held then (and at least GROWN_ROWS): the ones analyzed.

    PostgreSQL checks a reference by a plan it makes once per connection and keeps until the
    table's statistics change. Made while the table was nearly empty, that plan may look the row up
    by an index on the organization alone (every index is as cheap on a few rows) and then read
    every row of the organization for each reference checked: a bulk load into a new database
    slowed down as it went (bench/ingest_hints.py: 1,420 memories/s fell to 700). Autovacuum's
    ANALYZE ends it within a minute or so; the batch write service asks for it before it writes
    instead, which costs a few ANALYZEs of a table that doubles at a time. Not inside a caller's
    transaction (which would hold the ANALYZE's lock until it commits), only tables this role may
    analyze, and a table another session is analyzing is skipped, not waited for."""
    if connection.in_atomic_block:
        return []
    analyzed = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.oid::regclass::text, s.n_mod_since_analyze, c.reltuples FROM pg_class c "
            "JOIN pg_stat_user_tables s ON s.relid = c.oid "
            "WHERE c.oid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest(%s::text[]) t)) "
            "AND pg_has_role(c.relowner, 'MEMBER')",
            [list(tables)],
        )
        for table, changed, held in cursor.fetchall():
            if changed >= max(GROWN_ROWS, held):
                cursor.execute(f"ANALYZE (SKIP_LOCKED) {table}")
                analyzed.append(table)
    return analyzed
