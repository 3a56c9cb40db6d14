"""Foreign-key indexes a composite index already leads with, dropped without a lock that holds up
writes (memory_platform.db.migration_ops.without_field_index)."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.migration_ops import without_field_index


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("code_index", "0002_run_resumed"),
    ]

    operations = [
        without_field_index(
            migrations.AlterField(
                model_name="codeindexrun",
                name="index",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="runs",
                    to="code_index.codeindex",
                ),
            ),
            "code_index",
        ),
    ]
