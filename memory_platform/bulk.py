"""Inserting many rows at once with PostgreSQL's COPY.

``bulk_create`` builds one INSERT with every value bound into its text: for a batch of memories
that is Django compiling ~30 placeholders per row, psycopg quoting each value (a vector alone is
4-8 KB of text) and PostgreSQL parsing the whole statement. COPY streams the rows instead; the
values are still prepared by the model fields, so they are stored exactly as ``save`` would.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper


def copy_insert(objects: Sequence[models.Model]) -> None:
    """Insert these unsaved instances of one model with one COPY.

    Like ``bulk_create`` without signals or conflict handling. Primary keys the database assigns
    (auto fields) are not read back: the instances keep ``pk = None``, so use this only for rows
    that are not referred to afterwards, or whose keys are set beforehand (UUIDs).
    """
    if not objects:
        return
    model = type(objects[0])
    if any(type(obj) is not model for obj in objects):
        raise TypeError("copy_insert takes instances of one model")
    connection = connections[DEFAULT_DB_ALIAS]  # once: each use of django.db.connection looks it up
    fields = _inserted_fields(model)
    prepare = [_preparer(field, connection) for field in fields]
    _copy(connection, model, fields, ([value(obj) for value in prepare] for obj in objects), len(objects))
    for obj in objects:  # saved: a later save() updates them, as after bulk_create
        obj._state.adding = False
        obj._state.db = connection.alias


def copy_rows(model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Insert rows of ``model`` given as values of these fields (by attribute name: ``memory_id``)
    with one COPY, where building an instance a row would cost more than the write (a memory's
    mentions). The values are as the database takes them: what the field would prepare is not
    prepared again (plain text, numbers, UUIDs). Fields left out take their database defaults."""
    connection = connections[DEFAULT_DB_ALIAS]
    by_name = {field.attname: field for field in model._meta.concrete_fields}
    rows = list(rows)
    if rows:
        _copy(connection, model, [by_name[name] for name in columns], iter(rows), len(rows))


def _copy(
    connection: BaseDatabaseWrapper,
    model: type[models.Model],
    fields: Sequence[models.Field[Any, Any]],
    rows: Iterable[Sequence[Any]],
    count: int,
) -> None:
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    sql = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN"
    started = time.monotonic()
    # wrap_database_errors: psycopg's errors become Django's (IntegrityError...), as for any statement.
    with connection.cursor() as cursor, connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)
    if connection.queries_logged:  # as Django logs its own statements (DEBUG, CaptureQueriesContext)
        connection.queries_log.append({"sql": f"{sql} -- {count} rows", "time": f"{time.monotonic() - started:.3f}"})


def _inserted_fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return [
        field
        for field in model._meta.concrete_fields
        if not field.generated and not getattr(field, "db_returning", False)
    ]


# Fields whose preparation gives back a value of these exact types unchanged (an enum member, a
# number given as text or a naive time still goes the field's way). Times with a zone: Django only
# hands PostgreSQL's backend the value itself.
_KEPT_AS_IS: dict[type[models.Field[Any, Any]], tuple[type, ...]] = {
    models.CharField: (str,),
    models.TextField: (str,),
    models.SlugField: (str,),
    models.IntegerField: (int,),
    models.BigIntegerField: (int,),
    models.SmallIntegerField: (int,),
    models.PositiveIntegerField: (int,),
    models.PositiveSmallIntegerField: (int,),
    models.BooleanField: (bool,),
    models.UUIDField: (uuid.UUID,),
    models.DateTimeField: (datetime,),
}


def _preparer(field: models.Field[Any, Any], connection: BaseDatabaseWrapper) -> Callable[[models.Model], Any]:
    """How one field's value of an instance is written: as the field prepares it for a save, but
    for values the preparation would give back unchanged, which are read as they are."""

    def prepared(obj: models.Model) -> Any:
        return field.get_db_prep_save(field.pre_save(obj, True), connection)

    kept = _KEPT_AS_IS.get(type(field), ())
    if isinstance(field, models.ForeignKey):  # the key of the row it points to, as that field keeps it
        target = field.target_field
        kept = (uuid.UUID,) if isinstance(target, models.UUIDField) else (int,) * isinstance(target, models.AutoField)
    if not kept or getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return prepared
    attname = field.attname
    zoned = kept == (datetime,)

    def as_is(obj: models.Model) -> Any:
        value = getattr(obj, attname)
        if value is None or (type(value) in kept and not (zoned and value.tzinfo is None)):
            return value
        return prepared(obj)

    return as_is
