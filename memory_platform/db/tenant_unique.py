"""Primary and unique keys that name the organization.

Past one database server the platform's path is Citus with the organization as the distribution
column (docs/explanation/performance.md, "Past one database server"), and Citus distributes a table
only when each of its primary and unique keys includes that column: a node can then check a key
against the rows it holds. So every key of a tenant's table (tests/tenancy_sql.py:
``distributed_tables``) names the organization, after the columns it had:

- the primary key ``(id)`` becomes ``(id, organization_id)``. The id stays first, so a lookup by id
  alone (Django's, by ``pk``) reads one entry of the same index. A table other tenant tables refer
  to already has the unique index on ``(id, organization_id)`` that their references name
  (memory_platform.db.tenant_keys); that index becomes the primary key, and the index on ``id``
  alone goes: one index fewer to keep on every write. Another table gets the index built
  concurrently first.
- a unique key ``(a, b)`` (a constraint, or a partial unique index) becomes ``(a, b,
  organization_id)``, under the same name: the same rows are unique, since ``a`` (a memory, a file,
  a run) already belongs to one organization, and the queries that read it by ``a`` still can.

Django is not told of the primary key: a model's ``pk`` is still its ``id``, which stays unique as
before (a UUID or a sequence's number); the database's key says more. The unique keys are Django's
own ``UniqueConstraint`` with ``organization`` added, so its validation and state agree with the
database. Every step is built so that a large table stays written to: indexes concurrently, then a
swap in a moment's lock (``tenant_keys.under_lock``); a step cut off half way is picked up where it
stopped when run again, and each has its way back. A migration using them is ``atomic = False``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from memory_platform.db.tenant_keys import (
    DROP_LOCK,
    ORGANIZATION,
    build_parent_index,
    index_valid,
    name_of,
    parent_index_name,
    under_lock,
)

logger = logging.getLogger(__name__)


def _rows(schema_editor: BaseDatabaseSchemaEditor, sql: str, params: Sequence[str]) -> list[tuple[Any, ...]]:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return list(cursor.fetchall())


@dataclass(frozen=True)
class _Key:
    name: str  # the constraint's name, or the index's when it is a unique index only
    columns: list[str]
    predicate: str | None  # a partial unique index's WHERE
    constraint: bool  # a constraint (UNIQUE or PRIMARY KEY) rather than an index alone
    deferrable: str  # "" or " DEFERRABLE INITIALLY DEFERRED" / " DEFERRABLE"


_KEY_COLUMNS = """
SELECT i.indexrelid::regclass::text, coalesce(c.conname, i.indexrelid::regclass::text),
       ARRAY(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n)
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n)::text[],
       pg_get_expr(i.indpred, i.indrelid), c.conname IS NOT NULL,
       coalesce(c.condeferrable, false), coalesce(c.condeferred, false), i.indisprimary
FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.contype IN ('p', 'u')
     AND c.conrelid = i.indrelid
WHERE i.indrelid = %s::regclass AND i.indisunique
"""


def _keys(schema_editor: BaseDatabaseSchemaEditor, table: str) -> dict[str, tuple[_Key, bool]]:
    """The table's primary and unique keys by name, each with whether it is the primary key."""
    found = {}
    for _index, name, columns, predicate, constraint, deferrable, deferred, primary in _rows(
        schema_editor, _KEY_COLUMNS, [table]
    ):
        said = (" DEFERRABLE INITIALLY DEFERRED" if deferred else " DEFERRABLE") if deferrable else ""
        key = _Key(str(name), list(columns), predicate, bool(constraint), said)
        found[str(name)] = (key, bool(primary))
    return found


def primary_key(schema_editor: BaseDatabaseSchemaEditor, table: str) -> _Key:
    for key, primary in _keys(schema_editor, table).values():
        if primary:
            return key
    raise LookupError(f"{table} has no primary key")


