"""Inserting many rows at once with PostgreSQL's COPY.

``bulk_create`` builds one INSERT with every value bound into its text: for a batch of memories
that is Django compiling ~30 placeholders per row, psycopg quoting each value (a vector alone is
4-8 KB of text) and PostgreSQL parsing the whole statement. COPY streams the rows instead; the
values are still prepared by the model fields, so they are stored exactly as ``save`` would.

A table whose columns are all of the common types (text, numbers, UUIDs, times, JSON, arrays of
those, pgvector's vectors) is copied in PostgreSQL's binary form: a vector is then its 384 floats
as they are, where its text (memories.fields.vector_text) cost a batch write more than any other
value, and PostgreSQL does not parse them back either.
"""

from __future__ import annotations

import functools
import operator
import re
import struct
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from django.db import DEFAULT_DB_ALIAS, DataError, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone
from pgvector import Vector
from pgvector.django import VectorField
from psycopg.adapt import Dumper
from psycopg.pq import Format


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
    binary = _binary_types(tuple(fields)) is not None
    steps = [(_preparer(field, connection, binary=binary), _reader(field)) for field in fields]
    _copy(connection, model, fields, ([prepare(read(obj)) for prepare, read in steps] for obj in objects), len(objects))
    for obj in objects:  # saved: a later save() updates them, as after bulk_create
        obj._state.adding = False
        obj._state.db = connection.alias


def copy_values(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> None:
    """copy_insert for rows given as values by attribute name (``memory_id``), where building an
    instance a row would cost more than the write (a batch's versions and audit events): each value
    is prepared by its field as an instance's would be, and a field left out takes its default, as
    a new instance's does."""
    if not rows:
        return
    connection = connections[DEFAULT_DB_ALIAS]
    fields = _inserted_fields(model)
    binary = _binary_types(tuple(fields)) is not None
    steps = [(field.attname, _preparer(field, connection, binary=binary), field) for field in fields]

    def values(row: Mapping[str, Any]) -> list[Any]:
        return [
            prepare(timezone.now() if _stamped(field) else row[name] if name in row else field.get_default())
            for name, prepare, field in steps
        ]

    _copy(connection, model, fields, (values(row) for row in rows), len(rows))


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
    names = _binary_types(tuple(fields))
    binary = " (FORMAT BINARY)" if names is not None else ""
    sql = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN{binary}"
    started = time.monotonic()
    # wrap_database_errors: psycopg's errors become Django's (IntegrityError...), as for any statement.
    with connection.cursor() as cursor, connection.wrap_database_errors:
        types: list[str | int] | None = list(names) if names is not None else None
        if types is not None and _VECTOR in types:
            vector = _vector_oid(cursor.cursor)
            cursor.cursor.adapters.register_dumper(_Vector, _vector_dumper(vector))
            types = [vector if name == _VECTOR else name for name in types]
        with cursor.cursor.copy(sql) as copy:
            if types is not None:
                copy.set_types(types)
            for row in rows:
                try:
                    copy.write_row(row)
                except (OverflowError, TypeError, ValueError, IndexError, struct.error) as error:
                    # A value its column's binary form cannot hold (a number past bigint's range, a ragged array):
                    # refused as PostgreSQL refuses it in text, the COPY abandoned.
                    raise DataError(f"a value {model._meta.db_table} cannot hold: {error}") from error
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


def _preparer(
    field: models.Field[Any, Any], connection: BaseDatabaseWrapper, *, binary: bool = False
) -> Callable[[Any], Any]:
    """How one field's value is written: as the field prepares it for a save, but for values the
    preparation would give back unchanged, which are written as they are, and for a vector copied
    in binary, which is given as its floats."""

    def prepared(value: Any) -> Any:
        return field.get_db_prep_save(value, connection)

    if binary and isinstance(field, VectorField):
        return lambda value: None if value is None else _Vector(value)
    kept = _KEPT_AS_IS.get(type(field), ())
    if isinstance(field, models.ForeignKey):  # the key of the row it points to, as that field keeps it
        target = field.target_field
        kept = (uuid.UUID,) if isinstance(target, models.UUIDField) else (int,) * isinstance(target, models.AutoField)
    if not kept:
        return prepared
    zoned = kept == (datetime,)

    def as_is(value: Any) -> Any:
        if value is None or (type(value) in kept and not (zoned and value.tzinfo is None)):
            return value
        return prepared(value)

    return as_is


def _stamped(field: models.Field[Any, Any]) -> bool:
    """Whether a save sets the field's value itself (``auto_now``, ``auto_now_add``)."""
    return bool(getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))


def _reader(field: models.Field[Any, Any]) -> Callable[[models.Model], Any]:
    """The value of an instance's field that an insert writes."""
    if _stamped(field) or type(field).pre_save is not models.Field.pre_save:
        return lambda obj: field.pre_save(obj, True)
    return operator.attrgetter(field.attname)


# --- the binary form ------------------------------------------------------------------------------

_VECTOR = "vector"
# Django's name of a column's type (its modifiers, such as a length, left out) -> psycopg's.
_BINARY: dict[str, str] = {
    "uuid": "uuid",
    "bigint": "int8",
    "integer": "int4",
    "smallint": "int2",
    "varchar": "varchar",
    "text": "text",
    "jsonb": "jsonb",
    "timestamp with time zone": "timestamptz",
    "date": "date",
    "boolean": "bool",
    "double precision": "float8",
    "varchar[]": "varchar[]",
    "text[]": "text[]",
    "integer[]": "int4[]",
    "bigint[]": "int8[]",
    "vector": _VECTOR,
}
_MODIFIERS = re.compile(r"\(\d+(?:,\s*\d+)?\)")


@functools.lru_cache(maxsize=256)  # asked at each COPY of a table: worked out once a process
def _binary_types(fields: tuple[models.Field[Any, Any], ...]) -> list[str] | None:
    """psycopg's names of the columns' types, when it writes every one of them in binary."""
    connection = connections[DEFAULT_DB_ALIAS]  # the types' names depend on the database's kind only
    names = [_BINARY.get(_MODIFIERS.sub("", field.db_type(connection) or "")) for field in fields]
    return None if None in names else names  # type: ignore[return-value]


class _Vector:
    """A vector's floats, for the binary dumper (any form pgvector takes: a list, an array, its text)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _VectorDumper(Dumper):
    """pgvector's binary form: the dimensions and an unused word (16 bits each), then big-endian
    float4s; the vector column's oid is set per database (_vector_oid)."""

    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        value = obj.value if isinstance(obj, _Vector) else obj  # copy_rows gives the value itself
        if isinstance(value, str):
            value = Vector.from_text(value).to_numpy()
        elif isinstance(value, Vector):
            value = value.to_numpy()
        floats = np.asarray(value, dtype=">f4")
        if floats.ndim != 1:
            raise ValueError("a vector is one list of numbers")
        return struct.pack(">HH", len(floats), 0) + floats.tobytes()


@functools.cache
def _vector_dumper(oid: int) -> type[Dumper]:
    """The dumper for pgvector's type as this database numbers it."""
    return type("VectorDumper", (_VectorDumper,), {"oid": oid})


_vector_oids: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def _vector_oid(cursor: Any) -> int:
    """The oid of pgvector's type in the cursor's database, asked once per connection."""
    oid = _vector_oids.get(cursor.connection)
    if oid is None:
        cursor.execute("SELECT 'vector'::regtype::oid")
        oid = _vector_oids[cursor.connection] = cursor.fetchone()[0]
    return oid
