"""A proposal's memories (until now Django's own many-to-many table) become a model of their own,
on the same table, without the proposal's own index (the unique (proposal, memory) one leads with
it), and carry the proposal's organization, as every other row of a tenant does
(tests/platform/test_tenant_tables.py), added online (memory_platform.db.migration_ops.organization_from_parent)."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.migration_ops import organization_from_parent, without_field_index


class Migration(migrations.Migration):
    atomic = False  # each batch of the fill commits on its own

    dependencies = [
        ("lifecycle", "0002_indexes_covered_by_composites"),
        ("memories", "0013_versions_and_access_name_their_organization"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ProposalMemory",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        (
                            "consolidationproposal",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, to="lifecycle.consolidationproposal"
                            ),
                        ),
                        (
                            "memory",
                            models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="memories.memory"),
                        ),
                    ],
                    options={
                        "db_table": "lifecycle_consolidationproposal_memories",
                        "unique_together": {("consolidationproposal", "memory")},
                    },
                ),
                migrations.AlterField(
                    model_name="consolidationproposal",
                    name="memories",
                    field=models.ManyToManyField(
                        related_name="consolidation_proposals", through="lifecycle.ProposalMemory", to="memories.memory"
                    ),
                ),
            ],
            database_operations=[],  # the table is there
        ),
        without_field_index(  # the (proposal, memory) unique constraint leads with it
            migrations.AlterField(
                model_name="proposalmemory",
                name="consolidationproposal",
                field=models.ForeignKey(
                    db_index=False, on_delete=django.db.models.deletion.CASCADE, to="lifecycle.consolidationproposal"
                ),
            ),
            "lifecycle",
        ),
        organization_from_parent(
            "proposalmemory", table="lifecycle_consolidationproposal_memories", key="id",
            parent="consolidationproposal", parent_table="lifecycle_consolidationproposal",
        ),  # fmt: skip
    ]
