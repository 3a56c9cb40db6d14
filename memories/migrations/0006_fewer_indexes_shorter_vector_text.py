"""Drop six indexes every memory write paid for, and write vectors as shorter text.

The organization index is covered by the (organization, ...) indexes, the memory index of the
versions by their (memory, version) constraint; the created_by/updated_by (user and token) indexes
only served deleting a user or a token. Only the indexes go: Django's AlterField would also drop and
re-validate each foreign key, a full scan of the table per key.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import memories.fields

def _actor(to: str) -> models.ForeignKey:
    """created_by, created_by_token, updated_by, updated_by_token: as before, without an index."""
    return models.ForeignKey(
        blank=True,
        db_index=False,
        editable=False,
        null=True,
        on_delete=django.db.models.deletion.SET_NULL,
        related_name="+",
        to=to,
    )


DROPPED = {
    # index name: (table, column)
    "memories_memory_organization_id_f6e8e5ad": ("memories_memory", "organization_id"),
    "memories_memory_created_by_id_3c3a15e9": ("memories_memory", "created_by_id"),
    "memories_memory_created_by_token_id_46b1b3c6": ("memories_memory", "created_by_token_id"),
    "memories_memory_updated_by_id_b57308d1": ("memories_memory", "updated_by_id"),
    "memories_memory_updated_by_token_id_9d1a7769": ("memories_memory", "updated_by_token_id"),
    "memories_memoryversion_memory_id_b9ab0a6a": ("memories_memoryversion", "memory_id"),
}


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0005_embedding_stored_inline"),
        ("organizations", "0001_tenancy_and_tokens"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    sql=f'DROP INDEX IF EXISTS "{name}"',
                    reverse_sql=f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")',
                )
                for name, (table, column) in DROPPED.items()
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="memory",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memories",
                        to="organizations.organization",
                    ),
                ),
                *(
                    migrations.AlterField(model_name="memory", name=name, field=_actor(to))
                    for name, to in (
                        ("created_by", settings.AUTH_USER_MODEL),
                        ("created_by_token", "organizations.apitoken"),
                        ("updated_by", settings.AUTH_USER_MODEL),
                        ("updated_by_token", "organizations.apitoken"),
                    )
                ),
                migrations.AlterField(
                    model_name="memoryversion",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="versions",
                        to="memories.memory",
                    ),
                ),
            ],
        ),
        migrations.AlterField(
            model_name="memory",
            name="embedding",
            field=memories.fields.EmbeddingField(blank=True, dimensions=384, editable=False, null=True),
        ),
    ]
