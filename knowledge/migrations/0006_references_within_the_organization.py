"""Links, mentions and triples to their memories, aliases and triples to their entities, a triple to the one that superseded it: references within the organization
(memory_platform.db.tenant_keys), added while the tables are written to."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.tenant_keys import tenant_foreign_keys


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, keys validated while the tables are written to

    dependencies = [
        ("knowledge", "0005_indexes_covered_by_composites"),
        ("memories", "0015_references_within_the_organization"),
    ]

    operations = [
        tenant_foreign_keys(
            "knowledge",
            migrations.AlterField(
                model_name="entityalias",
                name="entity",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="aliases",
                    to="knowledge.entity",
                ),
            ),
            migrations.AlterField(
                model_name="memorylink",
                name="source",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="outgoing_links",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="memorylink",
                name="target",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="incoming_links",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="mention",
                name="memory",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="mentions",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="triple",
                name="memory",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    help_text="The memory this fact was learned from, if any.",
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="triples",
                    to="memories.memory",
                ),
            ),
            migrations.AlterField(
                model_name="triple",
                name="object",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="object_triples",
                    to="knowledge.entity",
                ),
            ),
            migrations.AlterField(
                model_name="triple",
                name="subject",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="subject_triples",
                    to="knowledge.entity",
                ),
            ),
            migrations.AlterField(
                model_name="triple",
                name="superseded_by",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="+",
                    to="knowledge.triple",
                ),
            ),
            parents=["entity", "triple"],
        ),
    ]
