"""Inserting many rows at once with PostgreSQL's COPY.

``bulk_create`` builds one INSERT with every value bound into its text: for a batch of memories
that is Django compiling ~30 placeholders per row, psycopg quoting each value (a vector alone is
4-8 KB of text) and PostgreSQL parsing the whole statement. COPY streams the rows instead; the
values are still prepared by the model fields, so they are stored exactly as ``save`` would.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from django.db import connection, models


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
    fields = [
        field
        for field in model._meta.concrete_fields
        if not field.generated and not getattr(field, "db_returning", False)
    ]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    sql = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN"
    started = time.monotonic()
    # wrap_database_errors: psycopg's errors become Django's (IntegrityError...), as for any statement.
    with connection.cursor() as cursor, connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        for obj in objects:
            copy.write_row([field.get_db_prep_save(field.pre_save(obj, True), connection) for field in fields])
    for obj in objects:  # saved: a later save() updates them, as after bulk_create
        obj._state.adding = False
        obj._state.db = connection.alias
    if connection.queries_logged:  # as Django logs its own statements (DEBUG, CaptureQueriesContext)
        connection.queries_log.append(
            {"sql": f"{sql} -- {len(objects)} rows", "time": f"{time.monotonic() - started:.3f}"}
        )
