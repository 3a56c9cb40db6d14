"""Migration operations that keep a populated database writable while they run.

``without_field_index``: a foreign key's own index, dropped when a composite index already leads
with its column (every lookup and cascade on the key uses that one), so each insert maintains one
index fewer. Django's AlterField(db_index=False) would drop the foreign-key constraint and add it
again, which checks every row under a lock that holds up writes; this drops only the index, with
DROP INDEX CONCURRENTLY (the migration must be ``atomic = False``).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def without_field_index(alter: migrations.AlterField, app_label: str) -> migrations.SeparateDatabaseAndState:
    """``alter`` (a foreign key's AlterField to ``db_index=False``) done on the database as a
    concurrent drop of the key's single-column index; undone by building it again concurrently."""

    def target(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> tuple[Any, str]:
        model = apps.get_model(app_label, alter.model_name)
        return model, model._meta.get_field(alter.name).column

    def drop(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        model, column = target(apps, schema_editor)
        with schema_editor.connection.cursor() as cursor:
            constraints = schema_editor.connection.introspection.get_constraints(cursor, model._meta.db_table)
        for name, info in constraints.items():
            if info["index"] and not info["unique"] and not info["primary_key"] and info["columns"] == [column]:
                schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {schema_editor.quote_name(name)}")

    def build(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        model, column = target(apps, schema_editor)
        table = model._meta.db_table
        name = schema_editor._create_index_name(table, [column])  # type: ignore[attr-defined]  # Django's own name
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {schema_editor.quote_name(name)}"
            f" ON {schema_editor.quote_name(table)} ({schema_editor.quote_name(column)})"
        )

    return migrations.SeparateDatabaseAndState(
        state_operations=[alter], database_operations=[migrations.RunPython(drop, build, elidable=False)]
    )
