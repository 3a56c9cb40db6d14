"""Foreign-key indexes a composite index already leads with, dropped without a lock that holds up
writes (memory_platform.db.migration_ops.without_field_index)."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.migration_ops import without_field_index


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("organizations", "0002_indexes_covered_by_composites"),
        ("transfer", "0001_import_runs"),
    ]

    operations = [
        without_field_index(
            migrations.AlterField(
                model_name="importedid",
                name="run",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="ids",
                    to="transfer.importrun",
                ),
            ),
            "transfer",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="importrun",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="organizations.organization",
                ),
            ),
            "transfer",
        ),
    ]
