"""Migration operations that keep a populated database writable while they run.

``without_field_index``: a foreign key's own index, dropped when a composite index already leads
with its column (every lookup and cascade on the key uses that one), so each insert maintains one
index fewer. Django's AlterField(db_index=False) would drop the foreign-key constraint and add it
again, which checks every row under a lock that holds up writes; this drops only the index, with
DROP INDEX CONCURRENTLY (the migration must be ``atomic = False``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import migrations, models
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


def organization_from_parent(
    model_name: str, *, table: str, key: str, parent: str, parent_table: str, batch: int = 10_000
) -> migrations.SeparateDatabaseAndState:
    """An ``organization`` column on ``table``, whose rows reach their organization through
    ``parent`` (the column ``parent_id`` naming a row of ``parent_table``), added while the table
    is written to.

    The column comes in empty (no rewrite); a trigger gives every row inserted without it its
    parent's organization, so processes still running the previous release go on writing; the rows
    already there are filled ``batch`` at a time in ``key`` order, each batch committed on its own;
    NOT NULL is proved by a check constraint validated without blocking writes, then set without a
    scan. The trigger stays: a row can never be stored in another organization than its parent's.
    The migration must be ``atomic = False``.
    """
    column, parent_column = "organization_id", f"{parent}_id"
    function = trigger = f"{table}_organization"  # a function and a trigger: two namespaces

    def add_column(schema_editor: BaseDatabaseSchemaEditor) -> None:
        run = schema_editor.execute
        run(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} bigint")
        run(
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "  # noqa: S608
            f"IF NEW.{column} IS NULL THEN "
            f"SELECT p.organization_id INTO NEW.{column} FROM {parent_table} p WHERE p.id = NEW.{parent_column}; "
            f"END IF; RETURN NEW; END $$"
        )
        run(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
        run(f"CREATE TRIGGER {trigger} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {function}()")
        with schema_editor.connection.cursor() as cursor:
            last = None
            while True:
                after = "" if last is None else f"WHERE t.{key} > %s"
                cursor.execute(
                    f"WITH chunk AS (SELECT t.{key} FROM {table} t {after} ORDER BY t.{key} LIMIT {batch}), "  # noqa: S608
                    f"filled AS (UPDATE {table} t SET {column} = p.organization_id FROM chunk, {parent_table} p "
                    f"WHERE t.{key} = chunk.{key} AND p.id = t.{parent_column} AND t.{column} IS NULL) "
                    f"SELECT {key} FROM chunk ORDER BY {key} DESC LIMIT 1",
                    [] if last is None else [last],
                )
                row = cursor.fetchone()
                if row is None:
                    break
                last = row[0]
        # Each step may be run again: a migration cut off half way is run again from the start.
        run(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_organization_given")
        run(f"ALTER TABLE {table} ADD CONSTRAINT {table}_organization_given CHECK ({column} IS NOT NULL) NOT VALID")
        run(f"ALTER TABLE {table} VALIDATE CONSTRAINT {table}_organization_given")
        run(f"ALTER TABLE {table} ALTER COLUMN {column} SET NOT NULL")  # proved by the check: no scan
        run(f"ALTER TABLE {table} DROP CONSTRAINT {table}_organization_given")
        run(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_{column}_fk")
        run(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_{column}_fk FOREIGN KEY ({column}) "
            f"REFERENCES organizations_organization (id) DEFERRABLE INITIALLY DEFERRED NOT VALID"
        )
        run(f"ALTER TABLE {table} VALIDATE CONSTRAINT {table}_{column}_fk")

    def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        add_column(schema_editor)

    def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {function}()")
        schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN IF EXISTS {column}")

    field: models.ForeignKey[Any, Any] = models.ForeignKey(
        "organizations.organization", on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )
    return OrganizationFromParent(
        add_column,
        state_operations=[migrations.AddField(model_name=model_name, name="organization", field=field)],
        database_operations=[migrations.RunPython(forwards, backwards, elidable=False)],
    )


class OrganizationFromParent(migrations.SeparateDatabaseAndState):
    """What organization_from_parent returns. Its column can also be added to a database the
    migration is not recorded in (a test that takes the schema back past it while code that writes
    the column runs): ``add_column``; the migration, run later, finds it there and changes nothing."""

    def __init__(self, add_column: Callable[[BaseDatabaseSchemaEditor], None], **operations: Any) -> None:
        super().__init__(**operations)
        self.add_column = add_column


def organization_columns(schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Add every organization column a migration of the project adds with organization_from_parent."""
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(schema_editor.connection, ignore_no_migrations=True)
    for key in sorted(loader.disk_migrations):
        for operation in loader.disk_migrations[key].operations:
            if isinstance(operation, OrganizationFromParent):
                operation.add_column(schema_editor)