def _references_to(schema_editor: BaseDatabaseSchemaEditor, table: str, key: _Key) -> list[tuple[str, str, str]]:
    """(table, name, definition) of the foreign keys that name ``key``'s index."""
    rows = _rows(
        schema_editor,
        "SELECT f.conrelid::regclass::text, f.conname, pg_get_constraintdef(f.oid) FROM pg_constraint f "
        "JOIN pg_constraint k ON k.conindid = f.conindid AND k.conrelid = f.confrelid "
        "WHERE f.contype = 'f' AND f.confrelid = %s::regclass AND k.conname = %s ORDER BY 1, 2",
        [table, key.name],
    )
    return [(str(child), str(name), str(definition)) for child, name, definition in rows]


def _build_unique(
    schema_editor: BaseDatabaseSchemaEditor, table: str, name: str, columns: Sequence[str], predicate: str | None
) -> None:
    """A unique index ``name`` built concurrently; one a cut-off build left invalid is built again."""
    if index_valid(schema_editor, name) is False:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    where = f" WHERE {predicate}" if predicate else ""
    schema_editor.execute(
        f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} ({', '.join(columns)}){where}"
    )


def primary_key_with_organization(schema_editor: BaseDatabaseSchemaEditor, table: str) -> None:
    """``table``'s primary key ``(id)`` becomes ``(id, organization_id)`` (see the module's docstring)."""
    key = primary_key(schema_editor, table)
    if ORGANIZATION in key.columns:
        return
    if len(key.columns) != 1:
        raise ValueError(f"{table}: a primary key of one column was expected, not {key.columns}")
    held = _references_to(schema_editor, table, key)
    if held:  # references by id alone that tenant_keys kept beside rows of another organization
        logger.warning("%s: %s still name its primary key alone; it is left as it is", table, [n for _, n, _ in held])
        return
    index = parent_index_name(table)
    build_parent_index(schema_editor, table, key.columns[0])
    under_lock(schema_editor, DROP_LOCK, [table], [
        f"ALTER TABLE {table} DROP CONSTRAINT {key.name}",
        f"ALTER TABLE {table} ADD CONSTRAINT {key.name} PRIMARY KEY USING INDEX {index}",
    ])  # fmt: skip


def primary_key_without_organization(schema_editor: BaseDatabaseSchemaEditor, table: str) -> None:
    """The way back: the primary key on the id alone again. The references naming the primary key
    (only tenant tables' references within the organization can) are made again on a unique index of
    ``(id, organization_id)`` of its own, as they were before: dropped and added in the swap's lock,
    then validated while the tables are written to."""
    key = primary_key(schema_editor, table)
    if ORGANIZATION not in key.columns:
        return
    alone = [column for column in key.columns if column != ORGANIZATION]
    references = _references_to(schema_editor, table, key)
    if references:
        build_parent_index(schema_editor, table, alone[0])
    index = name_of(table, *alone, suffix="alone")
    _build_unique(schema_editor, table, index, alone, None)
    children = [child for child, _, _ in references]
    drops = [f"ALTER TABLE {child} DROP CONSTRAINT {name}" for child, name, _ in references]
    adds = [f"ALTER TABLE {child} ADD CONSTRAINT {name} {said} NOT VALID" for child, name, said in references]
    under_lock(schema_editor, DROP_LOCK, [table, *children], [
        *drops,
        f"ALTER TABLE {table} DROP CONSTRAINT {key.name}",
        f"ALTER TABLE {table} ADD CONSTRAINT {key.name} PRIMARY KEY USING INDEX {index}",
        *adds,
    ])  # fmt: skip
    for child, name, _ in references:
        schema_editor.execute(f"ALTER TABLE {child} VALIDATE CONSTRAINT {name}")


