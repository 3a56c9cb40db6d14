"""A memory's versions, its access counts and the memory that superseded it: references within the organization
(memory_platform.db.tenant_keys), added while the tables are written to."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.tenant_keys import tenant_foreign_keys


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, keys validated while the tables are written to

    dependencies = [
        ("memories", "0014_version_order_by_memory_id"),
    ]

    operations = [
        tenant_foreign_keys(
            "memories",
            migrations.AlterField(
                model_name="memory",
                name="superseded_by",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="supersedes",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="memoryaccess",
                name="memory",
                field=models.OneToOneField(
                    db_constraint=False,
                    editable=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    primary_key=True,
                    related_name="access",
                    serialize=False,
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="memoryversion",
                name="memory",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="versions",
                    to="memories.memory",
                ),
            ),
            parents=["memory"],
        ),
    ]
