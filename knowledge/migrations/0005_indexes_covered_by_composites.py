"""Foreign-key indexes a composite index already leads with, dropped without a lock that holds up
writes (memory_platform.db.migration_ops.without_field_index)."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.migration_ops import without_field_index


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("knowledge", "0004_mentions"),
        ("memories", "0012_indexes_covered_by_composites"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        without_field_index(
            migrations.AlterField(
                model_name="entityalias",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="organizations.organization",
                ),
            ),
            "knowledge",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="memorylink",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="memory_links",
                    to="organizations.organization",
                ),
            ),
            "knowledge",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="mention",
                name="memory",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="mentions",
                    to="memories.memory",
                ),
            ),
            "knowledge",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="mention",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="organizations.organization",
                ),
            ),
            "knowledge",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="predicate",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="predicates",
                    to="organizations.organization",
                ),
            ),
            "knowledge",
        ),
        without_field_index(
            migrations.AlterField(
                model_name="triple",
                name="organization",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="triples",
                    to="organizations.organization",
                ),
            ),
            "knowledge",
        ),
    ]