def swap_unique(
    schema_editor: BaseDatabaseSchemaEditor, table: str, name: str, *, with_organization: bool, new_name: str = ""
) -> None:
    """The unique key ``name`` of ``table`` with ``organization_id`` last (or, ``with_organization``
    false, without it), under ``new_name`` when given: a new index built concurrently, then swapped
    in (a constraint in a moment's lock; a partial unique index dropped concurrently and the new
    one renamed). Run again after a cut, it finishes."""
    final = new_name or name
    following = name_of(final, suffix="next")
    keys = _keys(schema_editor, table)
    if name not in keys:
        if final in keys and following not in keys:
            return  # done already
        if following in keys and index_valid(schema_editor, following):  # cut between the drop and the rename
            schema_editor.execute(f"ALTER INDEX {following} RENAME TO {final}")
            return
        raise LookupError(f"{table} has no unique key {name}")
    key, _primary = keys[name]
    if (ORGANIZATION in key.columns) == with_organization and final == name:
        return
    columns = [column for column in key.columns if column != ORGANIZATION]
    if with_organization:
        columns.append(ORGANIZATION)
    _build_unique(schema_editor, table, following, columns, key.predicate)
    if key.constraint:
        under_lock(schema_editor, DROP_LOCK, [table], [
            f"ALTER TABLE {table} DROP CONSTRAINT {name}",
            f"ALTER TABLE {table} ADD CONSTRAINT {final} UNIQUE USING INDEX {following}{key.deferrable}",
        ])  # fmt: skip
    else:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        schema_editor.execute(f"ALTER INDEX {following} RENAME TO {final}")


def unique_name_on(schema_editor: BaseDatabaseSchemaEditor, table: str, columns: Sequence[str]) -> str:
    """The name of ``table``'s unique key on exactly ``columns`` (Django names ``unique_together`` by a digest)."""
    found = [name for name, (key, primary) in _keys(schema_editor, table).items() if key.columns == list(columns)]
    if len(found) != 1:
        raise LookupError(f"{table}: {len(found)} unique keys on {list(columns)}: {found}")
    return found[0]


@dataclass(frozen=True)
class UniqueChange:
    """One unique key of ``model`` gaining the organization: found by ``name`` (or, for one Django
    named itself, by ``columns``), kept as ``new_name`` (default: its name)."""

    model: str
    name: str = ""
    columns: tuple[str, ...] = ()
    new_name: str = ""


def keys_with_organization(
    app_label: str,
    *,
    primary_keys: Sequence[str] = (),
    unique: Sequence[UniqueChange] = (),
    state_operations: Sequence[migrations.operations.base.Operation] = (),
) -> migrations.SeparateDatabaseAndState:
    """The migration step: the primary keys of ``primary_keys`` (model names of ``app_label``) and the
    ``unique`` keys name the organization; ``state_operations`` tell Django of the unique keys'
    new fields (the primary keys it is not told of)."""

    def tables(apps: StateApps) -> list[str]:
        return [apps.get_model(app_label, name)._meta.db_table for name in primary_keys]

    def changes(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor, forwards: bool) -> list[tuple[str, str, str]]:
        """(table, the key's name now, its name after) for each unique change, in this direction."""
        found = []
        for change in unique:
            table = apps.get_model(app_label, change.model)._meta.db_table
            columns = list(change.columns)
            if forwards:
                now = change.name or unique_name_on(schema_editor, table, columns)
                found.append((table, now, change.new_name or now))
            else:
                now = change.new_name or change.name or unique_name_on(schema_editor, table, [*columns, ORGANIZATION])
                # The name Django gives a unique_together of these columns, as it was.
                django = change.name or str(schema_editor._create_index_name(table, columns, suffix="_uniq"))  # type: ignore[attr-defined]
                found.append((table, now, django))
        return found

    def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for table in tables(apps):
            primary_key_with_organization(schema_editor, table)
        for table, name, new_name in changes(apps, schema_editor, forwards=True):
            swap_unique(schema_editor, table, name, with_organization=True, new_name=new_name)

    def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for table, name, old_name in changes(apps, schema_editor, forwards=False):
            swap_unique(schema_editor, table, name, with_organization=False, new_name=old_name)
        for table in tables(apps):
            primary_key_without_organization(schema_editor, table)

    return migrations.SeparateDatabaseAndState(
        state_operations=list(state_operations),
        database_operations=[migrations.RunPython(forwards, backwards, elidable=False)],
    )
