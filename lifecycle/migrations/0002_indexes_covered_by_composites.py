"""Foreign-key indexes a composite index already leads with, dropped without a lock that holds up
writes (memory_platform.db.migration_ops.without_field_index)."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.migration_ops import without_field_index


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("lifecycle", "0001_consolidation_proposals_and_runs"),
        ("memories", "0012_indexes_covered_by_composites"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        without_field_index(
            migrations.AlterField(
                model_name="consolidationproposal",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="consolidation_proposals",
                    to="organizations.organization",
                ),
            ),
            "lifecycle",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="dismissedpair",
                name="first",
                field=models.ForeignKey(
                    db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="memories.memory"
                ),
            ),
            "lifecycle",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="lifecyclerun",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="lifecycle_runs",
                    to="organizations.organization",
                ),
            ),
            "lifecycle",
        ),
    ]
