"""Foreign-key indexes a composite index already leads with, dropped without a lock that holds up
writes (memory_platform.db.migration_ops.without_field_index)."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.migration_ops import without_field_index


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("instructions", "0001_instruction_texts_from_mcp_api"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        without_field_index(
            migrations.AlterField(
                model_name="instructiontext",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="instruction_texts",
                    to="organizations.organization",
                ),
            ),
            "instructions",
        ),
    ]
