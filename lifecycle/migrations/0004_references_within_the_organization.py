"""Proposals to their runs, memories and survivors, dismissed pairs to their memories and proposals: references within the organization
(memory_platform.db.tenant_keys), added while the tables are written to."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.tenant_keys import tenant_foreign_keys


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, keys validated while the tables are written to

    dependencies = [
        ("lifecycle", "0003_proposal_memories_name_their_organization"),
        ("memories", "0015_references_within_the_organization"),
    ]

    operations = [
        tenant_foreign_keys(
            "lifecycle",
            migrations.AlterField(
                model_name="consolidationproposal",
                name="run",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="proposals",
                    to="lifecycle.lifecyclerun",
                ),
            ),
            migrations.AlterField(
                model_name="consolidationproposal",
                name="survivor",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="+",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="dismissedpair",
                name="first",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="dismissedpair",
                name="proposal",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="+",
                    to="lifecycle.consolidationproposal",
                ),
            ),
            migrations.AlterField(
                model_name="dismissedpair",
                name="second",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="proposalmemory",
                name="consolidationproposal",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    to="lifecycle.consolidationproposal",
                ),
            ),
            migrations.AlterField(
                model_name="proposalmemory",
                name="memory",
                field=models.ForeignKey(
                    db_constraint=False, on_delete=django.db.models.deletion.CASCADE, to="memories.memory"
                ),
            ),
            parents=["lifecyclerun", "consolidationproposal"],
        ),
    ]
